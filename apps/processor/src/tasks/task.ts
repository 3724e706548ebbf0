// One input partition's unit of work (docs/design.md §5). The records a batch produces, the state changes
// it makes and its consumer offset commit together, in the task producer's transaction. How a
// task (re)starts is decided on what the broker answers, never on a clock:
// 1. fence: a new InitProducerId for the task's transactional id settles every earlier
//    transaction of that id (aborts an open one, waits for a pending commit's markers);
// 2. read the committed offset with require_stable (retried while a commit is pending);
// 3. rebuild the state from the committed logs (a changelog restore checks its stable end);
// 4. the consumer reads on from the committed offset.
// A task kept through a rebalance with nothing uncommitted, whose last acknowledged commit is
// what the group holds, skips 1 and 3.
import type { Admin, Kafka, Message, TopicMessages } from 'kafkajs';
import type { Logger } from 'pino';

import {
  fetchStableOffset,
  fetchTopicOffsets,
  isUnstableOffsetCommit,
  retryBroker,
} from '@sluice/kafka';
import type { CommittedOffset } from '@sluice/kafka';

import type { ProcessorMetrics } from '../observability/processor-metrics';
import { RecordCollector } from './record-collector';
import { TaskLifecycle } from './task-lifecycle';
import type { TaskState } from './task-lifecycle';
import { TaskProducer, transactionalId } from './task-producer';
import { endOpenTransactions, HangingCommitError, hangingSweepRefusal } from './open-transactions';
import type { TransactionJournal } from './transaction-journal';

export interface TaskContext {
  kafka: Kafka;
  admin: Admin;
  consumerGroup: string;
  /** SLUICE_TOPIC_PREFIX: the pipelines' internal topics are under it. */
  topicPrefix: string;
  logger: Logger;
  metrics: ProcessorMetrics;
  commitIntervalMs: number;
}

/** The part of a kafkajs batch a task reads. */
export interface InputBatch {
  messages: InputMessage[];
  firstOffset(): string | null;
  lastOffset(): string;
  offsetLag(): string;
}

export interface InputMessage {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  timestamp: string;
}

/**
 * What the replica remembers of a partition across its tasks while it stays assigned: the
 * offset of the last commit a task of it had acknowledged, below which none may resume.
 */
export interface PartitionMemory {
  acknowledged: string | undefined;
  /** Its tasks' last transactions, for ending one left open after the fence. */
  journal: TransactionJournal;
}

/** One record to each partition, for a transaction that only has to write a marker there. */
function sweepRecords(partitions: Array<{ topic: string; partitions: number[] }>): TopicMessages[] {
  return partitions.map(({ topic, partitions: indexes }) => ({
    topic,
    messages: indexes.map((partition): Message => ({ partition, key: SWEEP_KEY, value: null })),
  }));
}

/** A key no state, result or lookup uses: a restore reads it as the deletion of nothing. */
const SWEEP_KEY = '~sluice-sweep';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export class CommitBehindError extends Error {
  override readonly name = 'CommitBehindError';
  readonly retriable = true;
}

export abstract class Task {
  readonly key: string;
  /** Consumer lag after the last batch. */
  lag = 0;
  protected readonly logger: Logger;
  private readonly lifecycle: TaskLifecycle;
  private readonly collector = new RecordCollector();
  private readonly producer: TaskProducer;
  /** The next offset to process: every record before it is in the state. */
  private position: string | undefined;
  /**
   * The committed offset the in-memory state equals when nothing is uncommitted (`null`:
   * nothing committed); `undefined` until known.
   */
  private syncedAt: string | null | undefined;
  /** Work handled since the last queued commit. */
  private dirty = false;
  private transactionStarted = 0;
  /** State changes (resumes, batches, ticks) run one at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Counts resumes: a batch accepted before a resume is not processed after it. */
  private resumes = 0;

  constructor(
    readonly topic: string,
    readonly partition: number,
    protected readonly context: TaskContext,
    private readonly memory: PartitionMemory,
  ) {
    this.key = `${topic}/${partition}`;
    this.logger = context.logger.child({ topic, partition });
    this.lifecycle = new TaskLifecycle(this.key);
    this.producer = new TaskProducer(
      context.kafka,
      transactionalId(context.consumerGroup, topic, partition),
      this.logger,
      memory.journal,
      (seconds) => context.metrics.commitSeconds.observe(seconds),
    );
  }

