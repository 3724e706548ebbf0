// Exactly-once v2 (PROCESSING_GUARANTEE=exactly_once_v2, docs/design.md §5; Kafka Streams' one
// producer per stream thread): the tasks of one of the replica's transactions (replica-
// transactions.ts) write into it with one producer, and one commit carries every one's offset.
// Its id `<group>.replica/<PROCESSOR_ID>/<n>` fences the replica's predecessor at once when it
// restarts; another replica's tasks are kept out by the group instead (each offset commit names
// the generation, and the coordinator refuses an ended one), and a dead replica's open
// transaction ends at the transaction timeout, which a task taking over waits out on the
// broker's answers (the committed offset read with require_stable, the changelog read to its
// stable end).
//
// A commit takes every running task's position at one instant: as the commit begins, each task
// is asked, in one synchronous pass, to hand over what it has handled, and the transaction is
// sealed there. Tasks change their state only between awaits, and a task whose step threw
// halfway hands nothing over (task.ts), so no task is caught halfway through a batch; what any
// task sends after the pass goes into the next transaction. One failure, of the
// producer or of any task with writes in the transaction, aborts the transaction for all: every
// task attached to it is then replaced, and rebuilds from what was committed.
import type { Admin, Kafka, PartitionOffset, Producer, Transaction } from 'kafkajs';
import type { Logger } from 'pino';

import {
  endWithMarker,
  KAFKAJS_BROKER_RETRY,
  KeyPartitioner,
  onTopics,
  transactionBegunBy,
  transactionEnded,
  withDenialsNamed,
} from '@sluice/kafka';
import type { AskedFor } from '@sluice/kafka';

import { endOpenTransactions, HangingCommitError } from './open-transactions';
import { RecordCollector } from './record-collector';
import { ownPendingOffsetCommits, settleOwnTransactions } from './replica-sweep';
import { TaskMigratedError } from './task-errors';
import type { OffsetToCommit } from './task-producer';
import type { TaskTransactions } from './task-transactions';
import { TransactionJournal } from './transaction-journal';
import type { GroupOffsets } from './transaction-journal';

/** About what one task's batch sends: the measure of `backlog` for records waiting. */
const RECORDS_PER_CALL = 2_000;

export function replicaTransactionalId(group: string, processorId: string, index: number): string {
  // `/` is in no topic name, so this is never a task's id (`<group>.<topic>.<partition>`).
  return `${group}.replica/${processorId}/${index}`;
}

/**
 * The replica's transaction was aborted for another task's failure (or a task that left writes
 * in it): nothing is wrong with this task's data, which it rebuilds from what was committed.
 */
export class TransactionAbortedError extends TaskMigratedError {
  override readonly name = 'TransactionAbortedError';
}

/** What one transaction gathers until its commit goes out. */
class OpenTransaction {
  readonly records = new RecordCollector();
  readonly offsets: OffsetToCommit[] = [];
  readonly onCommitted: Array<() => void> = [];
  /** A call that sends `records` is queued and has not run yet. */
  sendQueued = false;
  /** A commit is queued and has not begun: it gathers the tasks and seals this as it begins. */
  commitQueued = false;
}

export interface ReplicaTransactionOptions {
  kafka: Kafka;
  /** For ending the replica's own transactions that a broker left without a marker. */
  admin: Admin;
  id: string;
  logger: Logger;
  /** The coordinator aborts a transaction open longer: how long a dead replica's holds others. */
  transactionTimeoutMs: number;
  onCommitSeconds?: (seconds: number) => void;
  /** What the replica's transactions wrote, from the broker's answers (a test may set it). */
  journal?: TransactionJournal;
}

export class ReplicaTransaction {
  private producer: Producer | undefined;
  private transaction: Transaction | undefined;
  private calls: Promise<void> = Promise.resolve();
  private queued = 0;
  private open = new OpenTransaction();
  private failure: { error: unknown; by: ReplicaTaskProducer | undefined } | undefined;
  /** Counts producers: a task attached under an earlier one lost its writes to an abort. */
  private producers = 0;
  private reopening: Promise<void> | undefined;
  private readonly attached = new Set<ReplicaTaskProducer>();
  private gathering = false;
  private readonly journal: TransactionJournal;
  /** Whether the journal has begun the current transaction's entry. */
  private journaled = false;

