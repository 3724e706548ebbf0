// The fence that exactly-once v2 (KIP-447: one transactional producer per replica instead of one
// per input partition) rests on, asked through the patched kafkajs: a transactional offset
// commit that names the consumer's generation and member id (TxnOffsetCommit v3) is refused by
// the group coordinator once a rebalance has begun a later generation, or for a member it does
// not know; the refused transaction aborts and the committed offset stays what it was. A member
// can still commit under its generation in `beforeRejoin`, which kafkajs awaits (patched) when a
// rebalance starts, before the member joins again.
import { logLevel, Partitioners } from 'kafkajs';
import type { Admin, Consumer, ConsumerGroupMetadata, Kafka, Producer } from 'kafkajs';

import { createKafka, ensureTopics, fetchStableOffset } from './index';
import { uniqueName } from './testing';

describe('a transactional offset commit that names its consumer generation', () => {
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  const consumers: Consumer[] = [];
  const source = uniqueName('fenced.source');
  const out = uniqueName('fenced.out');
  const group = uniqueName('fenced.group');
  const txnOffsetCommitVersions: number[] = [];

  beforeAll(async () => {
    kafka = createKafka({ clientId: 'sluice-fenced-offsets-test', logLevel: logLevel.NOTHING });
    admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [
      { topic: source, numPartitions: 2 },
      { topic: out, numPartitions: 1 },
    ]);
    producer = kafka.producer({
      transactionalId: uniqueName('fenced.txn'),
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    producer.on(producer.events.REQUEST, ({ payload }) => {
      if (payload.apiName === 'TxnOffsetCommit') txnOffsetCommitVersions.push(payload.apiVersion);
    });
    await producer.connect();
    // Records up to every offset committed below: a member that fetched from a committed offset
    // past the end would be answered OFFSET_OUT_OF_RANGE, and kafkajs would commit its default.
    await producer.send({
      topic: source,
      messages: Array.from({ length: 10 }, (_, n) => ({ partition: 0, value: String(n) })),
    });
  });

  afterAll(async () => {
    await Promise.all(consumers.map((consumer) => consumer.disconnect()));
    await producer.disconnect();
    await admin.disconnect();
  });

  /**
   * A member of the group; resolves with each generation it joins, as kafkajs reports it.
   * `beforeRejoin` runs when a rebalance starts, before the member joins the next generation.
   */
  async function member(
    beforeRejoin?: (joins: ConsumerGroupMetadata[]) => Promise<void>,
  ): Promise<{ joins: ConsumerGroupMetadata[] }> {
    const consumer = kafka.consumer({
      groupId: group,
      sessionTimeout: 6000,
      heartbeatInterval: 100,
      maxWaitTimeInMs: 100,
    });
    consumers.push(consumer);
    const joins: ConsumerGroupMetadata[] = [];
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) =>
      joins.push({ generationId: payload.generationId, memberId: payload.memberId }),
    );
    await consumer.connect();
    await consumer.subscribe({ topic: source, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async () => undefined,
      beforeRejoin: beforeRejoin && (() => beforeRejoin(joins)),
    });
    return { joins };
  }

  async function until(condition: () => boolean, what: string): Promise<void> {
    // Under the test's own timeout, so that a slow join says what it waited for.
    const deadline = Date.now() + 20_000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The committed offset once no transaction can change it (an abort's markers are written). */
  async function committed(): Promise<string | undefined> {
    return (await fetchStableOffset(admin, group, source, 0))?.offset;
  }

  /** A transaction with one record and `offset` for partition 0, as `metadata`'s member. */
  async function commitAs(metadata: ConsumerGroupMetadata, offset: string): Promise<void> {
    const transaction = await producer.transaction();
    try {
      await transaction.send({ topic: out, messages: [{ key: 'k', value: offset }] });
      await transaction.sendOffsets({
        consumerGroupId: group,
        consumerGroupMetadata: metadata,
        topics: [{ topic: source, partitions: [{ partition: 0, offset }] }],
      });
      await transaction.commit();
    } catch (error) {
      await transaction.abort();
      throw error;
    }
  }

  it('commits for the current generation, also in beforeRejoin, and is refused for an earlier one or an unknown member', async () => {
    // What the first member's beforeRejoin saw: the generations it had joined, and its commit.
    let hook: { joinedBefore: number; commit: Promise<unknown> } | undefined;
    const first = await member(async (joins) => {
      const commit = commitAs(joins.at(-1)!, '6').then(
        () => 'committed',
        (error: unknown) => error,
      );
      hook = { joinedBefore: joins.length, commit };
      await commit;
    });
    await until(() => first.joins.length === 1, 'the first member to join');
    const before = first.joins[0]!;
    expect(before.generationId).toBeGreaterThan(0);

    await commitAs(before, '5');
    expect(await committed()).toBe('5');
    // Every attempt (a coordinator still loading the new group is asked again) went out as v3.
    expect(txnOffsetCommitVersions.length).toBeGreaterThan(0);
    expect(new Set(txnOffsetCommitVersions)).toEqual(new Set([3]));

    // A second member: the coordinator begins a later generation, which both join.
    const second = await member();
    await until(
      () =>
        second.joins.length > 0 &&
        first.joins.at(-1)!.generationId === second.joins.at(-1)!.generationId,
      'both members to join one generation',
    );
    const now = first.joins.at(-1)!;
    expect(now.generationId).toBeGreaterThan(before.generationId);
    // The hook ran before the first member joined again, and the coordinator still took a
    // commit under the generation that was ending: kafkajs waited for it.
    expect(hook?.joinedBefore).toBe(1);
    await expect(hook?.commit).resolves.toBe('committed');
    expect(await committed()).toBe('6');

    await expect(commitAs(before, '7')).rejects.toMatchObject({ type: 'ILLEGAL_GENERATION' });
    expect(await committed()).toBe('6');
    await expect(
      commitAs({ generationId: now.generationId, memberId: 'not-a-member' }, '8'),
    ).rejects.toMatchObject({ type: 'UNKNOWN_MEMBER_ID' });
    expect(await committed()).toBe('6');

    await commitAs(now, '9');
    expect(await committed()).toBe('9');
  });
});
