import type { StoredPipeline } from '@sluice/contracts';

import type { AdminClient } from './admin-client';
import { CliError } from './errors';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function listPipelines(admin: AdminClient): Promise<StoredPipeline[]> {
  const { body } = await admin.request<{ pipelines: StoredPipeline[] }>('GET', '/pipelines');
  return body.pipelines;
}

/** A pipeline named on the command line by its id or, more kindly, by its name. */
export async function findPipeline(admin: AdminClient, reference: string): Promise<StoredPipeline> {
  if (UUID.test(reference)) {
    const { status, body } = await admin.request<StoredPipeline>('GET', `/pipelines/${reference}`, {
      expect: [404],
    });
    if (status === 404) throw new CliError(`no pipeline has the id ${reference}`);
    return body;
  }
  const matches = (await listPipelines(admin)).filter((p) => p.name === reference);
  if (matches.length === 0) throw new CliError(`no pipeline is named "${reference}"`);
  if (matches.length > 1) {
    throw new CliError(
      `${matches.length} pipelines are named "${reference}"; name one by its id`,
      matches.map((p) => p.id),
    );
  }
  return matches[0]!;
}
