// Two identities of a stored pipeline that processors derive alike, with no coordination:
// its state epoch (what its state means) and its run (where it reads from).
import { createHash } from 'node:crypto';

import { stateMeaning } from './any-definition';
import { canonicalJson } from './same-definition';
import type { StoredPipeline } from './stored-pipeline';

const digest = (text: string, length: number) =>
  createHash('sha256').update(text).digest('base64url').slice(0, length);

/**
 * The state epoch (docs/design.md §9): state and repartitioned records of another epoch are not
 * the pipeline's any more. It changes with a reset, an update that changes what the state
 * means, a delete and re-create, and a replay; every result carries it.
 */
export function stateEpoch(stored: StoredPipeline): string {
  // Canonical (sorted keys): definitions keep the key order they were written in, and a
  // reordered but equal definition must not throw the state away.
  const replay = stored.replay_generation ?? 0;
  const meaning = canonicalJson([
    ...stateMeaning(stored),
    stored.created_at,
    ...(replay > 0 ? [replay] : []),
  ]);
  return `${stored.reset_generation}.${digest(meaning, 12)}`;
}

/**
 * The run: a source partition that has not seen it yet starts it where the definition says
 * (its sources' `start`, or the replay's `from`); one that has goes on from its position. A
 * replay and a re-create are new runs; an update or a reset is not.
 */
export function pipelineRun(stored: StoredPipeline): string {
  return digest(`${stored.id}\n${stored.created_at}\n${stored.replay_generation ?? 0}`, 8);
}