  constructor(private readonly options: ReplicaTransactionOptions) {
    this.journal = options.journal ?? new TransactionJournal();
  }

  get id(): string {
    return this.options.id;
  }

  /**
   * Calls queued and not finished, and every RECORDS_PER_CALL records waiting to be sent
   * counted as one more: sends waiting together go out as one call, so the calls alone would
   * not slow the tasks down when the broker falls behind.
   */
  get backlog(): number {
    return this.queued + Math.floor(this.open.records.size / RECORDS_PER_CALL);
  }

  /** The share of one task; `prepareCommit` hands over what the task handled (synchronously). */
  forTask(key: string, prepareCommit: () => void): ReplicaTaskProducer {
    return new ReplicaTaskProducer(this, key, prepareCommit);
  }

  /**
   * The producer, ready for tasks to write with: opened on first use, and opened anew after a
   * failure, which aborts what the failed one left open (InitProducerId answers once the
   * coordinator has aborted it, and fences the earlier producer of this id, this replica's
   * predecessor's too). One reopening serves every task that asks meanwhile.
   */
  async ready(): Promise<number> {
    while (this.producer === undefined || this.failure !== undefined) {
      this.reopening ??= this.reopen().finally(() => {
        this.reopening = undefined;
      });
      await this.reopening;
    }
    return this.producers;
  }

  /** Why `share`'s writes cannot go on, if they cannot. */
  errorFor(share: ReplicaTaskProducer, attachedTo: number): unknown {
    if (attachedTo !== this.producers)
      return new TransactionAbortedError(
        `${share.key}: the replica's transaction was aborted since the task last resumed`,
      );
    if (this.failure === undefined) return undefined;
    const { error, by } = this.failure;
    if (by === undefined || by === share) return error;
    return new TransactionAbortedError(
      `${share.key}: the replica's transaction was aborted for ${by.key} (${String(
        (error as Error | undefined)?.message ?? error,
      )})`,
    );
  }

  /** Aborts the open transaction for every task: `by`'s writes in it cannot commit. */
  fail(error: unknown, by?: ReplicaTaskProducer): void {
    if (this.failure !== undefined) return;
    this.failure = { error, by };
    this.options.logger.warn(
      { err: error, task: by?.key },
      "the replica's transaction is aborted; every task in it is replaced",
    );
  }

  attach(share: ReplicaTaskProducer): void {
    this.attached.add(share);
  }

  detach(share: ReplicaTaskProducer): void {
    this.attached.delete(share);
  }

  /** Moves a task's records into the open transaction; sends waiting together go out as one. */
  send(records: RecordCollector): void {
    const open = this.open;
    open.records.takeAll(records);
    if (open.sendQueued) return;
    open.sendQueued = true;
    this.call(() => this.sendRecords(open));
  }

  /**
   * Commits every task at once: the offset of the asking task (handed over already) goes into
   * the open transaction, and a commit is queued unless one is queued already. The commit
   * gathers every attached task's hand-over (its records, its offset) and seals the transaction
   * as it begins, not when asked: a commit asked for while another is under way then carries
   * everything handled meanwhile, so commits never queue up behind each other (each queued one
   * would hold the tasks back through `backlog`, and stall them for all the commits ahead).
   */
  commitAll(offset: OffsetToCommit | undefined, onCommitted: () => void): void {
    const open = this.open;
    if (offset) open.offsets.push(offset);
    open.onCommitted.push(onCommitted);
    if (this.gathering || open.commitQueued) return;
    open.commitQueued = true;
    this.call(async () => {
      // Reopened meanwhile: what was open went with the abort, and each task resumes.
      if (this.open !== open) return;
      // The commit sends what the hand-overs add: a send call queued for them would find nothing.
      open.sendQueued = true;
      if (!this.seal()) return;
      const offsets = latestPerPartition(open.offsets);
      await withDenialsNamed(this.asked(offsetsAsked(offsets)), () => this.commit(open, offsets));
    });
  }

