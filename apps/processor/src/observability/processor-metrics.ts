// Prometheus metrics (docs/design.md §7 METRICS_PORT): per-pipeline counters are read from the pipelines'
// own counters at scrape time, so the hot path never touches a metric object per event.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

import type { PipelineCounters } from '@sluice/operators';

export interface MetricsSources {
  pipelines(): Array<{ id: string; counters: PipelineCounters }>;
  lagByTopic(): Map<string, number>;
  assignedPartitions(): number;
}

const PIPELINE_COUNTERS: Array<[keyof PipelineCounters, string, string]> = [
  ['processed', 'sluice_pipeline_events_in_total', 'Events that entered the pipeline'],
  ['filtered', 'sluice_pipeline_events_filtered_total', 'Events a filter dropped'],
  [
    'skipped',
    'sluice_pipeline_events_skipped_total',
    'Events an on_missing/on_invalid skip dropped',
  ],
  ['failed', 'sluice_pipeline_events_failed_total', 'Events an error policy dead-lettered'],
  ['late', 'sluice_pipeline_events_late_total', 'Events later than the allowed lateness'],
  ['emitted', 'sluice_pipeline_results_out_total', 'Result records published'],
];

export class ProcessorMetrics {
  readonly registry = new Registry();
  readonly recordsConsumed: Counter<'kind'>;
  readonly deadLetters: Counter;
  readonly commitSeconds: Histogram;
  readonly restoreSeconds: Histogram<'pipeline'>;
  readonly restoredRecords: Counter<'pipeline'>;

  constructor(sources: MetricsSources) {
    collectDefaultMetrics({ register: this.registry, prefix: 'sluice_processor_' });
    const registers = [this.registry];
    this.recordsConsumed = new Counter({
      name: 'sluice_processor_records_consumed_total',
      help: 'Records read, by kind of topic (source or repartition)',
      labelNames: ['kind'],
      registers,
    });
    this.deadLetters = new Counter({
      name: 'sluice_processor_malformed_records_total',
      help: 'Source records that were not valid events, sent to the dead-letter topic',
      registers,
    });
    this.commitSeconds = new Histogram({
      name: 'sluice_processor_transaction_commit_seconds',
      help: 'Latency of committing one task transaction (offsets + commit)',
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.restoreSeconds = new Histogram({
      name: 'sluice_processor_state_restore_seconds',
      help: 'Time to restore one partition of a pipeline from its changelog',
      labelNames: ['pipeline'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers,
    });
    this.restoredRecords = new Counter({
      name: 'sluice_processor_state_restored_records_total',
      help: 'Changelog records read while restoring state',
      labelNames: ['pipeline'],
      registers,
    });
    for (const [field, name, help] of PIPELINE_COUNTERS) {
      new Gauge({
        name,
        help: `${help} (this replica; a reset starts it again)`,
        labelNames: ['pipeline'],
        registers,
        collect() {
          this.reset();
          for (const pipeline of sources.pipelines())
            this.set({ pipeline: pipeline.id }, Number(pipeline.counters[field] ?? 0));
        },
      });
    }
    new Gauge({
      name: 'sluice_processor_consumer_lag',
      help: 'Records behind the end of the assigned partitions, by topic',
      labelNames: ['topic'],
      registers,
      collect() {
        this.reset();
        for (const [topic, lag] of sources.lagByTopic()) this.set({ topic }, lag);
      },
    });
    new Gauge({
      name: 'sluice_processor_assigned_partitions',
      help: 'Input partitions this replica owns',
      registers,
      collect() {
        this.set(sources.assignedPartitions());
      },
    });
  }
}
