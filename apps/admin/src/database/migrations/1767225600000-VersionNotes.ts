import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A change's actor is the name of the token that made it; what a client says of itself
 * (X-Sluice-Actor, unchecked) is kept beside it as a free-text note.
 */
export class VersionNotes1767225600000 implements MigrationInterface {
  name = 'VersionNotes1767225600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE pipeline_versions ADD COLUMN note text`);
    await queryRunner.query(
      `CREATE INDEX pipeline_versions_by_time ON pipeline_versions (changed_at DESC)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX pipeline_versions_by_time`);
    await queryRunner.query(`ALTER TABLE pipeline_versions DROP COLUMN note`);
  }
}
