import type { PipelineDefinition } from './definition';

/** A definition as the admin stores it and broadcasts it on `sluice.pipelines` (DESIGN §5). */
export interface StoredPipeline extends PipelineDefinition {
  version: number;
  /** Bumped by a reset: processors clear the pipeline's state and counters when it changes. */
  reset_generation: number;
  created_at: string;
  updated_at: string;
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
}

export function processorStatsKey(processorId: string, pipelineId: string): string {
  return `${processorId}/${pipelineId}`;
}

/** One replica's report as the admin shows it: stale once silent for too long. */
export interface ProcessorStatsView extends ProcessorStats {
  stale: boolean;
}

/**
 * GET /api/v1/pipelines/{id}/stats (DESIGN §6): AllSource's stats fields plus Sluice's, summed
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
  processors: ProcessorStatsView[];
}
