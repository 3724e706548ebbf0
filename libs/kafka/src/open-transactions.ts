// Transactions still open on a partition, how one ended there, and how to end one there (what
// `kafka-transactions find-hanging` and `abort` do), through DescribeProducers, a
// read_uncommitted Fetch that keeps the markers, and WriteTxnMarkers, which
// patches/kafkajs+2.2.4.patch adds to kafkajs. A transaction is open on a partition while its
// producer's records there have no marker after them: the partition's last stable offset stops
// at its first record, so no read-committed reader gets past it.
import type { Admin } from 'kafkajs';

import { onTopics, withDenialsNamed } from './access/authorization-denials';
import { isRetriable, retryBroker, retryRetriable } from './retry';

export interface TopicPartitions {
  topic: string;
  partitions: number[];
}

export interface OpenTransaction {
  topic: string;
  partition: number;
  producerId: string;
  /** The producer's epoch as the partition last saw it: a marker must carry at least this. */
  producerEpoch: number;
  /** The coordinator epoch of the producer's last marker there: a marker must carry at least this. */
  coordinatorEpoch: number;
  /** The offset of the transaction's first record on the partition. */
  startOffset: string;
}

/**
 * Every transaction open on `partitions`, as their leaders answer. A topic deleted since (an
 * output deleted under its pipeline) holds no transaction any more: it is left out. `often`:
 * for a caller that asks after every commit, of topics it has just written (so they exist):
 * no topic list, and the leaders as last known, refreshed only on a retry.
 */
export async function findOpenTransactions(
  admin: Admin,
  given: readonly TopicPartitions[],
  options: { often?: boolean } = {},
): Promise<OpenTransaction[]> {
  if (given.length === 0) return [];
  const existing = options.often
    ? new Set(given.map((p) => p.topic))
    : new Set(await retryRetriable(() => admin.listTopics()));
  const partitions = given.filter((p) => existing.has(p.topic));
  if (partitions.length === 0) return [];
  const topics = [...new Set(partitions.map((p) => p.topic))];
  let attempts = 0;
  const answers = await withDenialsNamed({ topic: onTopics('Read', topics) }, () =>
    retryRetriable(() =>
      admin.describeProducers({
        topics: partitions.map((p) => ({ ...p })),
        refreshMetadata: !options.often || attempts++ > 0,
      }),
    ),
  );
  return answers.flatMap(({ topic, partition, activeProducers }) =>
    activeProducers
      .filter((producer) => BigInt(producer.currentTxnStartOffset) >= 0n)
      .map((producer) => ({
        topic,
        partition,
        producerId: producer.producerId,
        producerEpoch: producer.producerEpoch,
        coordinatorEpoch: producer.coordinatorEpoch,
        startOffset: producer.currentTxnStartOffset,
      })),
  );
}

/** A coordinator in these states is still writing the markers that end a transaction. */
const MARKERS_UNDER_WAY = new Set(['PrepareCommit', 'PrepareAbort', 'PrepareEpochFence']);

/** The coordinator was still writing a transaction's markers when last asked. */
export class MarkersUnderWayError extends Error {
  override readonly name = 'MarkersUnderWayError';
}

/**
 * Resolves, with the coordinator's state of `transactionalId` (DescribeTransactions, which
 * patches/kafkajs+2.2.4.patch adds), once it has ended the id's last transaction: every
 * marker of it written, or given up on (a dropped marker: README, Known issues). Asked again
 * under BROKER_RETRY while the markers are under way; past that, MarkersUnderWayError.
 */
export async function transactionEnded(admin: Admin, transactionalId: string): Promise<string> {
  const asked = { 'transactional id': `Describe on transactional id ${transactionalId}` };
  return retryBroker(
    async () => {
      const state = await withDenialsNamed(asked, () =>
        admin.describeTransaction({ transactionalId }),
      );
      if (MARKERS_UNDER_WAY.has(state.transactionState))
        throw new MarkersUnderWayError(
          `${transactionalId}: its coordinator is still ending its transaction (${state.transactionState})`,
        );
      return state.transactionState;
    },
    { shouldRetry: (error) => error instanceof MarkersUnderWayError || isRetriable(error) },
  );
}

/** Where the group coordinators keep offset commits, a pending one among them. */
export const OFFSETS_TOPIC = '__consumer_offsets';

/**
 * The transactions of `producerId` open on the offsets topic: its offset commits still pending
 * there, on the partition of each group it committed to (of `groupIds`' partitions only, when
 * given; else of every partition).
 */
export async function findPendingOffsetCommits(
  admin: Admin,
  producerId: string,
  groupIds?: readonly string[],
): Promise<OpenTransaction[]> {
  const { topics } = await withDenialsNamed({ topic: onTopics('Describe', [OFFSETS_TOPIC]) }, () =>
    retryRetriable(() => admin.fetchTopicMetadata({ topics: [OFFSETS_TOPIC] })),
  );
  const all = topics[0]?.partitions.map((p) => p.partitionId) ?? [];
  const partitions = groupIds
    ? [...new Set(groupIds.map((groupId) => offsetsPartitionOf(groupId, all.length)))]
    : all;
  const open = await findOpenTransactions(admin, [{ topic: OFFSETS_TOPIC, partitions }]);
  return open.filter((transaction) => transaction.producerId === producerId);
}

