// Publishes this replica's per-pipeline counters to `sluice.stats` (compacted; key
// `<processor>/<pipeline>`), which the admin sums across replicas (DESIGN §6 stats).
import type { Producer } from 'kafkajs';

import { processorStatsKey } from '@sluice/contracts';
import type { ProcessorStats } from '@sluice/contracts';

import type { ActivePipeline } from '../pipelines/active-pipeline';

export function statsRecord(
  processorId: string,
  pipeline: ActivePipeline,
  lag: number,
  now: Date,
): ProcessorStats {
  const counters = pipeline.counters;
  return {
    processor_id: processorId,
    pipeline_id: pipeline.id,
    reset_generation: pipeline.stored.reset_generation,
    events_processed: counters.processed,
    events_filtered: counters.filtered,
    events_skipped: counters.skipped,
    events_failed: counters.failed,
    late_events: counters.late,
    results_emitted: counters.emitted,
    dead_lettered: counters.failed,
    lag,
    last_processed:
      counters.last_event_time === null ? null : new Date(counters.last_event_time).toISOString(),
    reported_at: now.toISOString(),
  };
}

export async function publishStats(
  producer: Producer,
  topic: string,
  processorId: string,
  pipelines: ActivePipeline[],
  lag: number,
): Promise<void> {
  if (pipelines.length === 0) return;
  const now = new Date();
  await producer.send({
    topic,
    messages: pipelines.map((pipeline) => ({
      key: processorStatsKey(processorId, pipeline.id),
      value: JSON.stringify(statsRecord(processorId, pipeline, lag, now)),
    })),
  });
}
