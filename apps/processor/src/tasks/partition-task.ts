// One input partition's unit of work (DESIGN §5): its own transactional producer, whose id
// `<group>.<topic>.<partition>` is the EOS-v1 scheme that lets a new owner fence a zombie; the
// records a batch produces, the state changes it makes and its consumer offset commit together.
import type {
  Kafka,
  Message,
  PartitionOffset,
  Producer,
  TopicMessages,
  Transaction,
} from 'kafkajs';
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

export interface CommittedOffset {
  offset: string;
  metadata: string | undefined;
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
  /** Offset after the last batch handled, and whether work was handled since the last commit. */
  private nextOffset: string | undefined;
  private dirty = false;
  private transactionStarted = 0;
  /** Opened and not synced yet: the state is exactly what the committed log holds. */
  private fresh = false;
  /** State changes (batches, ticks, syncs) run one at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  /**
   * Producer calls (sends, commits) run one at a time, in order, behind the state changes: a
   * batch hands its records over and returns, so kafkajs fetches the next one while the broker
   * takes these (the commit round trips would otherwise stall consumption).
   */
  private producerCalls: Promise<void> = Promise.resolve();
  private queuedCalls = 0;

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

  /**
   * What the last committed offset carried, when taking the partition over (`undefined`
   * metadata: nothing committed, or nothing carried).
   */
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
      // Retriable errors are retried for as long as they last (a broker away): giving up would
      // only restart the task against the same broker.
      retry: { initialRetryTime: 20, maxRetryTime: 1000, retries: Number.MAX_SAFE_INTEGER },
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
   * Returns the offset to seek to when the batch that came does not start there: the committed
   * offset, or the partition's first (`earliest`) when nothing is committed yet, since the
   * consumer may have read past records whose work was lost with a replaced task.
   */
  sync(
    fetchedOffset: string,
    readCommitted: () => Promise<CommittedOffset | undefined>,
    earliest: () => Promise<string>,
  ) {
    return this.exclusive(async () => {
      await this.producerCalls;
      if (this.broken) throw new Error('producing failed while the partition was handed over');
      let committed = await this.settledCommit(readCommitted);
      let first: string | undefined;
      if (committed === undefined) {
        first = await earliest();
        // Records before this batch were read, yet nothing is committed: a replaced task's
        // work was lost (the partition is read again from its start), or the commit that
        // covers them is not visible yet: after a broker restart, transactional offsets stay
        // pending until their markers are written. The latter gets a few seconds to show.
        if (first !== fetchedOffset) committed = await this.commitShowingUp(readCommitted);
      }
      const groupOffset = committed?.offset;
      const inSync = this.fresh || (!this.dirty && groupOffset === this.committedOffset);
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
      const resumeAt = groupOffset ?? first!;
      return resumeAt !== fetchedOffset ? resumeAt : undefined;
    });
  }

  /** The group's committed offset if one shows up within a few seconds. */
  private async commitShowingUp(
    readCommitted: () => Promise<CommittedOffset | undefined>,
  ): Promise<CommittedOffset | undefined> {
    for (let attempt = 0; attempt < 20; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const committed = await readCommitted();
      if (committed !== undefined) return committed;
    }
    return undefined;
  }

