// A task's transactional producer (docs/design.md §5): its id `<group>.<topic>.<partition>` is the EOS-v1
// scheme that lets a new owner fence a zombie. It owns open/fence/begin/send/commit/abort; calls
// run one at a time, in order, behind the task, so a batch hands its records over and returns
// while the broker takes them (the commit round trips would otherwise stall consumption).
import type {
  ConsumerGroupMetadata,
  Kafka,
  PartitionOffset,
  Producer,
  TopicMessages,
  Transaction,
} from 'kafkajs';
import type { Logger } from 'pino';

import { KAFKAJS_BROKER_RETRY, KeyPartitioner, onTopics, withDenialsNamed } from '@sluice/kafka';
import type { AskedFor } from '@sluice/kafka';

import type { RecordCollector } from './record-collector';
import type { TaskTransactions } from './task-transactions';
import type { TransactionJournal } from './transaction-journal';

export function transactionalId(group: string, topic: string, partition: number): string {
  return `${group}.${topic}.${partition}`;
}

export interface OffsetToCommit {
  groupId: string;
  topic: string;
  partition: number;
  offset: string;
  metadata: string | undefined;
  /**
   * The consumer's generation and member id the commit speaks for (TxnOffsetCommit v3): the
   * group coordinator refuses it once a later generation has begun. `undefined`: none is
   * named, and only the producer's fence guards the commit (a task outside a group).
   */
  member?: ConsumerGroupMetadata | undefined;
}

export class TaskProducer implements TaskTransactions {
  private producer: Producer | undefined;
  private transaction: Transaction | undefined;
  private calls: Promise<void> = Promise.resolve();
  private queued = 0;
  /** Whether the journal has begun the current transaction's entry. */
  private journaled = false;
  /** The first failure of a queued call: every later call is skipped, and the task replaced. */
  private failure: unknown;

  constructor(
    private readonly kafka: Kafka,
    readonly id: string,
    private readonly logger: Logger,
    /** Where each transaction's writes are noted, from the broker's answers. */
    private readonly journal: TransactionJournal,
    private readonly onCommitSeconds: (seconds: number) => void = () => undefined,
  ) {}

  /** The error a queued send or commit failed with, if one did. */
  get error(): unknown {
    return this.failure;
  }

  /** Calls queued and not finished yet (the task slows its input down when this grows). */
  get backlog(): number {
    return this.queued;
  }

  /**
   * A new producer for this id, whose InitProducerId fences every earlier one (another
   * replica's, or this task's own) and settles its transaction: the coordinator answers only
   * once an open transaction is aborted and a pending commit's markers are written (kafkajs
   * retries CONCURRENT_TRANSACTIONS meanwhile). What is read after this is final.
   */
  async fence(): Promise<void> {
    await this.idle();
    await this.disconnect();
    this.failure = undefined;
    const producer = this.kafka.producer({
      transactionalId: this.id,
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: KeyPartitioner,
      retry: KAFKAJS_BROKER_RETRY,
    });
    this.producer = producer;
    await withDenialsNamed(this.asked(), async () => {
      await producer.connect();
      this.transaction = await producer.transaction();
    });
    // Journaled on first use, not here: what the journal holds from before the fence is what
    // the task reads next to settle a transaction left open (open-transactions.ts).
    this.journaled = false;
  }

  /** Queues records to send in the current transaction (begun when needed). */
  send(records: RecordCollector): void {
    const requests = records.drain();
    if (requests.length === 0) return;
    const topics = [...new Set(requests.flat().map((request) => request.topic))];
    this.call(
      async () => {
        const transaction = await this.current();
        for (const topicMessages of requests)
          this.journal.wrote(await transaction.sendBatch({ topicMessages }));
      },
      { topic: onTopics('Write', topics) },
    );
  }

