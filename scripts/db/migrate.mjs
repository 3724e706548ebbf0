// `npm run db:migrate`: creates the database named by DATABASE_URL if it is missing, then runs
// the admin's migrations (building the admin first when its build is missing).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const databaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/sluice';

try {
  // Both steps are the admin's, run from its build: the same TLS settings (sslmode,
  // DATABASE_CA_FILE) as the admin's own connection.
  const migrator = join(root, 'apps/admin/dist/migrate.js');
  if (!existsSync(migrator)) {
    console.log('[db:migrate] building the admin to run its migrations');
    execFileSync('npx', ['nx', 'run', 'admin:build', '--outputStyle=stream-without-prefixes'], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, NX_DAEMON: 'false' },
    });
  }
  const { createDatabaseIfMissing, runMigrations } = await import(migrator);
  await createDatabaseIfMissing(databaseUrl);
  await runMigrations(databaseUrl);
} catch (error) {
  console.error(`[db:migrate] ${error.message}`);
  process.exit(1);
}
