import { sameDefinition } from '@sluice/contracts';
import type { StoredPipeline } from '@sluice/contracts';

import type { AdminClient } from '../admin-client';
import { CliError } from '../errors';
import type { Printer } from '../output/printer';
import { listPipelines } from '../pipelines';
import type { ValidDocument } from './validate';

export type ApplyAction =
  | { kind: 'create'; document: ValidDocument }
  | { kind: 'update'; document: ValidDocument; current: StoredPipeline }
  | { kind: 'unchanged'; document: ValidDocument; current: StoredPipeline };

/**
 * What `apply` will do, decided before anything changes: a document with an id targets that
 * pipeline; one without targets the pipeline of the same name (as kubectl matches by name).
 */
export function planApply(
  documents: readonly ValidDocument[],
  existing: readonly StoredPipeline[],
): ApplyAction[] {
  const seen = new Set<string>();
  return documents.map((document) => {
    const identity = document.givenId ?? `name:${document.definition.name}`;
    if (seen.has(identity)) {
      throw new CliError(`${document.origin}: pipeline/${document.definition.name} is given twice`);
    }
    seen.add(identity);
    const candidates = document.givenId
      ? existing.filter((p) => p.id === document.givenId)
      : existing.filter((p) => p.name === document.definition.name);
    if (candidates.length > 1) {
      throw new CliError(
        `${document.origin}: ${candidates.length} pipelines are named "${document.definition.name}"; give the id`,
        candidates.map((p) => p.id),
      );
    }
    const current = candidates[0];
    if (!current) return { kind: 'create', document };
    const readAt = document.stored['version'];
    if (readAt !== undefined && readAt !== current.version) {
      throw new CliError(
        `${document.origin}: pipeline/${document.definition.name} was read at version ${String(readAt)}, and is at version ${current.version} now; get it again (or remove version) and apply`,
      );
    }
    return sameDefinition(current, { ...document.definition, id: current.id })
      ? { kind: 'unchanged', document, current }
      : { kind: 'update', document, current };
  });
}

/**
 * The admin's own answer for every document that would change something, before anything does:
 * its rules may be wider than the offline ones (its topic prefix, its processors' sources).
 */
async function validateWithAdmin(admin: AdminClient, actions: readonly ApplyAction[]) {
  const problems: string[] = [];
  for (const action of actions) {
    if (action.kind === 'unchanged') continue;
    const { body } = await admin.request<{
      valid: boolean;
      errors: Array<{ path: string; message: string }>;
    }>('POST', '/pipelines/validate', { body: action.document.document });
    for (const error of body.valid ? [] : body.errors)
      problems.push(`${action.document.origin}: ${error.path}: ${error.message}`);
  }
  if (problems.length > 0)
    throw new CliError(
      `the admin refuses ${problems.length} problem${problems.length === 1 ? '' : 's'}; nothing was changed`,
      problems,
    );
}

export async function runApply(
  admin: AdminClient,
  documents: readonly ValidDocument[],
  options: { dryRun: boolean; replayFrom?: string | undefined },
  out: Printer,
): Promise<void> {
  const actions = planApply(documents, await listPipelines(admin));
  await validateWithAdmin(admin, actions);
  const suffix = options.dryRun ? ' (dry run)' : '';
  for (const action of actions) {
    const name = `pipeline/${action.document.definition.name}`;
    if (action.kind === 'unchanged') {
      out.line(`${name} unchanged${suffix}`);
      continue;
    }
    if (options.dryRun) {
      out.line(`${name} ${action.kind === 'create' ? 'created' : 'configured'}${suffix}`);
      continue;
    }
    if (action.kind === 'create') {
      const { body } = await admin.request<{ pipeline_id: string; version: number }>(
        'POST',
        '/pipelines',
        { body: action.document.document },
      );
      out.line(`${name} created (id ${body.pipeline_id}, version ${body.version})`);
    } else {
      const { id, version } = action.current;
      // A file from `sluice get` carries the version it was read at: an edit of a stale copy
      // is then refused (412) rather than overwriting what changed since.
      const { stored } = action.document;
      const replay =
        options.replayFrom === undefined
          ? ''
          : `?replay_from=${encodeURIComponent(options.replayFrom)}`;
      const { body } = await admin.request<{ version: number; state: 'kept' | 'reset' }>(
        'PUT',
        `/pipelines/${id}${replay}`,
        {
          body: { ...(action.document.document as object), ...stored, id },
          headers: { 'if-match': String(stored['version'] ?? version) },
        },
      );
      // Whether the processors keep what the pipeline holds, or start it afresh.
      out.line(`${name} configured (version ${version} → ${body.version}, state ${body.state})`);
    }
  }
}
