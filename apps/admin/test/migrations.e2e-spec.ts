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

async function columnTypes(url: string): Promise<string[]> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const { rows } = await db.query<{ name: string; type: string }>(
      `SELECT table_name || '.' || column_name AS name, data_type AS type FROM information_schema.columns
       WHERE (table_name, column_name) IN (('pipelines', 'definition'), ('pipeline_versions', 'definition'), ('outbox', 'payload'), ('outbox', 'refused_at'))
       ORDER BY 1`,
    );
    return rows.map((row) => `${row.name} ${row.type}`);
  } finally {
    await db.end();
  }
}

async function columnsOf(url: string, table: string): Promise<string[]> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const { rows } = await db.query<{ name: string }>(
      `SELECT column_name AS name FROM information_schema.columns WHERE table_name = $1`,
      [table],
    );
    return rows.map((row) => row.name);
  } finally {
    await db.end();
  }
}

const versionColumns = (url: string) => columnsOf(url, 'pipeline_versions');

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
      // Definitions as written (json), and refusals in the outbox.
      expect(await columnTypes(database.url)).toEqual([
        'outbox.payload json',
        'outbox.refused_at timestamp with time zone',
        'pipeline_versions.definition json',
        'pipelines.definition json',
      ]);
      expect(await columnsOf(database.url, 'pipelines')).toEqual(
        expect.arrayContaining(['replay_generation', 'replay_from']),
      );
      await revertLastMigration(database.url);
      expect(await columnsOf(database.url, 'pipelines')).not.toContain('replay_generation');
      expect(await versionColumns(database.url)).toContain('note');
      await revertLastMigration(database.url);
      expect(await versionColumns(database.url)).not.toContain('note');
      await revertLastMigration(database.url);
      expect(await columnTypes(database.url)).toEqual([
        'outbox.payload jsonb',
        'pipeline_versions.definition jsonb',
        'pipelines.definition jsonb',
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
