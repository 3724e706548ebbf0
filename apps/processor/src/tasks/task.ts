// One input partition's unit of work (docs/design.md §5). The records a batch produces, the state
// changes it makes and its consumer offset commit together, in the task producer's transaction.
// A task (re)starts on what the broker answers, never on a clock (task-recovery.ts): fence, read
// the committed offset with require_stable, rebuild the state from the committed logs, and read
// on from the committed offset.
import type { ConsumerGroupMetadata, Message } from 'kafkajs';
import type { Logger } from 'pino';

import { SerialQueue } from '../support/serial-queue';
import { lowerFloorForMove } from './committed-offset';
import type { PartitionMemory, WrittenPartitions } from './committed-offset';
import { positionAfter, splitAt } from './input-batch';
import type { InputBatch } from './input-batch';
import { TaskKind } from './task-kind';
import type { TaskContext } from './task-context';
import { TaskLifecycle } from './task-lifecycle';
import type { TaskState } from './task-lifecycle';
import { TaskOutput } from './task-output';
import { TaskProducer, transactionalId } from './task-producer';
import { TaskRecovery } from './task-recovery';
import type { TaskTransactions } from './task-transactions';
import { writtenPartitionsOf } from './written-partitions';

export abstract class Task extends TaskKind {
  readonly key: string;
  /** Consumer lag after the last batch. */
  lag = 0;
  protected readonly logger: Logger;
  private readonly lifecycle: TaskLifecycle;
  private readonly producer: TaskTransactions;
  private readonly output: TaskOutput;
  private readonly recovery: TaskRecovery;
  /** The next offset to process: every record before it is in the state. */
  private position: string | undefined;
  /**
   * The committed offset the in-memory state equals when nothing is uncommitted (`null`:
   * nothing committed); `undefined` until known.
   */
  private syncedAt: string | null | undefined;
  /** State changes (resumes, batches, ticks) run one at a time. */
  private readonly queue = new SerialQueue();
  /** Counts resumes: a batch accepted before a resume is not processed after it. */
  private resumes = 0;
  /**
   * The group generation and member the task last resumed under: every offset commit names
   * it, so that the group coordinator refuses it once a rebalance has begun a later one.
   */
  private member: ConsumerGroupMetadata | undefined;
  /**
   * A step of the task threw: it is about to be closed, and what it handled in that step is
   * half done, so a commit of the replica's (exactly_once_v2) must not take it meanwhile.
   */
  private broken = false;
  /**
   * The synchronous part of a batch or tick is under way: set before it and cleared after it,
   * so a throw leaves it set. The step's rejection reaches `exclusive` (which marks the task
   * broken) only a microtask later, and a commit of the replica's that begins in between must
   * not take the half-done step.
   */
  private midStep = false;

  constructor(
    readonly topic: string,
    readonly partition: number,
    protected readonly context: TaskContext,
    private readonly memory: PartitionMemory,
  ) {
    super();
    this.key = `${topic}/${partition}`;
    this.logger = context.logger.child({ topic, partition });
    this.lifecycle = new TaskLifecycle(this.key);
    // exactly_once_v2: one of the replica's transactions, committed for all its tasks at once;
    // exactly_once: a producer of the task's own.
    const own = context.replicaTransactions
      ? undefined
      : new TaskProducer(
          context.kafka,
          transactionalId(context.consumerGroup, topic, partition),
          this.logger,
          memory.journal,
          (seconds) => context.metrics.commitSeconds.observe(seconds),
        );
    this.producer =
      own ?? context.replicaTransactions!.forTask(this.key, () => this.handOverToReplicaCommit());
    this.output = new TaskOutput(this.producer, context.commitIntervals, {
      groupId: context.consumerGroup,
      topic,
      partition,
    });
    this.recovery = new TaskRecovery({
      admin: context.admin,
      consumerGroup: context.consumerGroup,
      topic,
      partition,
      logger: this.logger,
      memory,
      transactions: this.producer,
      producer: own,
      writtenPartitions: () => this.writtenPartitions(),
    });
  }

  /**
   * Every partition of those of `topics` that exist, and of every pipeline's internal topics
   * under the prefix (a deleted or parked pipeline's too), for writtenPartitions. A topic whose
   * metadata cannot be read is left out: the sweep covers what it can.
   */
  protected partitionsOf(topics: readonly string[]): Promise<WrittenPartitions> {
    return writtenPartitionsOf(this.context.admin, this.context.topicPrefix, topics, this.logger);
  }

  /** The next offset to process (`undefined` before the task first ran). */
  protected get nextOffset(): string | undefined {
    return this.position;
  }

  /** A record a reader waits for: its transaction commits within the commit interval. */
  protected send(topic: string, message: Message): void {
    this.output.add(topic, message, true);
  }

  /** A state change (a changelog record): alone, it lets its transaction stay quiet. */
  protected sendState(topic: string, message: Message): void {
    this.output.add(topic, message, false);
  }

  get state(): TaskState {
    return this.lifecycle.state;
  }

  /** Changes at every resume; `processBatch` drops a batch accepted under another. */
  get generation(): number {
    return this.resumes;
  }