  private async commit(open: OpenTransaction, offsets: OffsetToCommit[]): Promise<void> {
    const started = process.hrtime.bigint();
    await this.sendRecords(open);
    const transaction = await this.current();
    // Noted before the offsets go out: from then on the outcome is the coordinator's.
    this.journal.committing(undefined, byGroup(offsets));
    for (const ofMember of byMember(offsets)) {
      const [{ groupId, member }] = ofMember as [OffsetToCommit];
      await transaction.sendOffsets({
        consumerGroupId: groupId,
        ...(member && { consumerGroupMetadata: member }),
        topics: byTopic(ofMember),
      });
    }
    await transaction.commit();
    this.transaction = undefined;
    this.journal.acknowledged();
    this.journaled = false;
    this.options.onCommitSeconds?.(Number(process.hrtime.bigint() - started) / 1e9);
    for (const committed of open.onCommitted) committed();
    await this.closeCommittedSpans(offsets);
  }

  /**
   * Each attached task hands over what it handled, and the open transaction is sealed: a new
   * one opens for what comes next. False (and the transaction fails) if a task cannot hand over,
   * or keeps writes in it that its offset does not cover.
   */
  private seal(): boolean {
    this.gathering = true;
    try {
      for (const share of this.attached) {
        try {
          share.prepareCommit();
        } catch (error) {
          // What it handed over so far is in the transaction: none of it may commit now.
          this.fail(error, share);
          return false;
        }
      }
    } finally {
      this.gathering = false;
    }
    // A task that did not hand over (it failed in a step, or stopped running) with writes in
    // the transaction: they would commit without the offset that covers them.
    for (const share of this.attached) {
      if (share.hasUncommittedWrites) {
        this.fail(
          new TransactionAbortedError(`${share.key} has writes its offset does not cover`),
          share,
        );
        return false;
      }
    }
    this.open = new OpenTransaction();
    return true;
  }

  /** Resolves once every call queued so far has finished. */
  idle(): Promise<void> {
    return this.calls;
  }

  /** The replica stops: what is open is aborted. */
  async close(): Promise<void> {
    await this.idle();
    const transaction = this.transaction;
    this.transaction = undefined;
    if (transaction?.isActive()) await transaction.abort().catch(() => undefined);
    await this.disconnect();
  }

  private async reopen(): Promise<void> {
    await this.idle();
    await this.disconnect();
    const { kafka, id, transactionTimeoutMs } = this.options;
    const producer = kafka.producer({
      transactionalId: id,
      transactionTimeout: transactionTimeoutMs,
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: KeyPartitioner,
      retry: KAFKAJS_BROKER_RETRY,
    });
    try {
      await withDenialsNamed(this.asked(), async () => {
        await producer.connect();
        // InitProducerId: the answer comes once every earlier transaction of this id is settled.
        this.transaction = await producer.transaction();
      });
      await settleOwnTransactions({
        admin: this.options.admin,
        journal: this.journal,
        id,
        producerId: producer.transactionalIdentity()?.producerId,
        logger: this.options.logger,
      });
    } catch (error) {
      await producer.disconnect().catch(() => undefined);
      throw error;
    }
    this.producer = producer;
    this.journaled = false;
    this.open = new OpenTransaction();
    this.producers += 1;
    // Every task attached before lost its writes with the abort: it joins again as it resumes.
    this.attached.clear();
    this.failure = undefined;
  }

  /**
   * Before the next transaction writes anything, makes sure the commit just acknowledged closed
   * its records on every partition it wrote, and its offset commits. A marker its coordinator
   * dropped (a broker going down: README, Known issues) leaves that span open; the next
   * transaction's records or offsets there would join it, and an abort of that one would end
   * the acknowledged ones too, which no marker mends. Asked of the broker, not waited for: the
   * coordinator's state of this id until its markers are no longer under way; then the open
   * transactions of each partition the commit wrote, where one the journal places at the
   * commit's start is ended with COMMIT, as it was decided; then each group, whether an offset
   * commit is still pending for the commit's partitions (endOffsetCommitsLeftOpen).
   */
  private async closeCommittedSpans(offsets: OffsetToCommit[]): Promise<void> {
    if (this.journal.writtenPartitions().length === 0 && offsets.length === 0) return;
    const { admin, id, logger } = this.options;
    await transactionEnded(admin, id);
    await endOpenTransactions({
      admin,
      journal: this.journal,
      committed: undefined,
      taskKey: id,
      logger,
      checked: 'after its commit',
    });
    await this.endOffsetCommitsLeftOpen(offsets);
  }

