// `npm run db:migrate`: creates the database named by DATABASE_URL if it is missing, then runs
// the admin's migrations (building the admin first when its build is missing).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import pg from 'pg';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const databaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/sluice';

function describe(url) {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.username ? `${parsed.username}@` : ''}${parsed.host}${parsed.pathname}`;
}

async function ensureDatabase(url) {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!name) throw new Error(`DATABASE_URL names no database: ${describe(url)}`);
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const client = new pg.Client({ connectionString: maintenance.toString() });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `cannot reach PostgreSQL at ${describe(maintenance.toString())}: ${error.message}`,
    );
  }
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      console.log(`[db:migrate] created database ${name}`);
    } else {
      console.log(`[db:migrate] database ${name} exists`);
    }
  } finally {
    await client.end();
  }
}

try {
  await ensureDatabase(databaseUrl);
  // The migrations are the admin's TypeORM migrations, run from its build.
  const migrator = join(root, 'apps/admin/dist/migrate.js');
  if (!existsSync(migrator)) {
    console.log('[db:migrate] building the admin to run its migrations');
    execFileSync('npx', ['nx', 'run', 'admin:build', '--outputStyle=stream-without-prefixes'], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, NX_DAEMON: 'false' },
    });
  }
  const { runMigrations } = await import(migrator);
  await runMigrations(databaseUrl);
} catch (error) {
  console.error(`[db:migrate] ${error.message}`);
  process.exit(1);
}
