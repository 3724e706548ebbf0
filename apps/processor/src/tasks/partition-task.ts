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
  /** How many partitions a topic has (for the sweep). */
  partitionsOf(topic: string): Promise<number>;
}

/** Topics a task writes to: every partition of `all`, its own partition of `own`. */
export interface WrittenTopics {
  all: string[];
  own: string[];
}

/** Key of the records of the sweep transaction, which is always aborted (see `sweep`). */
export const SWEEP_KEY = '~sluice|sweep';

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
  /** Every topic this task's transactions may write to (the offsets topic aside). */
  protected abstract writtenTopics(): WrittenTopics;

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
   * Fences the partition (see `fence`), so that what is read next (the changelog, then the
   * committed offset at the first batch) is final, and restores the state.
   */
  async open(): Promise<void> {
    await this.fence();
    await this.rebuild();
    this.fresh = true;
  }

  /**
   * Takes the partition's transactional id over and settles everything written under it
   * before: the new producer's InitProducerId completes or aborts the last transaction the
   * coordinator knows of, and the sweep aborts what it cannot know of (see `sweep`).
   */
  private async fence(): Promise<void> {
    await this.startProducer();
    await this.sweep();
  }

  /**
   * One transaction that writes a record to every partition this task may write to and
   * commits offsets, then aborts. A single-node broker restarted while a transaction commits
   * can lose commit markers it had acknowledged (README, Known issues): the coordinator records
   * the transaction as committed, but its records, changelog entries and offset commit hang,
   * invisible to read_committed readers, until the next marker of the same producer id lands
   * in each partition, which would then make them visible after the work had been redone from
   * the state before them. This transaction's abort marker lands in every such partition first
   * and settles them as aborted, consistently: the state, the offsets and the outputs are then
   * all as they were before the lost transaction, whose work is redone once. Its own records
   * are aborted too: read_committed readers never see them.
   */
  private async sweep(): Promise<void> {
    const { all, own } = this.writtenTopics();
    const topicMessages: TopicMessages[] = [];
    for (const topic of all) {
      const count = await this.context.partitionsOf(topic);
      topicMessages.push({
        topic,
        messages: Array.from({ length: count }, (_, partition) => ({
          partition,
          key: SWEEP_KEY,
          value: null,
        })),
      });
    }
    for (const topic of own)
      topicMessages.push({
        topic,
        messages: [{ partition: this.partition, key: SWEEP_KEY, value: null }],
      });
    const transaction = this.transaction!;
    if (topicMessages.length > 0) await transaction.sendBatch({ topicMessages });
    await transaction.sendOffsets({
      consumerGroupId: this.context.consumerGroup,
      topics: [{ topic: this.topic, partitions: [{ partition: this.partition, offset: '0' }] }],
    });
    await transaction.abort();
    this.transaction = await this.producer!.transaction();
    this.transactionStarted = Date.now();
  }

  /**
   * A producer for this partition's transactional id, with a transaction begun: its
   * InitProducerId fences any other producer of the id (a previous owner, or this task's own
   * previous producer) and settles that producer's last transaction, committed or aborted.
   */
  private async startProducer(): Promise<void> {
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
    const previous = this.producer;
    this.producer = producer;
    this.transaction = undefined;
    try {
      await producer.connect();
      this.transaction = await producer.transaction();
    } finally {
      await previous?.disconnect().catch(() => undefined);
    }
    this.transactionStarted = Date.now();
  }

  /**
   * Makes sure the state matches where the consumer reads from: after a rebalance kafkajs reads
   * from the group's committed offset, so work not committed yet is thrown away and redone.
   * Returns the offset to seek to when the batch that came does not start there: the committed
   * offset, or the partition's first (`earliest`) when nothing is committed yet, since the
   * consumer may have read past records whose work was lost with a replaced task.
   *
   * The committed offset is read only right after the partition was fenced (a new producer and
   * the sweep): OffsetFetch cannot ask for stable offsets through kafkajs, and the fencing is
   * what makes every earlier transaction of the partition final. Then the group's offset is the
   * truth, even below this task's own last commit: the broker may have lost that commit's
   * markers, and the sweep has aborted it.
   */
  sync(
    fetchedOffset: string,
    readCommitted: () => Promise<CommittedOffset | undefined>,
    earliest: () => Promise<string>,
  ) {
    return this.exclusive(async () => {
      await this.producerCalls;
      if (this.broken) throw new Error('producing failed while the partition was handed over');
      const clean = !this.dirty;
      if (!this.fresh) {
        // Whatever the old producer had open is aborted by the fencing: not clean any more.
        this.pending.clear();
        await this.fence();
      }
      const committed = await readCommitted();
      const first = committed === undefined ? await earliest() : undefined;
      const groupOffset = committed?.offset;
      const inSync = this.fresh || (clean && groupOffset === this.committedOffset);
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
      this.logger.info(
        { fetched: fetchedOffset, committed: groupOffset, resume_at: resumeAt, rebuilt: !inSync },
        'partition synced with the group',
      );
      return resumeAt !== fetchedOffset ? resumeAt : undefined;
    });
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
