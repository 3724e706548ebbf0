// `npm run db:revert`: reverts the newest applied migration of the database named by DATABASE_URL.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const databaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/sluice';
const { revertLastMigration } = await import(join(root, 'apps/admin/dist/migrate.js'));
await revertLastMigration(databaseUrl);
console.log('[db:revert] reverted the newest migration');
