// One input partition's unit of work (DESIGN §5): its own transactional producer, whose id
// `<group>.<topic>.<partition>` is the EOS-v1 scheme that lets a new owner fence a zombie; the
// records a batch produces, the state changes it makes and its consumer offset commit together.
import type { Kafka, Message, Producer, Transaction } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import type { Logger } from 'pino';

import type { ProcessorMetrics } from '../observability/processor-metrics';

export interface TaskContext {
  kafka: Kafka;
  consumerGroup: string;
  logger: Logger;
  metrics: ProcessorMetrics;
  commitIntervalMs: number;
}

/** The part of a kafkajs batch a task reads. */
export interface InputBatch {
  messages: InputMessage[];
  lastOffset(): string;
  offsetLag(): string;
}

export interface InputMessage {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  timestamp: string;
}

export function transactionalId(group: string, topic: string, partition: number): string {
  return `${group}.${topic}.${partition}`;
}

export abstract class PartitionTask {
  /** Next offset to read after the last committed transaction (what the group has). */
  committedOffset: string | undefined;
  /** Consumer lag after the last batch. */
  lag = 0;
  /** Set after a failure: the owner replaces the task, which rebuilds from what was committed. */
  broken = false;
  /** A rebalance happened: the fetch position is the group's again; check before going on. */
  needsSync = false;

