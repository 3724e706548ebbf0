// `npm run db:migrate` calls this (built to dist/migrate.js) after creating the database.
import { createDataSource } from './database/data-source';

export async function runMigrations(
  databaseUrl: string,
  log: (line: string) => void = console.log,
): Promise<void> {
  const dataSource = createDataSource(databaseUrl);
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

export async function revertLastMigration(databaseUrl: string): Promise<void> {
  const dataSource = createDataSource(databaseUrl);
  await dataSource.initialize();
  try {
    await dataSource.undoLastMigration({ transaction: 'each' });
  } finally {
    await dataSource.destroy();
  }
}
