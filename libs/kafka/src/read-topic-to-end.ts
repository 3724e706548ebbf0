import { AssignerProtocol } from 'kafkajs';
import type { Kafka, PartitionAssigner } from 'kafkajs';

import { namingDenied, onTopics } from './access/authorization-denials';
import { scratchGroupId } from './access/scratch-groups';
import { fetchTopicOffsets } from './retry';

export interface TopicRecord {
  partition: number;
  offset: string;
  key: string | null;
  value: string | null;
}

export interface ReadToEndOptions {
  /** Whose read this is: the scratch group is named under it (access/scratch-groups.ts). */
  groupOwner: string;
  /** Only these partitions (a changelog restore reads one partition); all when omitted. */
  partitions?: readonly number[];
  /**
   * Where to stop in each partition read (exclusive), when the caller has checked its end
   * (a changelog restore: see untilStableEnd); otherwise each partition's last stable offset
   * as of the call.
   */
  ends?: ReadonlyMap<number, bigint>;
  /**
   * Fails the read when nothing at all arrived (no batch, not even one of markers only) for this
   * long: a read that is making progress is never cut off, however long it takes.
   */
  stallTimeoutMs?: number;
  /** Called between batches of a long read, so a caller inside a consumer group can heartbeat. */
  onBatch?: () => Promise<void>;
}

/**
 * Reads a topic (or some of its partitions) from the beginning up to its end (`ends`, or the
 * last stable offsets as of the call), read_committed, through a scratch consumer group of
 * `groupOwner` that is deleted afterwards. For compacted topics read as tables: definitions,
 * lookup tables, changelogs.
 */
export async function readTopicToEnd(
  kafka: Kafka,
  topic: string,
  onRecord: (record: TopicRecord) => void,
  options: ReadToEndOptions,
): Promise<number> {
  const groupId = scratchGroupId(options.groupOwner, 'reader');
  try {
    return await readThroughGroup(kafka, topic, groupId, onRecord, options);
  } catch (error) {
    throw namingDenied(error, {
      group: `Read and Delete on group ${groupId} (a prefixed grant on ${options.groupOwner}.)`,
      topic: onTopics('Read and Describe', [topic]),
    });
  }
}

async function readThroughGroup(
  kafka: Kafka,
  topic: string,
  groupId: string,
  onRecord: (record: TopicRecord) => void,
  options: ReadToEndOptions,
): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const wanted = options.partitions ? new Set(options.partitions) : undefined;
    const offsets = await fetchTopicOffsets(admin, topic);
    const remaining = new Map(
      offsets
        .filter((p) => (wanted ? wanted.has(p.partition) : true))
        .map(
          (p) =>
            [p.partition, options.ends?.get(p.partition) ?? BigInt(p.high), BigInt(p.low)] as const,
        )
        .filter(([, end, low]) => end > low)
        .map(([partition, end]): [number, bigint] => [partition, end]),
    );
    if (remaining.size === 0) return 0;
    // kafkajs cannot assign partitions by hand; an assigner that hands exactly these partitions
    // to the group's only member does the same job.
    const consumer = kafka.consumer({
      groupId,
      readUncommitted: false,
      maxWaitTimeInMs: 100,
      maxBytesPerPartition: 8 * 1024 * 1024,
      partitionAssigners: [fixedAssigner(topic, [...remaining.keys()])],
    });
    let count = 0;
    let finish: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    // A transactional topic ends in commit markers, and kafkajs skips batches holding only
    // markers without calling eachBatch; its end-of-batch event still reports their offsets.
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      const end = remaining.get(payload.partition);
      if (end !== undefined && BigInt(payload.lastOffset) + 1n >= end) {
        remaining.delete(payload.partition);
        if (remaining.size === 0) finish();
      }
    });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        eachBatch: async ({ batch, heartbeat }) => {
          const end = remaining.get(batch.partition);
          if (end === undefined) return;
          // Offsets are compared one by one only in the batch that reaches the end (a restore
          // reads millions of records, and parsing each offset into a BigInt shows).
          const reachesEnd = BigInt(batch.lastOffset()) >= end;
          for (const message of batch.messages) {
            if (reachesEnd && BigInt(message.offset) >= end) break;
            count += 1;
            onRecord({
              partition: batch.partition,
              offset: message.offset,
              // toString() without an argument is Node's fast UTF-8 path (restores read many).
              key: message.key?.toString() ?? null,
              value: message.value?.toString() ?? null,
            });
          }
          await options.onBatch?.();
          await heartbeat();
        },
      });
      const stallMs = options.stallTimeoutMs ?? 60_000;
      let timer: NodeJS.Timeout | undefined;
      let stalled: (error: Error) => void = () => undefined;
      const timedOut = new Promise<never>((_, reject) => (stalled = reject));
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(
          () =>
            stalled(new Error(`reading ${topic} to its end: nothing arrived for ${stallMs} ms`)),
          stallMs,
        );
      };
      arm();
      consumer.on(consumer.events.END_BATCH_PROCESS, arm);
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

function fixedAssigner(topic: string, partitions: number[]): PartitionAssigner {
  const name = 'SluiceFixedAssigner';
  const empty = Buffer.alloc(0);
  return () => ({
    name,
    version: 1,
    assign: async ({ members }) =>
      members.map((member, index) => ({
        memberId: member.memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({
          version: 1,
          assignment: index === 0 ? { [topic]: partitions } : {},
          userData: empty,
        }),
      })),
    protocol: ({ topics }) => ({
      name,
      metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: empty }),
    }),
  });
}
