import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Replays (docs/design.md §9, positions): a pipeline's replay generation and where its latest
 * replay starts, and `replayed` as a change in its history.
 */
export class Replays1767312000000 implements MigrationInterface {
  name = 'Replays1767312000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE pipelines ADD COLUMN replay_generation integer NOT NULL DEFAULT 0, ADD COLUMN replay_from text`,
    );
    await queryRunner.query(
      `ALTER TABLE pipeline_versions DROP CONSTRAINT pipeline_versions_change_check, ADD CONSTRAINT pipeline_versions_change_check CHECK (change IN ('created', 'updated', 'deleted', 'replayed'))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `UPDATE pipeline_versions SET change = 'updated' WHERE change = 'replayed'`,
    );
    await queryRunner.query(
      `ALTER TABLE pipeline_versions DROP CONSTRAINT pipeline_versions_change_check, ADD CONSTRAINT pipeline_versions_change_check CHECK (change IN ('created', 'updated', 'deleted'))`,
    );
    await queryRunner.query(
      `ALTER TABLE pipelines DROP COLUMN replay_from, DROP COLUMN replay_generation`,
    );
  }
}
