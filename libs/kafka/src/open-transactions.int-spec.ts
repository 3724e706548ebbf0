// DescribeProducers, WriteTxnMarkers and a read_uncommitted Fetch through the patched kafkajs,
// on the real broker: an open transaction is found where its first record is, a marker written
// by a client ends it as its coordinator's would, on a data partition and on the group's offsets
// partition alike, and the marker after a transaction's first record tells how it ended.
// DescribeTransactions: a coordinator's state of a transactional id, once its markers are out.
import { logLevel, Partitioners } from 'kafkajs';
import type { Admin, Kafka, Producer, Transaction } from 'kafkajs';

import {
  createKafka,
  endWithMarker,
  ensureTopics,
  fetchPartitionEnds,
  fetchStableOffset,
  findOpenTransactions,
  findPendingOffsetCommits,
  isUnstableOffsetCommit,
  transactionBegunBy,
  transactionEnded,
  transactionOutcome,
} from './index';
import type { OpenTransaction } from './index';
import { readTopic, uniqueName } from './testing';

describe('open transactions, found and ended with a marker', () => {
  let kafka: Kafka;
  let admin: Admin;
  const producers: Producer[] = [];

  beforeAll(async () => {
    kafka = createKafka({ clientId: 'sluice-open-txn-test', logLevel: logLevel.ERROR });
    admin = kafka.admin();
    await admin.connect();
  });

  afterAll(async () => {
    await Promise.all(producers.map((producer) => producer.disconnect()));
    await admin.disconnect();
  });

  /** A transaction left open: `count` records on partition 0 of `topic` after one committed. */
  async function openTransaction(
    topic: string,
    count: number,
    offsets?: { group: string; source: string },
  ) {
    const producer = kafka.producer({
      transactionalId: uniqueName('open-txn.id'),
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    producers.push(producer);
    await producer.connect();
    const before = await producer.transaction();
    await before.send({ topic, messages: [{ key: 'k', value: 'committed', partition: 0 }] });
    await before.commit();
    const transaction: Transaction = await producer.transaction();
    const messages = Array.from({ length: count }, (_, i) => ({
      key: 'k',
      value: `open-${i}`,
      partition: 0,
    }));
    const [written] = await transaction.send({ topic, messages });
    if (offsets)
      await transaction.sendOffsets({
        consumerGroupId: offsets.group,
        topics: [{ topic: offsets.source, partitions: [{ partition: 0, offset: '42' }] }],
      });
    return { transaction, firstOffset: written!.baseOffset! };
  }

  async function endOf(topic: string) {
    return (await fetchPartitionEnds(admin, topic)).find((end) => end.partition === 0)!;
  }

  async function openOn(topic: string): Promise<OpenTransaction[]> {
    return findOpenTransactions(admin, [{ topic, partitions: [0, 1] }]);
  }

  it('finds a transaction open where its first record is, and a COMMIT marker makes it visible', async () => {
    const topic = uniqueName('open-txn.commit');
    await ensureTopics(admin, [{ topic, numPartitions: 2 }]);
    const { transaction, firstOffset } = await openTransaction(topic, 3);
    expect(firstOffset).toBe('2'); // one record and its marker before it

    const [open, ...others] = await openOn(topic);
    expect(others).toEqual([]);
    expect(open).toMatchObject({ topic, partition: 0, startOffset: firstOffset });
    expect(await endOf(topic)).toMatchObject({ stable: firstOffset, high: '5' });

    await endWithMarker(admin, open!, true);

    expect(await openOn(topic)).toEqual([]);
    const ended = await endOf(topic);
    expect(ended.stable).toBe(ended.high);
    const values = (await readTopic(kafka, { topic, expected: 4 })).map((r) => r.value);
    expect(values).toEqual(['committed', 'open-0', 'open-1', 'open-2']);

    // Its coordinator ends it later (here: the producer's own abort); a marker after ours
    // finds no transaction open there and changes nothing that was read.
    await transaction.abort();
    expect(
      (await readTopic(kafka, { topic, expected: 4, settleMs: 500 })).map((r) => r.value),
    ).toEqual(values);
  });

  it('an ABORT marker discards the open records', async () => {
    const topic = uniqueName('open-txn.abort');
    await ensureTopics(admin, [{ topic, numPartitions: 2 }]);
    const { transaction } = await openTransaction(topic, 2);
    const [open] = await openOn(topic);
    await endWithMarker(admin, open!, false);
    expect(await openOn(topic)).toEqual([]);
    const ends = await fetchPartitionEnds(admin, topic);
    expect(ends[0]!.stable).toBe(ends[0]!.high);
    expect(
      (await readTopic(kafka, { topic, expected: 1, settleMs: 500 })).map((r) => r.value),
    ).toEqual(['committed']);
    await transaction.abort();
  });

  it("ends a pending offset commit on the group's offsets partition", async () => {
    const topic = uniqueName('open-txn.offsets-out');
    const source = uniqueName('open-txn.offsets-source');
    const group = uniqueName('open-txn.group');
    await ensureTopics(admin, [
      { topic, numPartitions: 2 },
      { topic: source, numPartitions: 1 },
    ]);
    const { transaction } = await openTransaction(topic, 1, { group, source });
    const [data] = await openOn(topic);
    const unstable = await fetchStableOffset(admin, group, source, 0, undefined, false).catch(
      (error: unknown) => error,
    );
    expect(isUnstableOffsetCommit(unstable)).toBe(true);

    const pending = await findPendingOffsetCommits(admin, data!.producerId);
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ topic: '__consumer_offsets', producerId: data!.producerId });
    // Asked of the group's own partition only, as the broker places the group.
    expect(await findPendingOffsetCommits(admin, data!.producerId, [group])).toEqual(pending);

    for (const open of [data!, ...pending]) await endWithMarker(admin, open, true);
    expect((await fetchStableOffset(admin, group, source, 0, undefined, false))?.offset).toBe('42');
    await transaction.abort();
    expect((await fetchStableOffset(admin, group, source, 0))?.offset).toBe('42');
  });
  it('tells how a transaction ended on a partition from the marker after its first record', async () => {
    const topic = uniqueName('open-txn.outcome');
    await ensureTopics(admin, [{ topic, numPartitions: 2 }]);
    const outcome = (startOffset: string) =>
      transactionOutcome(admin, { topic, partition: 0, startOffset });

    // Another producer's records and markers interleave with the ones asked about.
    const other = await openTransaction(topic, 2);
    const open = await openTransaction(topic, 2);
    expect(await outcome(open.firstOffset)).toBe('open');
    const [found] = (await openOn(topic)).filter((t) => t.startOffset === open.firstOffset);
    expect(
      await transactionBegunBy(admin, { topic, partition: 0, startOffset: open.firstOffset }),
    ).toEqual({ producerId: found!.producerId, producerEpoch: found!.producerEpoch });
    await other.transaction.commit();
    expect(await outcome(open.firstOffset)).toBe('open'); // the other producer's COMMIT
    expect(await outcome(other.firstOffset)).toBe('commit');

    await open.transaction.abort();
    expect(await outcome(open.firstOffset)).toBe('abort');
    // The first transaction of `other`'s producer, committed before either opened.
    expect(await outcome('0')).toBe('commit');
  });

  it("answers a transactional id's state once its coordinator has ended the transaction", async () => {
    const topic = uniqueName('open-txn.state');
    await ensureTopics(admin, [{ topic, numPartitions: 2 }]);
    const transactionalId = uniqueName('open-txn.described');
    const producer = kafka.producer({
      transactionalId,
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    producers.push(producer);
    await producer.connect();
    const transaction = await producer.transaction();
    await transaction.send({ topic, messages: [{ key: 'k', value: 'v', partition: 1 }] });
    const ongoing = await admin.describeTransaction({ transactionalId });
    expect(ongoing).toMatchObject({
      transactionState: 'Ongoing',
      producerId: producer.transactionalIdentity()!.producerId,
      topics: [{ topic, partitions: [1] }],
    });
    await transaction.commit();
    // Once it answers, the commit's marker is on the partition: nothing is left open there.
    expect(await transactionEnded(admin, transactionalId)).toBe('CompleteCommit');
    expect(await openOn(topic)).toEqual([]);

    const aborted = await producer.transaction();
    await aborted.send({ topic, messages: [{ key: 'k', value: 'v', partition: 0 }] });
    await aborted.abort();
    expect(await transactionEnded(admin, transactionalId)).toBe('CompleteAbort');
    // An id its coordinator never saw has no state, and no transaction to wait for.
    expect(await transactionEnded(admin, uniqueName('open-txn.unknown'))).toBe('');
  });
});
