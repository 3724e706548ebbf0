// `npm run db:migrate` calls these (built to dist/migrate.js): the database made when missing,
// then the migrations, both over the TLS that DATABASE_URL's sslmode and DATABASE_CA_FILE ask.
import pg from 'pg';

import { createDataSource } from './database/data-source';
import { postgresConnection } from './database/postgres-tls';
import type { PostgresConnection } from './database/postgres-tls';

const envCaFile = () => process.env['DATABASE_CA_FILE'] || undefined;

function connectionFor(databaseUrl: string, caFile: string | undefined): PostgresConnection {
  const settings = postgresConnection(databaseUrl, caFile);
  if (!('connection' in settings)) throw new Error(settings.problems.join('; '));
  return settings.connection;
}

/** `user@host:port/database` of a URL: never its password. */
function described(url: string): string {
  const parsed = new URL(url);
  return `${parsed.username ? `${parsed.username}@` : ''}${parsed.host}${parsed.pathname}`;
}

/** DATABASE_URL (with its sslmode) and DATABASE_CA_FILE as a data source, or every problem. */
function dataSourceFor(databaseUrl: string, caFile: string | undefined) {
  return createDataSource(connectionFor(databaseUrl, caFile));
}

/**
 * Creates DATABASE_URL's database unless it exists, connected to the server's `postgres`
 * database with the same TLS settings (the development `npm run db:migrate`; a platform makes
 * its database itself).
 */
export async function createDatabaseIfMissing(
  databaseUrl: string,
  log: (line: string) => void = console.log,
  caFile: string | undefined = envCaFile(),
): Promise<void> {
  const { url, ssl } = connectionFor(databaseUrl, caFile);
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!name) throw new Error(`DATABASE_URL names no database: ${described(url)}`);
  target.pathname = '/postgres';
  const client = new pg.Client({ connectionString: target.toString(), ssl });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `cannot reach PostgreSQL at ${described(target.toString())}: ${(error as Error).message}`,
    );
  }
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      log(`[db:migrate] created database ${name}`);
    } else {
      log(`[db:migrate] database ${name} exists`);
    }
  } finally {
    await client.end();
  }
}

export async function runMigrations(
  databaseUrl: string,
  log: (line: string) => void = console.log,
  caFile: string | undefined = envCaFile(),
): Promise<void> {
  const dataSource = dataSourceFor(databaseUrl, caFile);
  await dataSource.initialize();
  try {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    log(
      applied.length === 0
        ? '[db:migrate] schema is up to date'
        : `[db:migrate] applied ${applied.map((m) => m.name).join(', ')}`,
    );
  } finally {
    await dataSource.destroy();
  }
}

export async function revertLastMigration(
  databaseUrl: string,
  caFile: string | undefined = envCaFile(),
): Promise<void> {
  const dataSource = dataSourceFor(databaseUrl, caFile);
  await dataSource.initialize();
  try {
    await dataSource.undoLastMigration({ transaction: 'each' });
  } finally {
    await dataSource.destroy();
  }
}