/**
 * The offsets topic's partition that holds `groupId`'s commits, as the broker places it:
 * `Utils.abs(groupId.hashCode()) % partitions`, with Java's String hash over UTF-16 units.
 */
export function offsetsPartitionOf(groupId: string, partitions: number): number {
  let hash = 0;
  for (let i = 0; i < groupId.length; i++) hash = (Math.imul(31, hash) + groupId.charCodeAt(i)) | 0;
  // Kafka's Utils.abs: Math.abs, except that the one int without a positive twin maps to 0.
  return (hash === -0x80000000 ? 0 : Math.abs(hash)) % partitions;
}

/**
 * Ends `transaction` on its partition with a COMMIT (`committed`) or ABORT marker, as its
 * coordinator would have: a marker of its producer id, at the epochs the partition last saw.
 * Only for a transaction whose outcome the caller knows (its coordinator decided it and the
 * marker never came): a marker against the coordinator's decision breaks atomicity.
 */
export async function endWithMarker(
  admin: Admin,
  transaction: OpenTransaction,
  committed: boolean,
): Promise<void> {
  const asked = { cluster: 'ClusterAction on the cluster (WriteTxnMarkers; an optional grant)' };
  await withDenialsNamed(asked, () =>
    retryRetriable(() =>
      admin.writeTxnMarkers({
        markers: [
          {
            producerId: transaction.producerId,
            producerEpoch: transaction.producerEpoch,
            committed,
            coordinatorEpoch: transaction.coordinatorEpoch,
            topics: [{ topic: transaction.topic, partitions: [transaction.partition] }],
          },
        ],
      }),
    ),
  );
}

/**
 * The producer id and epoch that wrote the record at `startOffset` of a partition (the first
 * record of a transaction there: the epoch it began in), or undefined when that record is gone.
 */
export async function transactionBegunBy(
  admin: Admin,
  at: { topic: string; partition: number; startOffset: string },
): Promise<{ producerId: string; producerEpoch: number } | undefined> {
  const { topic, partition, startOffset } = at;
  const { records } = await withDenialsNamed({ topic: onTopics('Read', [topic]) }, () =>
    retryRetriable(() => admin.fetchPartitionRecords({ topic, partition, offset: startOffset })),
  );
  const first = records.find((record) => record.offset === startOffset);
  return first && { producerId: first.producerId, producerEpoch: first.producerEpoch };
}

/**
 * How a transaction ended on one partition: its producer's first marker after its first record
 * there, COMMIT or ABORT; `open` while none is written up to the high watermark; `unknown` when
 * the record at `startOffset` is not there to name the producer (compacted or past retention).
 */
export type TransactionOutcome = 'commit' | 'abort' | 'open' | 'unknown';

/** A control record's key: version (int16), then the type (int16): 0 ABORT, 1 COMMIT. */
const ABORT_MARKER = 0;
const COMMIT_MARKER = 1;

/**
 * How the transaction whose first record on `topic`/`partition` is at `startOffset` ended there,
 * read from the partition itself: the record there names the producer, and that producer's next
 * marker is the transaction's. Only a transaction of the producer's own is between the two (a
 * producer has one open transaction per partition at a time).
 */
export async function transactionOutcome(
  admin: Admin,
  at: { topic: string; partition: number; startOffset: string },
): Promise<TransactionOutcome> {
  const { topic, partition } = at;
  // A topic deleted since (an output deleted under its pipeline) holds nothing to read.
  if (!(await retryRetriable(() => admin.listTopics())).includes(topic)) return 'unknown';
  const start = BigInt(at.startOffset);
  let next = start;
  let producerId: string | undefined;
  for (;;) {
    const from = next;
    let fetched: Awaited<ReturnType<Admin['fetchPartitionRecords']>>;
    try {
      fetched = await withDenialsNamed({ topic: onTopics('Read', [topic]) }, () =>
        retryRetriable(() =>
          admin.fetchPartitionRecords({ topic, partition, offset: next.toString() }),
        ),
      );
    } catch (error) {
      // Below the log start (retention, deleted records): the records are gone.
      if ((error as { type?: string }).type === 'OFFSET_OUT_OF_RANGE') return 'unknown';
      throw error;
    }
    const { highWatermark, records } = fetched;
    for (const record of records) {
      const offset = BigInt(record.offset);
      if (offset < next) continue; // the head of a batch that began before `next`
      if (producerId === undefined) {
        if (offset !== start) return 'unknown';
        producerId = record.producerId;
      } else if (record.isControlRecord && record.producerId === producerId) {
        const type = record.key !== null && record.key.length >= 4 ? record.key.readInt16BE(2) : -1;
        if (type === COMMIT_MARKER) return 'commit';
        return type === ABORT_MARKER ? 'abort' : 'unknown';
      }
      next = offset + 1n;
    }
    if (next >= BigInt(highWatermark)) return producerId === undefined ? 'unknown' : 'open';
    // A Fetch answers at least one whole batch from `next` (KIP-74), so each one moves on,
    // unless the records there are gone (the log start passed them, or compaction).
    if (next === from) return 'unknown';
  }
}
