// `npm run db:migrate` calls this (built to dist/migrate.js) after creating the database.
import { createDataSource } from './database/data-source';
import { postgresConnection } from './database/postgres-tls';

/** DATABASE_URL (with its sslmode) and DATABASE_CA_FILE as a data source, or every problem. */
function dataSourceFor(databaseUrl: string, caFile: string | undefined) {
  const settings = postgresConnection(databaseUrl, caFile);
  if (!('connection' in settings)) throw new Error(settings.problems.join('; '));
  return createDataSource(settings.connection);
}

export async function runMigrations(
  databaseUrl: string,
  log: (line: string) => void = console.log,
  caFile: string | undefined = process.env['DATABASE_CA_FILE'] || undefined,
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
  caFile: string | undefined = process.env['DATABASE_CA_FILE'] || undefined,
): Promise<void> {
  const dataSource = dataSourceFor(databaseUrl, caFile);
  await dataSource.initialize();
  try {
    await dataSource.undoLastMigration({ transaction: 'each' });
  } finally {
    await dataSource.destroy();
  }
}
