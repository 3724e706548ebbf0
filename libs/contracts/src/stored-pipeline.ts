import type { AnyPipelineDefinition } from './any-definition';
import { isGraphInput } from './graph-definition';

/** What the admin adds to a definition it stores. */
export interface StoredFields {
  version: number;
  /** Bumped by a reset: processors clear the pipeline's state and counters when it changes. */
  reset_generation: number;
  created_at: string;
  updated_at: string;
  /**
   * Bumped by a replay (absent before the first): the pipeline reprocesses its sources from
   * `replay_from` in a new state epoch (docs/design.md §9, positions).
   */
  replay_generation?: number;
  /** `earliest` or an ISO-8601 time: where the latest replay starts. */
  replay_from?: string;
}

/**
 * A definition, in either form, as the admin stores it and broadcasts it on `sluice.pipelines`
 * (docs/design.md §5).
 */
export type StoredPipeline = AnyPipelineDefinition & StoredFields;

/** What the admin adds to a definition; a body read with GET carries them, read-only. */
export const STORED_FIELDS = [
  'version',
  'reset_generation',
  'created_at',
  'updated_at',
  'replay_generation',
  'replay_from',
] as const;
export type StoredField = (typeof STORED_FIELDS)[number];

/**
 * A document as a definition and the stored (read-only) fields it carries, so that what GET
 * answered can be sent back unchanged: the definition is validated, the stored fields compared.
 */
export function splitStoredFields(document: unknown): {
  definition: unknown;
  stored: Partial<Record<StoredField, unknown>>;
} {
  if (document === null || typeof document !== 'object' || Array.isArray(document))
    return { definition: document, stored: {} };
  const definition: Record<string, unknown> = { ...(document as Record<string, unknown>) };
  const stored: Partial<Record<StoredField, unknown>> = {};
  // headrace's graph format has a `version` of its own (the format's, 1): in a graph that
  // carries none of the other fields a GET answers, `version` is that one.
  const formatVersion =
    isGraphInput(definition) && !STORED_FIELDS.some((f) => f !== 'version' && f in definition);
  for (const field of STORED_FIELDS) {
    if (field === 'version' && formatVersion) continue;
    if (field in definition) {
      stored[field] = definition[field];
      delete definition[field];
    }
  }
  return { definition, stored };
}

/** The counters one processor replica reports for one pipeline on `sluice.stats`. */
export interface ProcessorStats {
  processor_id: string;
  pipeline_id: string;
  reset_generation: number;
  events_processed: number;
  events_filtered: number;
  events_skipped: number;
  events_failed: number;
  late_events: number;
  results_emitted: number;
  dead_lettered: number;
  /** Consumer lag of the partitions this replica owns for the pipeline's sources. */
  lag: number;
  /** Event time of the last processed event, ISO-8601, or null. */
  last_processed: string | null;
  reported_at: string;
  /**
   * `failed`: this replica could not apply the pipeline's latest definition (its topics could
   * not be made, a lookup table could not be read…): it is parked, retried with back-off, and
   * `error` says why. Absent in reports of replicas from before this field.
   */
  state?: PipelineState;
  error?: string | null;
}

export type PipelineState = 'running' | 'failed';

export function processorStatsKey(processorId: string, pipelineId: string): string {
  return `${processorId}/${pipelineId}`;
}

/** One replica's report as the admin shows it: stale once silent for too long. */
export interface ProcessorStatsView extends ProcessorStats {
  stale: boolean;
}

/**
 * GET /api/v1/pipelines/{id}/stats (docs/design.md §6): AllSource's stats fields plus Sluice's, summed
 * over live processor replicas.
 */
export interface PipelineStatsView {
  pipeline_id: string;
  events_processed: number;
  events_filtered: number;
  events_failed: number;
  last_processed: string | null;
  results_emitted: number;
  late_events: number;
  dead_lettered: number;
  lag: number;
  /** `failed` if a live replica reports it failed, `running` if they all run it, else `unknown`. */
  state: PipelineState | 'unknown';
  /** Why it failed, from the first live replica that reports it failed (`<processor>: …`). */
  error: string | null;
  processors: ProcessorStatsView[];
}
