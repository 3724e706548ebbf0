/** Per-pipeline counters (docs/design.md §6 stats). Plain numbers, summed across replicas by the admin. */
export interface PipelineCounters {
  /** Events that matched `source_event_types` and entered the pipeline. */
  processed: number;
  /** Dropped by a filter. */
  filtered: number;
  /** Left the pipeline under an `on_missing`/`on_invalid: skip` policy. */
  skipped: number;
  /** Sent to the dead-letter topic under an `error` policy. */
  failed: number;
  /** Arrived after all their windows had fired; published to `<output>.late`. */
  late: number;
  /** Result records published. */
  emitted: number;
  /** Event time of the last processed event, epoch ms (null before any). */
  last_event_time: number | null;
}

export function emptyCounters(): PipelineCounters {
  return {
    processed: 0,
    filtered: 0,
    skipped: 0,
    failed: 0,
    late: 0,
    emitted: 0,
    last_event_time: null,
  };
}

export function resetCounters(counters: PipelineCounters): void {
  Object.assign(counters, emptyCounters());
}