  protected readonly logger: Logger;
  private producer: Producer | undefined;
  private transaction: Transaction | undefined;
  private readonly pending = new Map<string, Message[]>();
  /** Records sent or offsets advanced since the last commit. */
  private uncommitted = false;
  private nextOffset: string | undefined;
  private transactionStarted = 0;
  /** Opened and not synced yet: the state is exactly what the committed log holds. */
  private fresh = false;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly topic: string,
    readonly partition: number,
    protected readonly context: TaskContext,
  ) {
    this.logger = context.logger.child({ topic, partition });
  }

  /** Handles a batch's records: every output goes through `send`. */
  protected abstract handle(messages: InputMessage[]): void;
  /** Work the wall clock triggers (idle flushes); may `send`. */
  protected abstract onTick(now: number): void;
  /** Replaces in-memory state by what the committed log holds (after a failure or a rebalance). */
  protected abstract rebuild(): Promise<void>;
  /** Called before each batch and tick: adopt definition changes. */
  protected abstract refresh(): void;

  /** A string committed with the offset, atomically (the source's event time). */
  protected commitMetadata(): string | undefined {
    return undefined;
  }

  /** What the last committed offset carried, when taking the partition over. */
  protected adoptCommitted(_metadata: string | undefined): void {}

  protected send(topic: string, message: Message): void {
    let messages = this.pending.get(topic);
    if (!messages) {
      messages = [];
      this.pending.set(topic, messages);
    }
    messages.push(message);
  }

  /**
   * Connects the producer and starts a transaction: the first InitProducerId for this id fences
   * any previous owner and completes or aborts its open transaction, so what is read next (the
   * committed offset, the changelog) is final. Then restores state.
   */
  async open(): Promise<void> {
    const producer = this.context.kafka.producer({
      transactionalId: transactionalId(this.context.consumerGroup, this.topic, this.partition),
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
      // The broker answers CONCURRENT_TRANSACTIONS to the first write after a commit until the
      // markers are down (milliseconds); kafkajs' default first backoff (300 ms) would stall.
      // A send that still fails breaks the task, which restarts from its last commit.
      retry: { initialRetryTime: 20, maxRetryTime: 1000 },
    });
    this.producer = producer;
    await producer.connect();
    this.transaction = await producer.transaction();
    this.transactionStarted = Date.now();
    await this.rebuild();
    this.fresh = true;
  }

  /**
   * Makes sure the state matches where the consumer reads from: after a rebalance kafkajs reads
   * from the group's committed offset, so work not committed yet is thrown away and redone.
   * Returns the offset to seek to when the batch that came does not start there.
   */
  sync(
    fetchedOffset: string,
    committed: { offset: string; metadata: string | undefined } | undefined,
  ): Promise<string | undefined> {
    const groupOffset = committed?.offset;
    return this.exclusive(async () => {
      const inSync = this.fresh || (!this.uncommitted && groupOffset === this.committedOffset);
      if (!inSync) {
        this.logger.info(
          { committed: groupOffset, had: this.committedOffset },
          'state is ahead of or behind the committed offset; rebuilding it from the log',
        );
        await this.abortOpen();
        await this.rebuild();
      }
      this.fresh = false;
      this.committedOffset = groupOffset;
      this.adoptCommitted(committed?.metadata);
      this.nextOffset = undefined;
      this.needsSync = false;
      return groupOffset !== undefined && groupOffset !== fetchedOffset ? groupOffset : undefined;
    });
  }

  processBatch(batch: InputBatch): Promise<void> {
    return this.exclusive(async () => {
      this.refresh();
      this.handle(batch.messages);
      this.nextOffset = (BigInt(batch.lastOffset()) + 1n).toString();
      this.uncommitted = true;
      this.lag = Number(batch.offsetLag());
      await this.flush();
      if (Date.now() - this.transactionStarted >= this.context.commitIntervalMs)
        await this.commit();
    });
  }

  /** The wall clock: idle flushes, and a commit when the interval has passed. */
  tick(now: number): Promise<void> {
    return this.exclusive(async () => {
      if (this.broken) return;
      this.refresh();
      this.onTick(now);
      await this.flush();
      if (this.uncommitted && now - this.transactionStarted >= this.context.commitIntervalMs)
        await this.commit();
    });
  }

  /** Commits what is open (a clean hand-over before a rebalance or shutdown). */
  commitNow(): Promise<void> {
    return this.exclusive(async () => {
      if (this.broken || !this.uncommitted) return;
      await this.flush();
      await this.commit();
    });
  }

  /** Closes the producer; uncommitted work is aborted (another owner redoes it). */
  close(): Promise<void> {
    const closing = this.queue.then(async () => {
      await this.abortOpen().catch(() => undefined);
      await this.producer?.disconnect().catch(() => undefined);
      this.producer = undefined;
    });
    this.queue = closing;
    return closing;
  }

  private async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const topicMessages = [...this.pending].map(([topic, messages]) => ({ topic, messages }));
    this.pending.clear();
    this.uncommitted = true;
    await this.openTransaction().sendBatch({ topicMessages });
  }

  private async commit(): Promise<void> {
    const transaction = this.openTransaction();
    const started = process.hrtime.bigint();
    if (this.nextOffset !== undefined) {
      await transaction.sendOffsets({
        consumerGroupId: this.context.consumerGroup,
        topics: [
          {
            topic: this.topic,
            partitions: [{ partition: this.partition, offset: this.nextOffset }],
          },
        ],
      });
    }
    await transaction.commit();
    this.context.metrics.commitSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
    this.transaction = undefined;
    if (this.nextOffset !== undefined) this.committedOffset = this.nextOffset;
    this.nextOffset = undefined;
    this.uncommitted = false;
  }

  private openTransaction(): Transaction {
    if (!this.transaction) throw new Error('the task has no transaction (not opened, or closed)');
    return this.transaction;
  }

  private async beginIfNeeded(): Promise<void> {
    if (this.transaction || !this.producer) return;
    this.transaction = await this.producer.transaction();
    this.transactionStarted = Date.now();
  }

  private async abortOpen(): Promise<void> {
    this.pending.clear();
    const transaction = this.transaction;
    this.transaction = undefined;
    this.uncommitted = false;
    this.nextOffset = undefined;
    if (transaction?.isActive()) await transaction.abort();
  }

  /**
   * Runs one piece of work at a time (batches, ticks and commits of a task never interleave) and
   * marks the task broken when one fails: its state can no longer be trusted.
   */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      await this.beginIfNeeded();
      try {
        return await work();
      } catch (error) {
        this.broken = true;
        throw error;
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}