  /**
   * Brings the task to `running` (task-recovery.ts) and returns the offset the consumer must
   * read from next: the committed offset, or the partition's first when nothing is committed,
   * or an earlier one the state asks to read again from (`rereadFrom`). `member`: the
   * assignment's generation and member id (none for a task outside a group, in tests).
   */
  resume(member?: ConsumerGroupMetadata): Promise<string> {
    return this.exclusive(async () => {
      this.lifecycle.moveTo('restoring');
      this.resumes += 1;
      this.member = member;
      await this.producer.idle();
      const kept =
        this.output.hasPending || this.producer.error !== undefined ? undefined : this.syncedAt;
      this.output.discard();
      const committed = await this.recovery.recover(kept, () => this.restoreState());
      this.syncedAt = committed?.offset ?? null;
      this.adoptCommitted(committed?.metadata, committed?.offset);
      this.position = committed?.offset ?? (await this.recovery.earliest());
      this.output.begin();
      this.lifecycle.moveTo('running');
      return this.recovery.readFrom(this.position, this.rereadFrom());
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
      if (await this.checkAndReposition()) return 'reposition';
      this.midStep = true;
      const [again, fresh] = splitAt(batch, this.position);
      if (again.length > 0) this.reread(again);
      this.handle(fresh);
      this.position = positionAfter(batch, this.position);
      this.afterBatch(this.position);
      this.output.handled();
      this.lag = Number(batch.offsetLag());
      this.output.flush();
      if (this.output.due(Date.now(), this.awaitsCommit())) this.commit();
      this.midStep = false;
      // Bounded: when the broker falls behind, the consumer waits for it.
      if (this.producer.backlog > 8) await this.producer.idle();
      return undefined;
    });
  }

  /** The wall clock: idle flushes, and a commit when the interval has passed. */
  tick(now: number): Promise<'reposition' | undefined> {
    return this.exclusive(async () => {
      if (!this.lifecycle.is('running')) return undefined;
      if (await this.checkAndReposition()) return 'reposition';
      this.midStep = true;
      this.onTick(now);
      this.output.flush();
      if (this.output.due(now, this.awaitsCommit())) this.commit();
      this.midStep = false;
      return undefined;
    });
  }

  /**
   * Checks the task runs and adopts definition changes; then moves the position where
   * `repositionTo` says, if it says so, committing it with everything handled so far (the
   * metadata keeps each pipeline's own position), and waits for the commit: the task is then
   * resumed from there, as after a rebalance, so no batch fetched before is processed.
   */
  private async checkAndReposition(): Promise<boolean> {
    this.assertRunning();
    this.refresh();
    const target = this.repositionTo();
    if (target === undefined || target === this.position) return false;
    this.logger.info({ from: this.position ?? null, to: target }, 'reading on from another offset');
    // A batch accepted before this, fetched from the old position, is dropped, not handled
    // from the new one (it would skip the records between them): a tick can move the position
    // while a batch waits behind it.
    this.resumes += 1;
    // Earlier commits answered first: one still in flight would raise the floor past the
    // target after it was lowered. The position moves after the wait, so that a commit of the
    // replica's meanwhile (exactly_once_v2) takes the position its sent records stand for.
    await this.producer.idle();
    this.assertRunning();
    lowerFloorForMove(this.memory, target);
    this.position = target;
    this.commit();
    await this.producer.idle();
    this.assertRunning();
    return true;
  }

  /** Commits everything handled so far and waits for the coordinator to accept it. */
  commitNow(): Promise<void> {
    return this.exclusive(async () => {
      await this.commitAndWait();
    });
  }

  /**
   * Commits everything handled so far, waits for the coordinator to accept it, and suspends
   * the task in the same step, so that no tick commits in between: a rebalance is starting,
   * and a commit after it would name a generation that has ended.
   */
  commitAndSuspend(): Promise<void> {
    return this.exclusive(async () => {
      if (await this.commitAndWait()) this.lifecycle.moveTo('suspended');
    });
  }

  /** Of a running task (else false): commits what it handled, once the coordinator accepts. */
  private async commitAndWait(): Promise<boolean> {
    if (!this.lifecycle.is('running')) return false;
    this.output.flush();
    if (this.output.hasPending) this.commit();
    await this.producer.idle();
    this.assertRunning();
    return true;
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
    return this.queue.run(async () => {
      if (!this.lifecycle.is('closed')) this.lifecycle.moveTo('closed');
      this.output.discard();
      await this.producer.close();
    });
  }

  private assertRunning(): void {
    if (this.producer.error !== undefined) throw this.producer.error;
    if (!this.lifecycle.is('running'))
      throw new Error(`task ${this.key} is ${this.lifecycle.state}, not running`);
  }

  /**
   * exactly_once_v2: the replica commits every task at once, and this task hands over what it
   * has handled (called synchronously, between two of the task's own steps).
   */
  private handOverToReplicaCommit(): void {
    if (!this.lifecycle.is('running') || this.broken || this.midStep) return;
    this.output.flush();
    if (this.output.hasPending) this.commit();
    // The replica's next transaction begins now for this task too: its interval runs from here.
    else this.output.begin();
  }

  /** Queues the commit of everything handled so far, with the offset and metadata of now. */
  private commit(): void {
    this.beforeCommit();
    const offset = this.position;
    const metadata = offset === undefined ? undefined : this.commitMetadata(offset);
    this.output.commit(offset, metadata, this.member, () => {
      if (offset === undefined) return;
      this.syncedAt = offset;
      this.memory.acknowledged = offset;
    });
  }

  /** Runs one state change at a time: resumes, batches and ticks of a task never interleave. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.queue.run(async () => {
      if (this.lifecycle.is('closed')) throw new Error(`task ${this.key} is closed`);
      try {
        return await work();
      } catch (error) {
        this.broken = true;
        throw error;
      }
    });
  }
}
