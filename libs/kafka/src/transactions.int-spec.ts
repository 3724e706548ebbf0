// What a task asks the broker about a transaction that is still open, through the patched
// kafkajs: OffsetFetch require_stable answers UNSTABLE_OFFSET_COMMIT (where the plain one
// answers the older offset), and the last stable offset stops before it (where the high
// watermark does not). Both settle once the transaction ends, and the waits end with it.
import { logLevel, Partitioners } from 'kafkajs';
import type { Admin, Kafka, Producer } from 'kafkajs';

import { createKafka, ensureTopics, fetchPartitionEnds, fetchStableOffset } from './index';
import { untilStableEnd } from './partition-ends';
import { uniqueName } from './testing';

describe('an open transaction, as the broker reports it', () => {
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  const topic = uniqueName('txn.out');
  const source = uniqueName('txn.source');
  const group = uniqueName('txn.group');

  beforeAll(async () => {
    kafka = createKafka({ clientId: 'sluice-txn-test', logLevel: logLevel.ERROR });
    admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [
      { topic, numPartitions: 1 },
      { topic: source, numPartitions: 2 },
    ]);
    producer = kafka.producer({
      transactionalId: uniqueName('txn.id'),
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
  });

  afterAll(async () => {
    await producer.disconnect();
    await admin.disconnect();
  });

  async function commitOffset(offset: string, commit: boolean) {
    const transaction = await producer.transaction();
    await transaction.send({ topic, messages: [{ key: 'k', value: offset }] });
    await transaction.sendOffsets({
      consumerGroupId: group,
      topics: [{ topic: source, partitions: [{ partition: 1, offset }] }],
    });
    if (commit) await transaction.commit();
    return transaction;
  }

  it('is unstable to require_stable and to the last stable offset until it ends', async () => {
    await commitOffset('10', true);
    expect((await fetchStableOffset(admin, group, source, 1))?.offset).toBe('10');
    const stableEnd = await untilStableEnd(admin, topic, 0);

    const open = await commitOffset('20', false);
    // The plain OffsetFetch answers the older offset as if it were final.
    const [plain] = await admin.fetchOffsets({ groupId: group, topics: [source] });
    expect(plain!.partitions.find((p) => p.partition === 1)?.offset).toBe('10');
    await expect(
      admin.fetchOffsets({ groupId: group, topics: [source], requireStable: true }),
    ).rejects.toMatchObject({ type: 'UNSTABLE_OFFSET_COMMIT' });
    const [end] = await fetchPartitionEnds(admin, topic);
    expect(BigInt(end!.stable)).toBe(stableEnd);
    expect(BigInt(end!.high)).toBeGreaterThan(stableEnd);

    // The waits end when the transaction does, with what it committed.
    const waits: number[] = [];
    const stable = fetchStableOffset(admin, group, source, 1, (attempt) => waits.push(attempt));
    // Another partition, with nothing pending, answers at once.
    expect(await fetchStableOffset(admin, group, source, 0)).toBeUndefined();
    const ended = untilStableEnd(admin, topic, 0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await open.commit();
    expect((await stable)?.offset).toBe('20');
    expect(waits.length).toBeGreaterThan(0);
    const after = await ended;
    expect(after).toBeGreaterThan(stableEnd);
    const [final] = await fetchPartitionEnds(admin, topic);
    expect(final!.stable).toBe(final!.high);
  });
});