  /**
   * An offset commit of the offsets still pending (`ownPendingOffsetCommits`: asked of the
   * group, then of its offsets partition, then the record where it begins). One of this
   * producer that began in its current epoch is the commit just acknowledged, since an epoch
   * commits every transaction it does not fail, and is ended with COMMIT. One begun in an
   * earlier epoch cannot be told from an aborted one here: the replica refuses to go on,
   * naming it.
   */
  private async endOffsetCommitsLeftOpen(offsets: OffsetToCommit[]): Promise<void> {
    const identity = this.producer?.transactionalIdentity();
    if (identity === undefined) return;
    const { admin, id, logger } = this.options;
    for (const commit of await ownPendingOffsetCommits(
      admin,
      identity.producerId,
      byGroup(offsets),
    )) {
      const begun = await transactionBegunBy(admin, commit);
      const where = `${commit.topic}/${commit.partition} from offset ${commit.startOffset}`;
      if (begun?.producerEpoch !== identity.producerEpoch)
        throw new HangingCommitError(
          `${id}: an offset commit of this replica is pending on ${where}, begun at producer epoch ${begun?.producerEpoch ?? 'unknown'}, not the current ${identity.producerEpoch}: whether it was committed cannot be told here. Settle it with kafka-transactions (find-hanging, then abort or complete)`,
        );
      logger.warn(
        { group: commit.groupId, partition: commit.partition, start_offset: commit.startOffset },
        "the replica's acknowledged offset commit is still pending on the offsets partition (its coordinator never wrote the marker there); ending it with COMMIT",
      );
      await endWithMarker(admin, commit, true);
    }
  }

  private async disconnect(): Promise<void> {
    const producer = this.producer;
    this.producer = undefined;
    this.transaction = undefined;
    await producer?.disconnect().catch(() => undefined);
  }

  private async sendRecords(open: OpenTransaction): Promise<void> {
    open.sendQueued = false;
    if (open.records.isEmpty) return;
    const producer = this.producer;
    // Measured per partition where the producer knows the topic's, so requests carry more.
    const requests = open.records.drain({
      partitionsOf: (topic) => producer?.partitionCount(topic),
    });
    const transaction = await this.current();
    await withDenialsNamed(
      this.asked({ topic: onTopics('Write', [...new Set(requests.flat().map((r) => r.topic))]) }),
      async () => {
        for (const topicMessages of requests)
          this.journal.wrote(await transaction.sendBatch({ topicMessages }));
      },
    );
  }

  private asked(more: AskedFor = {}): AskedFor {
    return { 'transactional id': `Write on transactional id ${this.options.id}`, ...more };
  }

  private call(work: () => Promise<void>, asked?: AskedFor): void {
    this.queued += 1;
    this.calls = this.calls.then(async () => {
      try {
        if (this.failure === undefined) await withDenialsNamed(this.asked(asked), work);
      } catch (error) {
        this.fail(error);
      } finally {
        this.queued -= 1;
      }
    });
  }

  private async current(): Promise<Transaction> {
    if (!this.producer) throw new Error(`the producer ${this.options.id} is not open`);
    this.transaction ??= await this.producer.transaction();
    if (!this.journaled) {
      this.journal.begin(this.producer.transactionalIdentity()?.producerEpoch);
      this.journaled = true;
    }
    return this.transaction;
  }
}

/**
 * One task's share of the replica's transaction. It tracks whether the task has writes in the
 * open transaction that its offset does not cover yet: closing or rebuilding the task then
 * aborts the transaction for all, as those writes must never be read committed.
 */
export class ReplicaTaskProducer implements TaskTransactions {
  /** The replica's producer this share last joined (ReplicaTransaction.ready). */
  private attachedTo = -1;
  private uncommittedWrites = false;

