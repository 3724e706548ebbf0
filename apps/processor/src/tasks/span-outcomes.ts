// How a journaled transaction ended on each partition it wrote, read from the partitions
// themselves: what is open there (DescribeProducers) and its producer's marker after its first
// record. hanging-commit.ts decides a pending offset commit from these.
import type { Admin } from 'kafkajs';

import { findOpenTransactions, transactionOutcome } from '@sluice/kafka';
import type { OpenTransaction } from '@sluice/kafka';

import type { SpanOutcome } from './hanging-commit';
import { splitKey } from './transaction-journal';
import type { TransactionWrites } from './transaction-journal';

/**
 * Keyed `topic/partition`: 'open' while its span there is; 'joined' when an earlier
 * transaction of `producerId` began the open span it wrote into; else its marker there.
 */
export async function spanOutcomes(
  admin: Admin,
  writes: TransactionWrites | undefined,
  producerId: string | undefined,
  /** What is open on the partitions it wrote, when the caller has just asked. */
  asked?: readonly OpenTransaction[],
): Promise<Map<string, SpanOutcome>> {
  const outcomes = new Map<string, SpanOutcome>();
  if (writes === undefined || writes.firstOffsets.size === 0) return outcomes;
  const open = asked ?? (await findOpenTransactions(admin, writtenBy(writes)));
  for (const [key, startOffset] of writes.firstOffsets) {
    const { topic, partition } = splitKey(key);
    const here = open.filter((t) => t.topic === topic && t.partition === partition);
    if (here.some((t) => t.startOffset === startOffset)) outcomes.set(key, 'open');
    else if (
      here.some((t) => t.producerId === producerId && BigInt(t.startOffset) < BigInt(startOffset))
    )
      outcomes.set(key, 'joined');
    else outcomes.set(key, await transactionOutcome(admin, { topic, partition, startOffset }));
  }
  return outcomes;
}

/** The partitions a transaction wrote, by topic. */
export function writtenBy(
  writes: TransactionWrites,
): Array<{ topic: string; partitions: number[] }> {
  const byTopic = new Map<string, number[]>();
  for (const key of writes.firstOffsets.keys()) {
    const { topic, partition } = splitKey(key);
    byTopic.set(topic, [...(byTopic.get(topic) ?? []), partition]);
  }
  return [...byTopic].map(([topic, partitions]) => ({ topic, partitions }));
}