  /** Handles a batch's records: every output goes through `send`. */
  protected abstract handle(messages: InputMessage[]): void;
  /** Work the wall clock triggers (idle flushes); may `send`. */
  protected abstract onTick(now: number): void;
  /** Replaces the in-memory state by what the committed logs hold. */
  protected abstract restoreState(): Promise<void>;
  /** Called before each batch and tick: adopt definition changes. */
  protected abstract refresh(): void;
  /** Every topic (and its partitions) this task may write to: what a hanging sweep covers. */
  protected abstract writtenPartitions(): Promise<Array<{ topic: string; partitions: number[] }>>;
  /**
   * Every partition of those of `topics` that exist, and of every pipeline's internal topics
   * under the prefix (a deleted or parked pipeline's too), for writtenPartitions. A topic whose
   * metadata cannot be read is left out: the sweep covers what it can.
   */
  protected async partitionsOf(
    topics: readonly string[],
  ): Promise<Array<{ topic: string; partitions: number[] }>> {
    const prefix = this.context.topicPrefix;
    const existing = await retryBroker(() => this.context.admin.listTopics());
    const internal = existing.filter((topic) =>
      new RegExp(`^${escapeRegExp(prefix)}\\.[0-9a-f-]{36}\\.(repartition|changelog)$`).test(topic),
    );
    const wanted = [...new Set([...topics.filter((t) => existing.includes(t)), ...internal])];
    const found: Array<{ topic: string; partitions: number[] }> = [];
    for (const topic of wanted) {
      try {
        const { topics: metadata } = await this.context.admin.fetchTopicMetadata({
          topics: [topic],
        });
        for (const { name, partitions } of metadata)
          found.push({ topic: name, partitions: partitions.map((p) => p.partitionId) });
      } catch (error) {
        this.logger.warn({ err: error, topic }, 'a topic to sweep has no metadata; left out');
      }
    }
    return found;
  }

  /** A string committed with the offset `offset`, atomically (a source's positions). */
  protected commitMetadata(_offset: string): string | undefined {
    return undefined;
  }

  /**
   * What the committed offset carried, and the offset (`undefined`: nothing committed, or
   * nothing carried).
   */
  protected adoptCommitted(_metadata: string | undefined, _offset: string | undefined): void {}

  /**
   * Where the task must read on from instead of its position (a source whose pipelines all
   * start further on, or one that starts earlier: a backfill or a replay); `undefined`: here.
   */
  protected repositionTo(): string | undefined {
    return undefined;
  }

  /** The batch up to `next` is handled (the position moved there). */
  protected afterBatch(_next: string): void {}

  /**
   * Last records of the transaction about to commit (`send` them here): what stands for all of
   * its batches at once, such as a source's folded partials and watermark markers — a reader
   * sees the transaction whole or not at all, so one per transaction says as much as one per
   * batch.
   */
  protected beforeCommit(): void {}

  /** The next offset to process (`undefined` before the task first ran). */
  protected get nextOffset(): string | undefined {
    return this.position;
  }

  protected send(topic: string, message: Parameters<RecordCollector['add']>[1]): void {
    this.collector.add(topic, message);
  }

  get state(): TaskState {
    return this.lifecycle.state;
  }

  /** Changes at every resume; `processBatch` drops a batch accepted under another. */
  get generation(): number {
    return this.resumes;
  }

  /**
   * Brings the task to `running` (steps 1-4 above) and returns the offset the consumer must
   * read from next: the committed offset, or the partition's first when nothing is committed.
   */
  resume(): Promise<string> {
    return this.exclusive(async () => {
      this.lifecycle.moveTo('restoring');
      this.resumes += 1;
      await this.producer.idle();
      const kept = this.syncedAt !== undefined && !this.dirty && this.producer.error === undefined;
      let committed = kept ? await this.readCommittedIfSettles() : undefined;
      if (!kept || committed === 'unsettled' || (committed?.offset ?? null) !== this.syncedAt) {
        if (kept && committed !== 'unsettled') {
          this.logger.info(
            { committed: committed?.offset ?? null, had: this.syncedAt },
            'the committed offset is not this task state; fencing and rebuilding',
          );
        }
        this.collector.clear();
        this.dirty = false;
        await this.producer.fence();
        committed = await this.readCommittedAfterFence();
        await endOpenTransactions({
          admin: this.context.admin,
          journal: this.memory.journal,
          committed: committed?.offset,
          taskKey: this.key,
          logger: this.logger,
        });
        await this.restoreState();
        this.syncedAt = committed?.offset ?? null;
      }
      this.adoptCommitted(committed?.metadata, committed?.offset);
      this.position = committed?.offset ?? (await this.earliest());
      this.transactionStarted = Date.now();
      this.lifecycle.moveTo('running');
      return this.position;
    });
  }