  /**
   * Queues the commit of the current transaction, with `offset` committed in it; `onCommitted`
   * runs once the coordinator has accepted it (the markers follow, written by the broker).
   */
  commit(offset: OffsetToCommit | undefined, onCommitted: () => void): void {
    const asked = offset && {
      group: `Read on group ${offset.groupId}`,
      topic: onTopics('Read', [offset.topic]),
    };
    this.call(async () => {
      const transaction = await this.current();
      const started = process.hrtime.bigint();
      // Noted before the offset commit goes out: once it has, the transaction's outcome is the
      // coordinator's to decide, whatever answer comes back (open-transactions.ts).
      this.journal.committing(offset?.offset);
      if (offset) {
        await transaction.sendOffsets({
          consumerGroupId: offset.groupId,
          ...(offset.member && { consumerGroupMetadata: offset.member }),
          topics: [
            {
              topic: offset.topic,
              // kafkajs passes `metadata` on to TxnOffsetCommit; its types leave it out.
              partitions: [
                {
                  partition: offset.partition,
                  offset: offset.offset,
                  metadata: offset.metadata,
                } as PartitionOffset,
              ],
            },
          ],
        });
      }
      await transaction.commit();
      this.transaction = undefined;
      this.journal.acknowledged();
      this.onCommitSeconds(Number(process.hrtime.bigint() - started) / 1e9);
      onCommitted();
    }, asked);
  }

  /**
   * Aborts a transaction of this id that hangs: its records have no marker though the
   * coordinator holds it complete, so only a marker of this producer id can end it. One record
   * to each of `requests`' partitions and the offset (so that the group's pending commit is in
   * the transaction too), then an abort: its markers discard the hanging records and offset.
   */
  async settleHanging(requests: TopicMessages[], offset: OffsetToCommit): Promise<void> {
    await this.idle();
    if (this.failure !== undefined) throw this.failure;
    const transaction = await this.current();
    try {
      this.journal.wrote(await transaction.sendBatch({ topicMessages: requests }));
      await transaction.sendOffsets({
        consumerGroupId: offset.groupId,
        topics: [
          {
            topic: offset.topic,
            partitions: [{ partition: offset.partition, offset: offset.offset }],
          },
        ],
      });
    } finally {
      // Aborted whether or not every write went through: what did is what the abort ends.
      await transaction.abort();
      this.transaction = undefined;
    }
  }

  /** The producer id and epoch the fence gave this task's producer (what its markers carry). */
  identity(): { producerId: string; producerEpoch: number } | undefined {
    return this.producer?.transactionalIdentity();
  }

  /** Resolves once every queued call has finished (whether or not it succeeded). */
  idle(): Promise<void> {
    return this.calls;
  }

  /** Aborts the open transaction, if any: its records are never read committed. */
  async abort(): Promise<void> {
    await this.idle();
    const transaction = this.transaction;
    this.transaction = undefined;
    if (transaction?.isActive()) await transaction.abort();
  }

  /** Aborts what is open and disconnects; the task is done with this producer. */
  async close(): Promise<void> {
    await this.abort().catch(() => undefined);
    await this.disconnect();
  }

  private async disconnect(): Promise<void> {
    const producer = this.producer;
    this.producer = undefined;
    this.transaction = undefined;
    await producer?.disconnect().catch(() => undefined);
  }

  /** What this producer's requests need granted, with `more` of one call: named when refused. */
  private asked(more: AskedFor = {}): AskedFor {
    return { 'transactional id': `Write on transactional id ${this.id}`, ...more };
  }

  private call(work: () => Promise<void>, asked?: AskedFor): void {
    this.queued += 1;
    this.calls = this.calls.then(async () => {
      try {
        if (this.failure === undefined) await withDenialsNamed(this.asked(asked), work);
      } catch (error) {
        this.failure = error;
        this.logger.error({ err: error }, 'producing failed; the task will be replaced');
      } finally {
        this.queued -= 1;
      }
    });
  }

  private async current(): Promise<Transaction> {
    if (!this.producer) throw new Error(`the producer ${this.id} is not open`);
    if (this.transaction === undefined) {
      this.transaction = await this.producer.transaction();
      this.journaled = false;
    }
    if (!this.journaled) {
      this.journal.begin(this.identity()?.producerEpoch);
      this.journaled = true;
    }
    return this.transaction;
  }
}
