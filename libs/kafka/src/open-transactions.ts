// Transactions still open on a partition, and how to end one there (what `kafka-transactions
// find-hanging` and `abort` do), through DescribeProducers and WriteTxnMarkers, which
// patches/kafkajs+2.2.4.patch adds to kafkajs. A transaction is open on a partition while its
// producer's records there have no marker after them: the partition's last stable offset stops
// at its first record, so no read-committed reader gets past it.
import type { Admin } from 'kafkajs';

import { onTopics, withDenialsNamed } from './access/authorization-denials';
import { retryRetriable } from './retry';

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
 * output deleted under its pipeline) holds no transaction any more: it is left out.
 */
export async function findOpenTransactions(
  admin: Admin,
  given: readonly TopicPartitions[],
): Promise<OpenTransaction[]> {
  if (given.length === 0) return [];
  const existing = new Set(await retryRetriable(() => admin.listTopics()));
  const partitions = given.filter((p) => existing.has(p.topic));
  if (partitions.length === 0) return [];
  const topics = [...new Set(partitions.map((p) => p.topic))];
  const answers = await withDenialsNamed({ topic: onTopics('Read', topics) }, () =>
    retryRetriable(() => admin.describeProducers({ topics: partitions.map((p) => ({ ...p })) })),
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
