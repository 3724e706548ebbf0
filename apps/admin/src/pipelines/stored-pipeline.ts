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
  };
}
