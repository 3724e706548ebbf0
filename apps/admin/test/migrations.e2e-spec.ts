import pg from 'pg';

import { revertLastMigration, runMigrations } from '../src/migrate';
import { freshDatabase } from './support/admin-harness';

async function tables(url: string): Promise<string[]> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const { rows } = await db.query<{ tablename: string }>(
      `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
    );
    return rows.map((row) => row.tablename);
  } finally {
    await db.end();
  }
}

describe('migrations', () => {
  it('create the schema, revert it, and apply again', async () => {
    const database = await freshDatabase();
    try {
      expect(await tables(database.url)).toEqual([
        'outbox',
        'pipeline_versions',
        'pipelines',
        'sluice_migrations',
      ]);
      await revertLastMigration(database.url);
      expect(await tables(database.url)).toEqual(['sluice_migrations']);
      await runMigrations(database.url, () => undefined);
      expect(await tables(database.url)).toEqual([
        'outbox',
        'pipeline_versions',
        'pipelines',
        'sluice_migrations',
      ]);
    } finally {
      await database.drop();
    }
  });
});
