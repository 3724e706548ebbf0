// Publishes this replica's per-pipeline counters to `sluice.stats` (compacted; key
// `<processor>/<pipeline>`), which the admin sums across replicas (docs/design.md §6 stats).
import type { Producer } from 'kafkajs';

import { processorStatsKey } from '@sluice/contracts';
import type { ProcessorStats } from '@sluice/contracts';

import { emptyCounters } from '@sluice/operators';
import type { PipelineCounters } from '@sluice/operators';

import type { ActivePipeline } from '../pipelines/active-pipeline';
import type { ParkedPipeline } from '../pipelines/definition-applier';

interface Reported {
  id: string;
  /** The consumer lag of its source partitions on this replica (0 for a parked one). */
  lag: number;
  resetGeneration: number;
  counters: PipelineCounters;
  failure: ParkedPipeline | undefined;
}

export function statsRecord(processorId: string, pipeline: Reported, now: Date): ProcessorStats {
  const counters = pipeline.counters;
  return {
    processor_id: processorId,
    pipeline_id: pipeline.id,
    reset_generation: pipeline.resetGeneration,
    state: pipeline.failure ? 'failed' : 'running',
    error: pipeline.failure?.error ?? null,
    events_processed: counters.processed,
    events_filtered: counters.filtered,
    events_skipped: counters.skipped,
    events_failed: counters.failed,
    late_events: counters.late,
    results_emitted: counters.emitted,
    dead_lettered: counters.failed,
    lag: pipeline.lag,
    last_processed:
      counters.last_event_time === null ? null : new Date(counters.last_event_time).toISOString(),
    reported_at: now.toISOString(),
  };
}

/**
 * Every pipeline this replica runs, and every one it could not apply (`failed`, with the reason;
 * a parked update of a running pipeline reports under the definition that failed, so the admin
 * shows it beside the stored version).
 */
export function reportedPipelines(
  pipelines: readonly ActivePipeline[],
  parked: readonly ParkedPipeline[],
  lagOf: (pipeline: ActivePipeline) => number,
): Reported[] {
  const failures = new Map(parked.map((p) => [p.id, p]));
  const reported: Reported[] = pipelines.map((pipeline) => ({
    id: pipeline.id,
    lag: lagOf(pipeline),
    resetGeneration:
      failures.get(pipeline.id)?.reset_generation ?? pipeline.stored.reset_generation,
    counters: pipeline.counters,
    failure: failures.get(pipeline.id),
  }));
  const running = new Set(pipelines.map((p) => p.id));
  for (const failure of parked) {
    if (running.has(failure.id)) continue;
    reported.push({
      id: failure.id,
      lag: 0,
      resetGeneration: failure.reset_generation,
      counters: emptyCounters(),
      failure,
    });
  }
  return reported;
}

export async function publishStats(
  producer: Producer,
  topic: string,
  processorId: string,
  pipelines: readonly ActivePipeline[],
  parked: readonly ParkedPipeline[],
  lagOf: (pipeline: ActivePipeline) => number,
): Promise<void> {
  const reported = reportedPipelines(pipelines, parked, lagOf);
  if (reported.length === 0) return;
  const now = new Date();
  await producer.send({
    topic,
    messages: reported.map((pipeline) => ({
      key: processorStatsKey(processorId, pipeline.id),
      value: JSON.stringify(statsRecord(processorId, pipeline, now)),
    })),
  });
}
