// What the broker says when a test read fewer records than it expected: a read_committed reader
// stops at a partition's last stable offset, so "the results were never written" and "they are
// written but a transaction in front of them is still open" look the same from the test. This
// asks the broker which it is, for the topic read and every topic of the test's installation,
// and where the processor group's committed offsets stand, so that a failure in CI names its
// kind instead of only printing a short diff.
import { fetchPartitionEnds, findOpenTransactions } from '@sluice/kafka';
import type { Admin } from 'kafkajs';

export interface ShortRead {
  topic: string;
  expected: number;
  /** The records read, by partition. */
  readByPartition: Map<number, number>;
  waitedMs: number;
  /** The installation's topic prefix: its topics are checked for open transactions too. */
  prefix: string;
  group: string;
}

/** A few lines that say, per partition, what was read against what the broker holds. */
export async function describeShortRead(admin: Admin, read: ShortRead): Promise<string> {
  const total = [...read.readByPartition.values()].reduce((sum, n) => sum + n, 0);
  const lines = [
    `short read of ${read.topic}: ${total} of ${read.expected} records after ${read.waitedMs} ms (${new Date().toISOString()})`,
  ];
  for (const end of await fetchPartitionEnds(admin, read.topic))
    lines.push(
      `  ${read.topic}/${end.partition}: read ${read.readByPartition.get(end.partition) ?? 0}, ` +
        `stable ${end.stable}, high ${end.high}`,
    );
  const topics = (await admin.listTopics()).filter((topic) => topic.startsWith(`${read.prefix}.`));
  const ends = await Promise.all(
    topics.map(async (topic) => ({ topic, ends: await fetchPartitionEnds(admin, topic) })),
  );
  const blocked = ends.flatMap(({ topic, ends }) =>
    ends
      .filter((end) => BigInt(end.stable) < BigInt(end.high))
      .map((end) => `${topic}/${end.partition} stable ${end.stable} < high ${end.high}`),
  );
  lines.push(`  partitions with an open transaction: ${blocked.join('; ') || 'none'}`);
  const open = await findOpenTransactions(
    admin,
    ends.map(({ topic, ends }) => ({ topic, partitions: ends.map((end) => end.partition) })),
  );
  for (const txn of open)
    lines.push(
      `  open: ${txn.topic}/${txn.partition} producer ${txn.producerId} epoch ${txn.producerEpoch} from offset ${txn.startOffset}`,
    );
  const committed = await admin.fetchOffsets({ groupId: read.group });
  for (const { topic, partitions } of committed)
    lines.push(
      `  ${read.group} on ${topic}: ${partitions.map((p) => `${p.partition}@${p.offset}`).join(' ')}`,
    );
  return lines.join('\n');
}