  /**
   * Handles a batch accepted while the task's generation was `generation`: one accepted before
   * a later resume was fetched from a position that is no longer the task's, and is dropped
   * (the consumer reads again from where that resume said). `reposition`: the task committed a
   * move of its position instead (see `repositionTo`); resume it to read from there.
   */
  processBatch(batch: InputBatch, generation = this.resumes): Promise<'reposition' | undefined> {
    return this.exclusive(async () => {
      if (generation !== this.resumes) return undefined;
      this.assertRunning();
      this.refresh();
      if (await this.repositioned()) return 'reposition';
      this.handle(this.unprocessed(batch));
      const next = BigInt(batch.lastOffset()) + 1n;
      // Never backwards: a batch kafkajs delivers again must not move the position before
      // records the state already holds.
      if (this.position === undefined || next > BigInt(this.position))
        this.position = next.toString();
      this.afterBatch(this.position);
      this.dirty = true;
      this.lag = Number(batch.offsetLag());
      this.flush();
      if (Date.now() - this.transactionStarted >= this.context.commitIntervalMs) this.commit();
      // Bounded: when the broker falls behind, the consumer waits for it.
      if (this.producer.backlog > 8) await this.producer.idle();
      return undefined;
    });
  }

  /** The wall clock: idle flushes, and a commit when the interval has passed. */
  tick(now: number): Promise<'reposition' | undefined> {
    return this.exclusive(async () => {
      if (!this.lifecycle.is('running')) return undefined;
      this.assertRunning();
      this.refresh();
      if (await this.repositioned()) return 'reposition';
      this.onTick(now);
      this.flush();
      if (this.dirty && now - this.transactionStarted >= this.context.commitIntervalMs)
        this.commit();
      return undefined;
    });
  }

  /**
   * Moves the position where `repositionTo` says, committing it with everything handled so far
   * (the metadata keeps each pipeline's own position), and waits for the commit: the task is
   * then resumed from there, as after a rebalance, so no batch fetched before is processed.
   */
  private async repositioned(): Promise<boolean> {
    const target = this.repositionTo();
    if (target === undefined || target === this.position) return false;
    this.logger.info({ from: this.position ?? null, to: target }, 'reading on from another offset');
    this.position = target;
    this.flush();
    this.commit();
    await this.producer.idle();
    this.assertRunning();
    return true;
  }

  /** Commits everything handled so far and waits for the coordinator to accept it. */
  commitNow(): Promise<void> {
    return this.exclusive(async () => {
      if (!this.lifecycle.is('running')) return;
      this.flush();
      if (this.dirty) this.commit();
      await this.producer.idle();
      this.assertRunning();
    });
  }

  /**
   * The consumer's position is the group's again (a rebalance, a new consumer): the task
   * keeps its state and producer, and re-checks them at its next `resume`.
   */
  suspend(): Promise<void> {
    return this.exclusive(async () => {
      if (this.lifecycle.is('running')) this.lifecycle.moveTo('suspended');
    });
  }

  /** Closes the producer; uncommitted work is aborted (the next owner redoes it). */
  close(): Promise<void> {
    const closing = this.queue.then(async () => {
      if (!this.lifecycle.is('closed')) this.lifecycle.moveTo('closed');
      this.collector.clear();
      await this.producer.close();
    });
    this.queue = closing.catch(() => undefined);
    return closing;
  }

  /** The batch's messages at or after `position`: kafkajs may deliver some again. */
  private unprocessed(batch: InputBatch): InputMessage[] {
    const first = batch.firstOffset();
    if (first === null || this.position === undefined) return batch.messages;
    const position = BigInt(this.position);
    if (BigInt(first) >= position) return batch.messages;
    return batch.messages.filter((message) => BigInt(message.offset) >= position);
  }

  private assertRunning(): void {
    if (this.producer.error !== undefined) throw this.producer.error;
    if (!this.lifecycle.is('running'))
      throw new Error(`task ${this.key} is ${this.lifecycle.state}, not running`);
  }

  private flush(): void {
    if (this.collector.isEmpty) return;
    this.dirty = true;
    this.producer.send(this.collector.drain());
  }

  /** Queues the commit of everything handled so far, with the offset and metadata of now. */
  private commit(): void {
    this.beforeCommit();
    this.flush();
    const offset = this.position;
    const metadata = offset === undefined ? undefined : this.commitMetadata(offset);
    this.dirty = false;
    this.transactionStarted = Date.now();
    const toCommit =
      offset === undefined
        ? undefined
        : {
            groupId: this.context.consumerGroup,
            topic: this.topic,
            partition: this.partition,
            offset,
            metadata,
          };
    this.producer.commit(toCommit, () => {
      if (offset === undefined) return;
      this.syncedAt = offset;
      this.memory.acknowledged = offset;
    });
  }

