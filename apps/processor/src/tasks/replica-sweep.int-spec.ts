// exactly_once_v2 on the real broker: a transaction of the replica's left open on a partition
// after its producer is opened anew, as a single-node broker going down leaves one (README,
// Known issues). A client cannot make a coordinator drop a marker, so the open transaction here
// is a stand-in's (another transactional id, which the reopening leaves alone), and the
// replica's journal is told that the replica wrote it: what the replica then does is the same
// as for its own (dropped-marker.int-spec.ts does this for a task's producer). The same check
// runs after every commit the coordinator acknowledges, before the next transaction writes.
import { logLevel, Partitioners } from 'kafkajs';
import type { Admin, Kafka, Producer } from 'kafkajs';
import pino from 'pino';

import {
  createKafka,
  endWithMarker,
  ensureTopics,
  fetchPartitionEnds,
  fetchStableOffset,
  findOpenTransactions,
  findPendingOffsetCommits,
  transactionOutcome,
} from '@sluice/kafka';
import { uniqueName } from '@sluice/kafka/testing';

import { HangingCommitError } from './open-transactions';
import { RecordCollector } from './record-collector';
import { settleOwnTransactions } from './replica-sweep';
import { ReplicaTransaction } from './replica-transaction';
import { partitionKey, TransactionJournal } from './transaction-journal';

const logger = pino({ level: 'silent' });