  /**
   * The group's committed offset once it includes this task's own last commit. A transaction's
   * offsets become visible to OffsetFetch only when its markers are written, a moment after the
   * commit returns (kafkajs cannot ask for `require_stable`); reading too early would replay
   * committed records. A previous owner's commits are settled by the fencing in `open`.
   */
  private async settledCommit(
    readCommitted: () => Promise<CommittedOffset | undefined>,
  ): Promise<CommittedOffset | undefined> {
    const ours = this.committedOffset;
    for (let attempt = 0; ; attempt++) {
      const committed = await readCommitted();
      const behind =
        ours !== undefined && (committed === undefined || BigInt(committed.offset) < BigInt(ours));
      if (!behind || attempt >= 100) return committed;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * Whether a batch fetched from `fetchedOffset` re-delivers records already applied to the
   * state (the consumer went back without a rebalance): then the task must sync first.
   */
  redelivers(fetchedOffset: string): boolean {
    return this.nextOffset !== undefined && BigInt(fetchedOffset) < BigInt(this.nextOffset);
  }

  processBatch(batch: InputBatch): Promise<void> {
    return this.exclusive(async () => {
      this.refresh();
      this.handle(batch.messages);
      this.nextOffset = (BigInt(batch.lastOffset()) + 1n).toString();
      this.dirty = true;
      this.lag = Number(batch.offsetLag());
      this.flush();
      if (Date.now() - this.transactionStarted >= this.context.commitIntervalMs) this.commit();
      // Bounded: when the broker falls behind, the consumer waits for it.
      if (this.queuedCalls > 8) await this.producerCalls;
    });
  }

  /** The wall clock: idle flushes, and a commit when the interval has passed. */
  tick(now: number): Promise<void> {
    return this.exclusive(async () => {
      this.refresh();
      this.onTick(now);
      this.flush();
      if (this.dirty && now - this.transactionStarted >= this.context.commitIntervalMs)
        this.commit();
    });
  }

  /** Commits everything handled so far and waits for it (a hand-over before a rebalance). */
  commitNow(): Promise<void> {
    return this.exclusive(async () => {
      this.flush();
      if (this.dirty) this.commit();
      await this.producerCalls;
    });
  }

  /** Closes the producer; uncommitted work is aborted (another owner redoes it). */
  close(): Promise<void> {
    const closing = this.queue.then(async () => {
      await this.producerCalls.catch(() => undefined);
      await this.abortOpen().catch(() => undefined);
      await this.producer?.disconnect().catch(() => undefined);
      this.producer = undefined;
    });
    this.queue = closing;
    return closing;
  }

  private flush(): void {
    if (this.pending.size === 0) return;
    const requests = chunked(this.pending);
    this.pending.clear();
    this.dirty = true;
    this.call(async () => {
      const transaction = await this.currentTransaction();
      for (const topicMessages of requests) await transaction.sendBatch({ topicMessages });
    });
  }

  /** Queues the commit of everything handled so far, with the offset and metadata of now. */
  private commit(): void {
    const offset = this.nextOffset;
    const metadata = offset === undefined ? undefined : this.commitMetadata();
    this.dirty = false;
    this.transactionStarted = Date.now();
    this.call(async () => {
      const transaction = await this.currentTransaction();
      const started = process.hrtime.bigint();
      if (offset !== undefined) {
        await transaction.sendOffsets({
          consumerGroupId: this.context.consumerGroup,
          topics: [
            {
              topic: this.topic,
              // kafkajs passes `metadata` on to TxnOffsetCommit; its types leave it out.
              partitions: [{ partition: this.partition, offset, metadata } as PartitionOffset],
            },
          ],
        });
      }
      await transaction.commit();
      this.transaction = undefined;
      this.context.metrics.commitSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
      if (offset !== undefined) this.committedOffset = offset;
    });
  }

  private call(work: () => Promise<void>): void {
    this.queuedCalls += 1;
    this.producerCalls = this.producerCalls.then(async () => {
      try {
        if (!this.broken) await work();
      } catch (error) {
        this.broken = true;
        this.logger.error(
          { err: error },
          'producing failed; the partition restarts from its last commit',
        );
      } finally {
        this.queuedCalls -= 1;
      }
    });
  }

  private async currentTransaction(): Promise<Transaction> {
    if (!this.producer) throw new Error('the task is closed');
    this.transaction ??= await this.producer.transaction();
    return this.transaction;
  }

  private async abortOpen(): Promise<void> {
    this.pending.clear();
    const transaction = this.transaction;
    this.transaction = undefined;
    this.dirty = false;
    this.nextOffset = undefined;
    if (transaction?.isActive()) await transaction.abort();
  }

  /**
   * Runs one state change at a time (batches, ticks and syncs of a task never interleave) and
   * marks the task broken when one fails: its state can no longer be trusted.
   */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      if (this.broken) throw new Error('the task is broken; it is being replaced');
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

/**
 * kafkajs puts all of a request's records for one partition into one record batch, which the
 * broker refuses above `max.message.bytes` (1 MiB by default): requests are cut well below that
 * (string lengths count UTF-16 units, at most 3 UTF-8 bytes each).
 */
const REQUEST_BYTES = 256 * 1024;

function chunked(pending: Map<string, Message[]>): TopicMessages[][] {
  const requests: TopicMessages[][] = [];
  let request: TopicMessages[] = [];
  let bytes = 0;
  for (const [topic, messages] of pending) {
    let current: Message[] = [];
    request.push({ topic, messages: current });
    for (const message of messages) {
      const size = sizeOf(message.key) + sizeOf(message.value) + 64;
      if (bytes + size > REQUEST_BYTES && bytes > 0) {
        requests.push(request);
        current = [];
        request = [{ topic, messages: current }];
        bytes = 0;
      }
      current.push(message);
      bytes += size;
    }
  }
  requests.push(request);
  return requests.map((topics) => topics.filter((t) => t.messages.length > 0));
}

function sizeOf(value: Message['value'] | Message['key']): number {
  if (value === null || value === undefined) return 0;
  return value.length;
}
