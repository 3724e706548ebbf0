// The migration step of a deployment (the compose `migrate` service, the Kubernetes Job): runs
// the migrations against DATABASE_URL, whose database the platform has already created.
import { runMigrations } from './migrate';

const url = process.env['DATABASE_URL'];
if (!url) {
  console.error('[migrate] DATABASE_URL is required');
  process.exit(1);
}
runMigrations(url).then(
  () => process.exit(0),
  (error: Error) => {
    console.error(`[migrate] ${error.message}`);
    process.exit(1);
  },
);
