// Every partition a task may have written, for the hanging sweep (committed-offset.ts): the
// topics it names that exist, and every pipeline's internal topics under the prefix (a deleted
// or parked pipeline's too). A topic whose metadata cannot be read is left out: the sweep
// covers what it can.
import type { Admin } from 'kafkajs';
import type { Logger } from 'pino';

import { retryBroker } from '@sluice/kafka';

import type { WrittenPartitions } from './committed-offset';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export async function writtenPartitionsOf(
  admin: Admin,
  topicPrefix: string,
  topics: readonly string[],
  logger: Logger,
): Promise<WrittenPartitions> {
  const existing = await retryBroker(() => admin.listTopics());
  const internalTopic = new RegExp(
    `^${escapeRegExp(topicPrefix)}\\.[0-9a-f-]{36}\\.(repartition|changelog)$`,
  );
  const internal = existing.filter((topic) => internalTopic.test(topic));
  const wanted = [...new Set([...topics.filter((t) => existing.includes(t)), ...internal])];
  const found: WrittenPartitions = [];
  for (const topic of wanted) {
    try {
      const { topics: metadata } = await admin.fetchTopicMetadata({ topics: [topic] });
      for (const { name, partitions } of metadata)
        found.push({ topic: name, partitions: partitions.map((p) => p.partitionId) });
    } catch (error) {
      logger.warn({ err: error, topic }, 'a topic to sweep has no metadata; left out');
    }
  }
  return found;
}
