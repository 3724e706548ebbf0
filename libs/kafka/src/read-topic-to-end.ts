import { randomUUID } from 'node:crypto';

import type { Kafka } from 'kafkajs';

export interface TopicRecord {
  partition: number;
  offset: string;
  key: string | null;
  value: string | null;
}

/**
 * Reads a topic from the beginning up to its end as of the call (the high watermarks then), with
 * read_committed, through a throwaway consumer group that is deleted afterwards. For compacted
 * topics read as tables: definitions, lookup tables, changelogs.
 */
export async function readTopicToEnd(
  kafka: Kafka,
  topic: string,
  onRecord: (record: TopicRecord) => void,
  options: { timeoutMs?: number } = {},
): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  const groupId = `sluice-reader-${randomUUID()}`;
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    const remaining = new Map(
      offsets
        .filter((p) => BigInt(p.high) > BigInt(p.low))
        .map((p) => [p.partition, BigInt(p.high)]),
    );
    if (remaining.size === 0) return 0;
    const consumer = kafka.consumer({ groupId, readUncommitted: false, maxWaitTimeInMs: 100 });
    let count = 0;
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      let finish: () => void = () => undefined;
      const finished = new Promise<void>((resolve) => (finish = resolve));
      await consumer.run({
        eachBatch: async ({ batch, heartbeat }) => {
          const end = remaining.get(batch.partition);
          for (const message of batch.messages) {
            if (end !== undefined && BigInt(message.offset) >= end) break;
            count += 1;
            onRecord({
              partition: batch.partition,
              offset: message.offset,
              key: message.key?.toString('utf8') ?? null,
              value: message.value?.toString('utf8') ?? null,
            });
          }
          // Transaction markers take offsets too, so "done" is the fetch position, not a record.
          if (
            end !== undefined &&
            BigInt(batch.highWatermark) >= end &&
            batch.offsetLag() === '0'
          ) {
            remaining.delete(batch.partition);
          } else if (
            end !== undefined &&
            batch.messages.length > 0 &&
            BigInt(batch.lastOffset()) + 1n >= end
          ) {
            remaining.delete(batch.partition);
          }
          if (remaining.size === 0) finish();
          await heartbeat();
        },
      });
      const timeoutMs = options.timeoutMs ?? 60_000;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`reading ${topic} to its end took longer than ${timeoutMs} ms`)),
          timeoutMs,
        );
      });
      await Promise.race([finished, timedOut]).finally(() => clearTimeout(timer));
      return count;
    } finally {
      await consumer.disconnect();
      await admin.deleteGroups([groupId]).catch(() => undefined);
    }
  } finally {
    await admin.disconnect();
  }
}