  /**
   * A kept task's committed offset, or 'unsettled' when a commit of the partition stays pending
   * through BROKER_RETRY's waits: only the fence (and what follows it) can tell why.
   */
  private async readCommittedIfSettles(): Promise<CommittedOffset | undefined | 'unsettled'> {
    try {
      return await this.readCommitted();
    } catch (error) {
      if (!isUnstableOffsetCommit(error)) throw error;
      this.logger.warn(
        'a commit of this partition stays pending; fencing to settle it, and rebuilding',
      );
      return 'unsettled';
    }
  }

  /**
   * The group's committed offset once no pending transaction can change it, and never below
   * this partition's last acknowledged commit on this replica (waited for, on the broker's
   * answers, should it read behind: that would replay committed work).
   */
  private async readCommitted(): Promise<CommittedOffset | undefined> {
    const ours = this.memory.acknowledged;
    return retryBroker(
      async () => {
        const committed = await fetchStableOffset(
          this.context.admin,
          this.context.consumerGroup,
          this.topic,
          this.partition,
          (attempt) =>
            this.logger.info(
              { attempt },
              'a commit of this partition is pending (UNSTABLE_OFFSET_COMMIT); waiting for its markers',
            ),
        );
        if (
          ours !== undefined &&
          (committed === undefined || BigInt(committed.offset) < BigInt(ours))
        ) {
          throw new CommitBehindError(
            `the group's committed offset ${committed?.offset ?? 'none'} is behind this task's own acknowledged commit ${ours}`,
          );
        }
        return committed;
      },
      {
        shouldRetry: (error) => error instanceof CommitBehindError,
        onRetry: (error, attempt) =>
          this.logger.warn({ err: error, attempt }, 'the committed offset reads behind; waiting'),
      },
    );
  }

  /**
   * After the fence, the coordinator holds every transaction of this id complete, and their
   * markers written: an offset commit of this partition still pending is one whose marker was
   * never written (a hanging transaction, as a single-node broker's controlled shutdown leaves
   * one: README, Known issues). Only a marker of this producer id ends it. When no partition the
   * transaction wrote has its marker either, nothing of it was ever read committed, and it is
   * aborted by a transaction of this id writing to every partition the task may have written
   * to, the offset included; the state is then rebuilt and the work redone from the offset
   * committed before it. When a transaction whose commit was asked for has markers on some
   * partitions, aborting would duplicate them: the task fails, saying so, as it does for another
   * producer id's hanging transaction (an operator settles it with kafka-transactions).
   */
  private async readCommittedAfterFence(): Promise<CommittedOffset | undefined> {
    try {
      await fetchStableOffset(
        this.context.admin,
        this.context.consumerGroup,
        this.topic,
        this.partition,
        undefined,
        false,
      );
      return await this.readCommitted(); // stable: with the check against our own commits
    } catch (error) {
      if (!isUnstableOffsetCommit(error)) throw error;
    }
    const refusal = await hangingSweepRefusal(this.context.admin, this.memory.journal);
    if (refusal !== undefined) {
      throw new HangingCommitError(
        `${this.key}: after the fence the offset commit is still pending, and ${refusal}. Settle it with kafka-transactions (find-hanging, then abort or complete)`,
      );
    }
    const partitions = await this.writtenPartitions();
    this.logger.warn(
      { topics: partitions.map((p) => p.topic), acknowledged: this.memory.acknowledged ?? null },
      'after fencing, a commit of this partition is still pending: a transaction of this task hangs and no partition it wrote has its marker (nothing of it was read committed); aborting it with a marker of its own and redoing its work',
    );
    await this.producer.settleHanging(sweepRecords(partitions), {
      groupId: this.context.consumerGroup,
      topic: this.topic,
      partition: this.partition,
      offset: '0',
      metadata: undefined,
    });
    // What this replica had acknowledged is aborted now: the offset before it is the task's.
    this.memory.acknowledged = undefined;
    this.memory.journal.forgetAcknowledged();
    try {
      return await this.readCommitted();
    } catch (error) {
      if (!isUnstableOffsetCommit(error)) throw error;
      throw new HangingCommitError(
        `${this.key}: the committed offset is still pending after this task aborted its own hanging transaction: another producer id's transaction hangs there. Settle it with kafka-transactions (find-hanging, then abort)`,
      );
    }
  }

  /** A partition's first offset: where the group starts reading it (`fromBeginning`). */
  private async earliest(): Promise<string> {
    const offsets = await fetchTopicOffsets(this.context.admin, this.topic);
    const low = offsets.find((p) => p.partition === this.partition)?.low;
    if (low === undefined) throw new Error(`${this.topic} has no partition ${this.partition}`);
    return low;
  }

  /** Runs one state change at a time: resumes, batches and ticks of a task never interleave. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => {
      if (this.lifecycle.is('closed')) throw new Error(`task ${this.key} is closed`);
      return work();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}
