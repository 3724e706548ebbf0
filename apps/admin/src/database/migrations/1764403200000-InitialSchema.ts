import type { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1764403200000 implements MigrationInterface {
  name = 'InitialSchema1764403200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE pipelines (
        id uuid PRIMARY KEY,
        name text NOT NULL,
        definition jsonb NOT NULL,
        version integer NOT NULL CHECK (version > 0),
        reset_generation integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        deleted_at timestamptz
      )`);
    await queryRunner.query(
      `CREATE INDEX pipelines_live_name ON pipelines (name) WHERE deleted_at IS NULL`,
    );
    await queryRunner.query(`
      CREATE TABLE pipeline_versions (
        pipeline_id uuid NOT NULL REFERENCES pipelines (id),
        version integer NOT NULL,
        definition jsonb NOT NULL,
        change text NOT NULL CHECK (change IN ('created', 'updated', 'deleted')),
        changed_by text NOT NULL,
        changed_at timestamptz NOT NULL,
        PRIMARY KEY (pipeline_id, version)
      )`);
    await queryRunner.query(`
      CREATE TABLE outbox (
        id bigserial PRIMARY KEY,
        pipeline_id uuid NOT NULL,
        payload jsonb,
        created_at timestamptz NOT NULL,
        sent_at timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        last_error text
      )`);
    await queryRunner.query(`CREATE INDEX outbox_unsent ON outbox (id) WHERE sent_at IS NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE outbox`);
    await queryRunner.query(`DROP TABLE pipeline_versions`);
    await queryRunner.query(`DROP TABLE pipelines`);
  }
}
