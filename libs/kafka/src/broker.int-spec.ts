// Proves the local broker is a real Kafka fit for exactly-once: partitioned keyed traffic,
// transactional produce + sendOffsets visible to read_committed readers, and aborts that are not.
import { logLevel } from 'kafkajs';
import type { Admin, Kafka } from 'kafkajs';

import { createKafka, ensureTopics } from './index';
import { readTopic, uniqueName } from './testing';

describe('the local Kafka broker', () => {
  let kafka: Kafka;
  let admin: Admin;

  beforeAll(async () => {
    kafka = createKafka({ clientId: 'sluice-broker-smoke', logLevel: logLevel.ERROR });
    admin = kafka.admin();
    await admin.connect();
  });

  afterAll(async () => {
    await admin.disconnect();
  });

  it('creates a 3-partition topic and round-trips 1,000 keyed messages, keys pinned to partitions', async () => {
    const topic = uniqueName('smoke.keyed');
    expect(await ensureTopics(admin, [{ topic, numPartitions: 3 }])).toEqual([topic]);
    expect(await ensureTopics(admin, [{ topic, numPartitions: 3 }])).toEqual([]);
    const [metadata] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
    expect(metadata!.partitions).toHaveLength(3);

    const producer = kafka.producer();
    await producer.connect();
    const sent = Array.from({ length: 1000 }, (_, i) => ({
      key: `entity-${i % 37}`,
      value: `${i}`,
    }));
    await producer.send({ topic, messages: sent });
    await producer.disconnect();

    const received = await readTopic(kafka, { topic, expected: 1000, settleMs: 500 });
    expect(received).toHaveLength(1000);
    expect(new Set(received.map((r) => r.value))).toEqual(new Set(sent.map((m) => m.value)));
    expect(new Set(received.map((r) => r.partition))).toEqual(new Set([0, 1, 2]));
    // The default partitioner hashes the key: one key, one partition, order kept within it.
    const partitionsByKey = new Map<string, Set<number>>();
    for (const record of received) {
      const partitions = partitionsByKey.get(record.key!) ?? new Set<number>();
      partitions.add(record.partition);
      partitionsByKey.set(record.key!, partitions);
    }
    expect([...partitionsByKey.values()].every((p) => p.size === 1)).toBe(true);
    for (const key of partitionsByKey.keys()) {
      const values = received.filter((r) => r.key === key).map((r) => Number(r.value));
      expect(values).toEqual([...values].sort((a, b) => a - b));
    }
  });

  it('commits a transaction with sendOffsets and aborts another, as read_committed readers see it', async () => {
    const input = uniqueName('smoke.txn-in');
    const output = uniqueName('smoke.txn-out');
    const groupId = uniqueName('smoke.txn-group');
    await ensureTopics(admin, [
      { topic: input, numPartitions: 1 },
      { topic: output, numPartitions: 1 },
    ]);

    const producer = kafka.producer({
      transactionalId: uniqueName('smoke.txn'),
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();

    const committed = await producer.transaction();
    await committed.send({ topic: output, messages: [{ key: 'k', value: 'committed' }] });
    await committed.sendOffsets({
      consumerGroupId: groupId,
      topics: [{ topic: input, partitions: [{ partition: 0, offset: '42' }] }],
    });
    await committed.commit();

    const aborted = await producer.transaction();
    await aborted.send({ topic: output, messages: [{ key: 'k', value: 'aborted' }] });
    await aborted.sendOffsets({
      consumerGroupId: groupId,
      topics: [{ topic: input, partitions: [{ partition: 0, offset: '99' }] }],
    });
    await aborted.abort();
    await producer.disconnect();

    const readCommitted = await readTopic(kafka, { topic: output, expected: 1, settleMs: 1000 });
    expect(readCommitted.map((r) => r.value)).toEqual(['committed']);

    // The aborted record is in the log: a read_uncommitted reader sees both.
    const readUncommitted = await readTopic(kafka, {
      topic: output,
      expected: 2,
      readUncommitted: true,
    });
    expect(readUncommitted.map((r) => r.value)).toEqual(['committed', 'aborted']);

    // Only the committed transaction's offset reached the group.
    const offsets = await admin.fetchOffsets({ groupId, topics: [input] });
    expect(offsets[0]!.partitions).toEqual([
      expect.objectContaining({ partition: 0, offset: '42' }),
    ]);
  });
  it('keeps a client working after a topic it used is deleted (kafkajs patch deleted-target-topics)', async () => {
    const doomed = uniqueName('smoke.doomed');
    const kept = uniqueName('smoke.kept');
    await ensureTopics(admin, [
      { topic: doomed, numPartitions: 1 },
      { topic: kept, numPartitions: 1 },
    ]);
    // A client that wrote to the topic and described it has it among its metadata's topics.
    const client = createKafka({ clientId: 'sluice-deleted-topic', logLevel: logLevel.NOTHING });
    const producer = client.producer();
    const describer = client.admin();
    await producer.connect();
    await describer.connect();
    try {
      await producer.send({ topic: doomed, messages: [{ value: 'before' }] });
      await describer.fetchTopicOffsets(doomed);
      await admin.deleteTopics({ topics: [doomed] });
      // Stock kafkajs failed both from here on with UNKNOWN_TOPIC_OR_PARTITION, whatever the topic.
      await producer.send({ topic: kept, messages: [{ value: 'after' }] });
      expect((await describer.fetchTopicOffsets(kept))[0]).toMatchObject({ high: '1' });
      // A topic that does not exist is still the caller's error.
      await expect(describer.fetchTopicOffsets(uniqueName('smoke.never'))).rejects.toThrow(
        'This server does not host this topic-partition',
      );
    } finally {
      await producer.disconnect();
      await describer.disconnect();
    }
  });
});
