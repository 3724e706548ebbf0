import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Definitions come back as they were written: `json` keeps the text (so the key order), where
 * `jsonb` reorders keys. Nothing queries inside them, so nothing needs jsonb's operators. And an
 * outbox record that Kafka refuses for good is marked refused instead of blocking the outbox.
 */
export class DefinitionsAsWritten1764921600000 implements MigrationInterface {
  name = 'DefinitionsAsWritten1764921600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE pipelines ALTER COLUMN definition TYPE json USING definition::json`,
    );
    await queryRunner.query(
      `ALTER TABLE pipeline_versions ALTER COLUMN definition TYPE json USING definition::json`,
    );
    await queryRunner.query(
      `ALTER TABLE outbox ALTER COLUMN payload TYPE json USING payload::json`,
    );
    await queryRunner.query(`ALTER TABLE outbox ADD COLUMN refused_at timestamptz`);
    await queryRunner.query(`DROP INDEX outbox_unsent`);
    await queryRunner.query(
      `CREATE INDEX outbox_unsent ON outbox (id) WHERE sent_at IS NULL AND refused_at IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX outbox_unsent`);
    await queryRunner.query(`CREATE INDEX outbox_unsent ON outbox (id) WHERE sent_at IS NULL`);
    await queryRunner.query(`ALTER TABLE outbox DROP COLUMN refused_at`);
    await queryRunner.query(
      `ALTER TABLE outbox ALTER COLUMN payload TYPE jsonb USING payload::jsonb`,
    );
    await queryRunner.query(
      `ALTER TABLE pipeline_versions ALTER COLUMN definition TYPE jsonb USING definition::jsonb`,
    );
    await queryRunner.query(
      `ALTER TABLE pipelines ALTER COLUMN definition TYPE jsonb USING definition::jsonb`,
    );
  }
}
