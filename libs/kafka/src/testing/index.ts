import { randomUUID } from 'node:crypto';

import type { Consumer, EachMessagePayload, Kafka } from 'kafkajs';

/** A topic or group name no other test run will use. */
export function uniqueName(prefix: string): string {
  return `${prefix}.${randomUUID().slice(0, 8)}`;
}

export interface ConsumedRecord {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  value: string | null;
}

export interface ReadTopicOptions {
  topic: string;
  /** Stop once this many records arrived. */
  expected: number;
  readUncommitted?: boolean;
  timeoutMs?: number;
  /** After `expected` records, keep listening this long to catch records that should not be there. */
  settleMs?: number;
}

/** Reads a topic from the beginning with a throwaway group (read_committed unless told). */
export async function readTopic(
  kafka: Kafka,
  options: ReadTopicOptions,
): Promise<ConsumedRecord[]> {
  const consumer: Consumer = kafka.consumer({
    groupId: uniqueName('sluice-test-reader'),
    readUncommitted: options.readUncommitted ?? false,
    maxWaitTimeInMs: 100,
  });
  const records: ConsumedRecord[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: options.topic, fromBeginning: true });
    let reachedExpected: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => (reachedExpected = resolve));
    await consumer.run({
      eachMessage: async ({ topic, partition, message }: EachMessagePayload) => {
        records.push({
          topic,
          partition,
          offset: message.offset,
          key: message.key?.toString('utf8') ?? null,
          value: message.value?.toString('utf8') ?? null,
        });
        if (records.length >= options.expected) reachedExpected();
      },
    });
    const timeoutMs = options.timeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const outcome = await Promise.race([reached, timedOut]);
    clearTimeout(timer);
    if (outcome !== 'timeout' && options.settleMs) {
      await new Promise((resolve) => setTimeout(resolve, options.settleMs));
    }
    return records;
  } finally {
    await consumer.disconnect();
  }
}
export { OwnBroker } from './own-broker';
export {
  kafkajsModule,
  patchedAbortedFilter,
  patchedRecordDecoder,
  patchedRecordSet,
  stockRecordDecoder,
  stockRecordSet,
} from '../kafkajs/patched-kafkajs';
export type {
  DecodedRecord,
  KafkajsDecoder,
  RecordBatchContext,
  RecordDecoder,
  RecordSetOptions,
  RecordSetWriter,
} from '../kafkajs/patched-kafkajs';
