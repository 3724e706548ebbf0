// What applying a definition asks of the broker: the partition counts of the topics a pipeline
// reads, where its run starts in each source partition, and the topics it writes.
import type { Admin } from 'kafkajs';

import type { StoredPipeline } from '@sluice/contracts';
import { ensureTopics, retryRetriable, startOffsets } from '@sluice/kafka';
import type { TopicSpec } from '@sluice/kafka';
import type { PipelinePlan } from '@sluice/operators';

import type { ActivePipeline } from './active-pipeline';
import { startPoint } from './start-point';

/**
 * The partition count of every topic the pipeline reads. A source topic is the user's to make
 * (a typo must not create one): until it exists the pipeline is parked, saying which.
 */
export async function sourcePartitionsOf(
  admin: Admin,
  plan: PipelinePlan,
): Promise<Map<string, number>> {
  const topics = [...new Set(plan.sources.flatMap((source) => source.topics))];
  const existing = new Set(await retryRetriable(() => admin.listTopics()));
  const missing = topics.filter((topic) => !existing.has(topic));
  if (missing.length > 0)
    throw new Error(
      `no source topic ${missing.join(', ')} yet: the pipeline starts once it exists`,
    );
  const metadata = await retryRetriable(() => admin.fetchTopicMetadata({ topics }));
  return new Map(metadata.topics.map(({ name, partitions }) => [name, partitions.length]));
}

/**
 * Where the pipeline's run starts in each source partition, for the partitions that have not
 * seen it yet: a replay's `from`, else each source's `start` (`latest`, a linear definition's
 * only start, means from the pipeline's creation on).
 */
export async function startsOf(
  admin: Admin,
  stored: StoredPipeline,
  plan: PipelinePlan,
): Promise<Map<string, number>> {
  const starts = new Map<string, number>();
  for (const source of plan.sources) {
    const from = startPoint(stored, source.id);
    for (const topic of source.topics) {
      const offsets = await startOffsets(admin, topic, from);
      for (const [partition, offset] of offsets) {
        const key = `${topic}/${partition}`;
        // Two sources of one topic: the earlier start serves both.
        starts.set(key, Math.min(offset, starts.get(key) ?? Infinity));
      }
    }
  }
  return starts;
}

/** The topics the pipeline writes: its sinks', and a stateful one's repartition and changelog. */
export async function ensurePipelineTopics(
  admin: Admin,
  pipeline: ActivePipeline,
  partitions: number,
): Promise<void> {
  const { topics } = pipeline;
  const specs: TopicSpec[] = topics.outputs.map((topic) => ({
    topic,
    numPartitions: partitions,
  }));
  if (topics.repartition && topics.changelog) {
    specs.push(
      { topic: topics.repartition, numPartitions: partitions },
      { topic: topics.changelog, numPartitions: partitions, compacted: true },
    );
  }
  await ensureTopics(admin, specs);
}