  constructor(
    private readonly replica: ReplicaTransaction,
    readonly key: string,
    /** Hands over what the task handled: its records, and its offset through `commit`. */
    readonly prepareCommit: () => void,
  ) {}

  get id(): string {
    return this.replica.id;
  }

  get error(): unknown {
    return this.replica.errorFor(this, this.attachedTo);
  }

  get backlog(): number {
    return this.replica.backlog;
  }

  /** Whether the task has writes in the open transaction that no offset of its covers yet. */
  get hasUncommittedWrites(): boolean {
    return this.uncommittedWrites && this.error === undefined;
  }

  async fence(): Promise<void> {
    this.abandonUncommitted();
    this.replica.detach(this);
    this.attachedTo = await this.replica.ready();
    this.replica.attach(this);
  }

  send(records: RecordCollector): void {
    if (records.isEmpty) return;
    if (this.error !== undefined) {
      // Dropped, not kept for later: the task is replaced and rebuilds them from its commit.
      records.clear();
      return;
    }
    this.uncommittedWrites = true;
    this.replica.send(records);
  }

  commit(offset: OffsetToCommit | undefined, onCommitted: () => void): void {
    if (this.error !== undefined) return;
    this.uncommittedWrites = false;
    this.replica.commitAll(offset, onCommitted);
  }

  idle(): Promise<void> {
    return this.replica.idle();
  }

  async close(): Promise<void> {
    this.abandonUncommitted();
    this.replica.detach(this);
  }

  /** Writes of this task that no commit covers cannot stay in the transaction: it aborts. */
  private abandonUncommitted(): void {
    if (this.hasUncommittedWrites)
      this.replica.fail(
        new TransactionAbortedError(`${this.key} left writes its offset does not cover`),
        this,
      );
    this.uncommittedWrites = false;
  }
}

/**
 * The last offset handed over for each partition: a task hands over again at the seal what it
 * handled after it asked for the commit, and its position only moves on.
 */
function latestPerPartition(offsets: OffsetToCommit[]): OffsetToCommit[] {
  const latest = new Map<string, OffsetToCommit>();
  for (const offset of offsets)
    latest.set(JSON.stringify([offset.groupId, offset.topic, offset.partition]), offset);
  return [...latest.values()];
}

/** The offsets by the group and member they are committed as: one TxnOffsetCommit each. */
function byMember(offsets: OffsetToCommit[]): OffsetToCommit[][] {
  const groups = new Map<string, OffsetToCommit[]>();
  for (const offset of offsets) {
    const key = JSON.stringify([offset.groupId, offset.member ?? null]);
    groups.set(key, [...(groups.get(key) ?? []), offset]);
  }
  return [...groups.values()];
}

/** The offsets' partitions by group, as OffsetFetch asks for them. */
function byGroup(offsets: OffsetToCommit[]): GroupOffsets[] {
  const groups = new Map<string, OffsetToCommit[]>();
  for (const offset of offsets)
    groups.set(offset.groupId, [...(groups.get(offset.groupId) ?? []), offset]);
  return [...groups].map(([groupId, own]) => ({
    groupId,
    topics: byTopic(own).map(({ topic, partitions }) => ({
      topic,
      partitions: partitions.map((p) => p.partition),
    })),
  }));
}

function byTopic(offsets: OffsetToCommit[]) {
  const topics = new Map<string, PartitionOffset[]>();
  for (const { topic, partition, offset, metadata } of offsets) {
    // kafkajs passes `metadata` on to TxnOffsetCommit; its types leave it out.
    const committed = { partition, offset, metadata } as PartitionOffset;
    topics.set(topic, [...(topics.get(topic) ?? []), committed]);
  }
  return [...topics].map(([topic, partitions]) => ({ topic, partitions }));
}

function offsetsAsked(offsets: OffsetToCommit[]): AskedFor | undefined {
  const [first] = offsets;
  if (first === undefined) return undefined;
  return {
    group: `Read on group ${first.groupId}`,
    topic: onTopics('Read', [...new Set(offsets.map((o) => o.topic))]),
  };
}
