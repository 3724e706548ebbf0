import type { StoredPipeline } from '@sluice/contracts';

import type { PipelineRow } from '../database/entities';

/** The record for the topic and the API: the definition plus version, generation and times. */
export function storedPipelineOf(row: PipelineRow): StoredPipeline {
  return {
    ...row.definition,
    id: row.id,
    version: row.version,
    reset_generation: row.reset_generation,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    // Only once replayed: a pipeline never replayed reads as it did before replays.
    ...(row.replay_generation > 0 && row.replay_from !== null
      ? { replay_generation: row.replay_generation, replay_from: row.replay_from }
      : {}),
  };
}