describe("the replica's own transaction left open after its producer is opened anew", () => {
  let kafka: Kafka;
  let admin: Admin;
  const producers: Producer[] = [];
  const replicas: ReplicaTransaction[] = [];

  beforeAll(async () => {
    kafka = createKafka({ clientId: 'replica-sweep', logLevel: logLevel.NOTHING });
    admin = kafka.admin();
    await admin.connect();
  });

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.close()));
    await Promise.all(producers.map((producer) => producer.disconnect()));
    await admin.disconnect();
  });

  /** A transactional producer of another id (closed after the tests), with its open transaction. */
  async function standInTransaction(name: string) {
    const standIn = kafka.producer({
      transactionalId: uniqueName(name),
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    producers.push(standIn);
    await standIn.connect();
    return { standIn, open: await standIn.transaction() };
  }

  /** A topic with three records in a stand-in's transaction that stays open. */
  async function openSpan() {
    const topic = uniqueName('replica-sweep');
    await ensureTopics(admin, [{ topic, numPartitions: 1 }]);
    const { open } = await standInTransaction('replica-sweep.stand-in');
    const [written] = await open.sendBatch({
      topicMessages: [{ topic, messages: ['a', 'b', 'c'].map((value) => ({ value })) }],
    });
    const start = written!.baseOffset!;
    const [end] = await fetchPartitionEnds(admin, topic);
    expect(end!.stable).toBe(start); // every read_committed reader stops there
    return { topic, start, key: partitionKey(topic, 0), finish: () => open.abort() };
  }

  /**
   * A stand-in's transaction, left open, that wrote three records to a topic and committed
   * offset `offset` of a source partition for a group: as a replica's transaction whose markers
   * the coordinator dropped on the group's offsets partition (and maybe elsewhere). The sweep is
   * given the stand-in's producer id for the replica's own; `journaled` tells a journal the
   * stand-in's transaction was the replica's, begun at `epoch` (its own by default).
   */
  async function openOffsetCommit(offset: string) {
    const topic = uniqueName('replica-sweep.out');
    const second = uniqueName('replica-sweep.changelog');
    const source = uniqueName('replica-sweep.source');
    const group = uniqueName('replica-sweep.group');
    await ensureTopics(admin, [
      { topic, numPartitions: 1 },
      { topic: second, numPartitions: 1 },
      { topic: source, numPartitions: 1 },
    ]);
    const { standIn, open } = await standInTransaction('replica-sweep.offsets-stand-in');
    const [written, writtenSecond] = await open.sendBatch({
      topicMessages: [topic, second].map((to) => ({
        topic: to,
        messages: ['a', 'b', 'c'].map((value) => ({ value })),
      })),
    });
    await open.sendOffsets({
      consumerGroupId: group,
      topics: [{ topic: source, partitions: [{ partition: 0, offset }] }],
    });
    const identity = standIn.transactionalIdentity()!;
    const start = written!.baseOffset!;
    const secondStart = writtenSecond!.baseOffset!;
    const journaled = (journal: TransactionJournal, epoch = identity.producerEpoch) => {
      journal.begin(epoch);
      journal.wrote([
        { topicName: topic, partition: 0, baseOffset: start },
        { topicName: second, partition: 0, baseOffset: secondStart },
      ]);
      journal.committing(undefined, [
        { groupId: group, topics: [{ topic: source, partitions: [0] }] },
      ]);
      return journal;
    };
    const sweep = (journal: TransactionJournal) =>
      settleOwnTransactions({
        admin,
        journal,
        id: 'stand-in',
        producerId: identity.producerId,
        logger,
      });
    const stable = () => fetchStableOffset(admin, group, source, 0, undefined, false);
    return {
      topic,
      start,
      second,
      secondStart,
      epoch: identity.producerEpoch,
      journaled,
      sweep,
      stable,
      pendingOfItsId: () => findPendingOffsetCommits(admin, identity.producerId, [group]),
      finish: () => open.abort(),
    };
  }

  function replicaWith(journal: TransactionJournal): ReplicaTransaction {
    const replica = new ReplicaTransaction({
      kafka,
      admin,
      id: uniqueName('replica-sweep.replica'),
      logger,
      transactionTimeoutMs: 10_000,
      journal,
    });
    replicas.push(replica);
    return replica;
  }

  it('commits it when it is the transaction whose commit was acknowledged', async () => {
    const { topic, start, key, finish } = await openSpan();
    const journal = new TransactionJournal();
    journal.begin(0);
    journal.wrote([{ topicName: topic, partition: 0, baseOffset: start }]);
    journal.committing(undefined);
    journal.acknowledged();

    await replicaWith(journal).ready();
    expect(await findOpenTransactions(admin, [{ topic, partitions: [0] }])).toEqual([]);
    expect(await transactionOutcome(admin, { topic, partition: 0, startOffset: start })).toBe(
      'commit',
    );
    expect(journal.lastAcknowledged?.firstOffsets.get(key)).toBe(start);
    await finish(); // its own coordinator's marker, later, changes nothing read
  }, 60_000);

  it('aborts it when it is a later transaction whose commit was never asked for', async () => {
    const { topic, start, finish } = await openSpan();
    const journal = new TransactionJournal();
    journal.begin(0);
    journal.wrote([{ topicName: topic, partition: 0, baseOffset: start }]);

    await replicaWith(journal).ready();
    const [end] = await fetchPartitionEnds(admin, topic);
    expect(end!.stable).toBe(end!.high);
    expect(await transactionOutcome(admin, { topic, partition: 0, startOffset: start })).toBe(
      'abort',
    );
    await finish();
  }, 60_000);

  it('refuses to go on when an ABORT ended the acknowledged transaction there', async () => {
    // The next transaction wrote into the acknowledged one's open span and the reopening
    // aborted it: that ABORT ended the acknowledged one's records too.
    const { topic, start, key, finish } = await openSpan();
    await finish();
    const journal = new TransactionJournal();
    journal.begin(0);
    journal.wrote([{ topicName: topic, partition: 0, baseOffset: start }]);
    journal.committing(undefined);
    journal.acknowledged();

    const refused = replicaWith(journal).ready();
    await expect(refused).rejects.toThrow(HangingCommitError);
    await expect(refused).rejects.toThrow(`on ${key} an ABORT`);
  }, 60_000);

  it("commits the acknowledged transaction's offset commit left pending, and its span", async () => {
    const { topic, start, journaled, sweep, stable, pendingOfItsId, finish } =
      await openOffsetCommit('7');
    await expect(stable()).rejects.toMatchObject({ type: 'UNSTABLE_OFFSET_COMMIT' });
    const journal = journaled(new TransactionJournal());
    journal.acknowledged();

    await sweep(journal);
    expect((await stable())?.offset).toBe('7');
    expect(await pendingOfItsId()).toEqual([]);
    expect(await transactionOutcome(admin, { topic, partition: 0, startOffset: start })).toBe(
      'commit',
    );
    await finish(); // its own coordinator's marker, later, changes nothing read
    expect((await stable())?.offset).toBe('7');
  }, 60_000);

  it("commits a begun transaction's offset commit left pending when its markers say COMMIT, then holds it acknowledged", async () => {
    const { topic, start, journaled, sweep, stable, finish } = await openOffsetCommit('9');
    const [span] = await findOpenTransactions(admin, [{ topic, partitions: [0] }]);
    await endWithMarker(admin, span!, true); // this marker arrived; the offsets' was dropped
    const journal = journaled(new TransactionJournal());

    await sweep(journal);
    expect((await stable())?.offset).toBe('9');
    expect(journal.unacknowledged).toBeUndefined();
    expect(journal.lastAcknowledged?.firstOffsets.get(partitionKey(topic, 0))).toBe(start);
    await finish();
  }, 60_000);

  it("aborts a begun transaction's offset commit left pending when its markers say ABORT", async () => {
    const { topic, journaled, sweep, stable, pendingOfItsId, finish } = await openOffsetCommit('9');
    const [span] = await findOpenTransactions(admin, [{ topic, partitions: [0] }]);
    await endWithMarker(admin, span!, false);
    const journal = journaled(new TransactionJournal());

    await sweep(journal);
    expect(await stable()).toBeUndefined(); // nothing committed, and nothing pending
    expect(await pendingOfItsId()).toEqual([]);
    expect(journal.unacknowledged?.abortedAfterFence).toBe(true);
    await finish();
  }, 60_000);

  it("ends a begun transaction's span left open as its markers elsewhere say, its offset commit not pending", async () => {
    // The commit's answer was lost; its coordinator's markers reached the offsets partition and
    // one data partition, not the other.
    for (const committed of [true, false]) {
      const { topic, second, secondStart, journaled, sweep, stable, pendingOfItsId, finish } =
        await openOffsetCommit('9');
      const [span] = await findOpenTransactions(admin, [{ topic, partitions: [0] }]);
      await endWithMarker(admin, span!, committed);
      const [offsets] = await pendingOfItsId();
      await endWithMarker(admin, offsets!, committed);
      const journal = journaled(new TransactionJournal());

      await sweep(journal);
      expect(await findOpenTransactions(admin, [{ topic: second, partitions: [0] }])).toEqual([]);
      expect(
        await transactionOutcome(admin, { topic: second, partition: 0, startOffset: secondStart }),
      ).toBe(committed ? 'commit' : 'abort');
      expect((await stable())?.offset).toBe(committed ? '9' : undefined);
      await finish();
    }
  }, 60_000);

  it("refuses to end an offset commit left pending at another epoch than the journal's transaction", async () => {
    // Not the transaction the journal holds (another owner's since, or one before it): its
    // fate cannot be read from the journal's markers.
    const { epoch, journaled, sweep, stable, finish } = await openOffsetCommit('9');
    const journal = journaled(new TransactionJournal(), epoch + 1);
    journal.acknowledged();
    const refused = sweep(journal);
    await expect(refused).rejects.toThrow(HangingCommitError);
    await expect(refused).rejects.toThrow(`written at producer epoch ${epoch}, not ${epoch + 1}`);
    await expect(stable()).rejects.toMatchObject({ type: 'UNSTABLE_OFFSET_COMMIT' });
    await finish();
  }, 60_000);

  it('after each acknowledged commit, ends its span still open before the next transaction writes there', async () => {
    const { topic, start, finish } = await openSpan();
    // The commit about to be acknowledged wrote there and its marker was dropped: the journal
    // is told so as the acknowledgement comes.
    class DroppedMarkerJournal extends TransactionJournal {
      override acknowledged(): void {
        this.unacknowledged?.firstOffsets.set(partitionKey(topic, 0), start);
        super.acknowledged();
      }
    }
    const replica = replicaWith(new DroppedMarkerJournal());
    const share = replica.forTask('t', () => undefined);
    await share.fence();
    const record = (value: string) =>
      RecordCollector.of({ topic, messages: [{ value, partition: 0 }] });
    share.send(record('committed'));
    let committed = false;
    share.commit(undefined, () => {
      committed = true;
      // Sent once the commit is acknowledged: queued behind the check that follows it.
      share.send(record('next transaction'));
    });
    await share.idle();
    await share.idle(); // the send queued meanwhile
    expect(share.error).toBeUndefined();
    expect(committed).toBe(true);

    expect(await transactionOutcome(admin, { topic, partition: 0, startOffset: start })).toBe(
      'commit',
    );
    const { records } = await admin.fetchPartitionRecords({ topic, partition: 0, offset: start });
    const standInId = records[0]!.producerId;
    const marker = records.find((r) => r.isControlRecord && r.producerId === standInId)!;
    const next = records.filter((r) => !r.isControlRecord && r.producerId !== standInId).at(-1)!;
    expect(BigInt(next.offset)).toBeGreaterThan(BigInt(marker.offset));
    // The next transaction's record is open; nothing before it is.
    const [end] = await fetchPartitionEnds(admin, topic);
    expect(end!.stable).toBe(next.offset);
    await finish();
  }, 60_000);

  it("after a commit, leaves another producer's pending offset commit of the group alone", async () => {
    // The group answers that a commit of the partition is pending (require_stable); its
    // offsets partition shows it is not this replica's, so no marker is written for it.
    const group = uniqueName('replica-sweep.group');
    const source = uniqueName('replica-sweep.source');
    await ensureTopics(admin, [{ topic: source, numPartitions: 1 }]);
    const { open: pending } = await standInTransaction('replica-sweep.offsets-stand-in');
    await pending.sendOffsets({
      consumerGroupId: group,
      topics: [{ topic: source, partitions: [{ partition: 0, offset: '7' }] }],
    });

    const replica = replicaWith(new TransactionJournal());
    const share = replica.forTask('t', () => undefined);
    await share.fence();
    let committed = false;
    share.commit(
      { groupId: group, topic: source, partition: 0, offset: '5', metadata: undefined },
      () => (committed = true),
    );
    await share.idle();
    expect(share.error).toBeUndefined();
    expect(committed).toBe(true);
    expect(
      await fetchStableOffset(admin, group, source, 0, undefined, false).catch((e) => e),
    ).toMatchObject({
      type: 'UNSTABLE_OFFSET_COMMIT',
    });
    await pending.abort();
    expect((await fetchStableOffset(admin, group, source, 0))?.offset).toBe('5');
  }, 60_000);
});
