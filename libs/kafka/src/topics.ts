import type { Admin, ITopicConfig } from 'kafkajs';

import { namingDenied, onTopics } from './access/authorization-denials';
import { retryRetriable } from './retry';

export interface TopicSpec {
  topic: string;
  numPartitions: number;
  /** Compacted topics keep the latest record per key: definitions, changelogs, lookups. */
  compacted?: boolean;
  configEntries?: Record<string, string>;
}

/**
 * Creates the topics that do not exist yet and leaves existing ones alone (their partition
 * count is never changed: that would move keys between partitions). Returns the created names.
 */
export async function ensureTopics(admin: Admin, specs: TopicSpec[]): Promise<string[]> {
  try {
    return await createMissing(admin, specs);
  } catch (error) {
    // A topic the principal may not Describe is missing from listTopics, so it is created.
    throw namingDenied(error, {
      topic: onTopics(
        'Describe (and Create, if it may be missing)',
        specs.map((s) => s.topic),
      ),
    });
  }
}

async function createMissing(admin: Admin, specs: TopicSpec[]): Promise<string[]> {
  const existing = new Set(await admin.listTopics());
  const missing = specs.filter((spec) => !existing.has(spec.topic));
  if (missing.length === 0) return [];
  const topics: ITopicConfig[] = missing.map((spec) => ({
    topic: spec.topic,
    numPartitions: spec.numPartitions,
    replicationFactor: -1,
    configEntries: Object.entries({
      ...(spec.compacted ? { 'cleanup.policy': 'compact' } : {}),
      ...spec.configEntries,
    }).map(([name, value]) => ({ name, value })),
  }));
  // Another process may create the same topic between listTopics and createTopics; the
  // broker then answers TOPIC_ALREADY_EXISTS, which kafkajs reports as `false`, not an error.
  // Waiting for the leaders of a topic another process is creating can meet
  // UNKNOWN_TOPIC_OR_PARTITION for a moment: retriable, and retried.
  await retryRetriable(() => admin.createTopics({ topics, waitForLeaders: true }));
  return missing.map((spec) => spec.topic);
}
