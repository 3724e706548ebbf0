// What a task has handled since its last commit: the records it collected and has not handed to
// its producer yet, whether there is anything to commit, whether a reader waits for it, and when
// its transaction began (the commit interval runs from there). A transaction no reader waits for
// (state changes, positions, partials of windows that fire on the watermark) is quiet: it may
// collect for the longer quiet interval, so that many tasks commit far fewer transactions
// without delaying a single result. A task asks for its next commit only once its last one is
// answered, as Kafka Streams commits synchronously: commits asked for faster than the broker
// answers them would queue up behind each other, each holding the task back (`backlog`).
import type { ConsumerGroupMetadata, Message } from 'kafkajs';

import { RecordCollector } from './record-collector';
import type { OffsetToCommit } from './task-producer';
import type { TaskTransactions } from './task-transactions';

export interface CommitIntervals {
  /** COMMIT_INTERVAL_MS: a transaction a reader waits for. */
  commitMs: number;
  /** QUIET_COMMIT_INTERVAL_MS: one no reader waits for (at least `commitMs`). */
  quietMs: number;
}

export class TaskOutput {
  private readonly collector = new RecordCollector();
  /** Work handled since the last queued commit (records, or only a position that moved). */
  private pending = false;
  /** A record a reader waits for was collected since the last queued commit. */
  private awaited = false;
  private startedAt = 0;
  /** The last commit asked for is not answered yet. */
  private unanswered = false;

  constructor(
    private readonly producer: TaskTransactions,
    private readonly intervals: CommitIntervals,
    /** The group and input partition whose offset each commit moves. */
    private readonly input: Omit<OffsetToCommit, 'offset' | 'metadata' | 'member'>,
  ) {}

  get hasPending(): boolean {
    return this.pending;
  }

  /** `awaited`: a reader waits for it (a result, a DLQ record); not a state change. */
  add(topic: string, message: Message, awaited: boolean): void {
    this.collector.add(topic, message);
    if (awaited) this.awaited = true;
  }

  /** Work was handled: the next commit has a position to move, even with no record. */
  handled(): void {
    this.pending = true;
  }

  /** Hands what was collected to the producer, into the open transaction. */
  flush(): void {
    if (this.collector.isEmpty) return;
    this.pending = true;
    this.producer.send(this.collector);
  }

  /**
   * Whether there is work to commit and its interval has passed since the transaction began:
   * the commit interval if a reader waits for it (`awaitedElsewhere`: for work the task holds
   * outside the collected records), else the quiet interval.
   */
  due(now: number, awaitedElsewhere: boolean): boolean {
    if (!this.pending || this.unanswered) return false;
    const { commitMs, quietMs } = this.intervals;
    return now - this.startedAt >= (this.awaited || awaitedElsewhere ? commitMs : quietMs);
  }

  /**
   * Queues the commit of the transaction, with the input's `offset` and its `metadata` in it
   * (`undefined`: no offset to commit yet), committed as `member` of the group; a new
   * transaction begins now.
   */
  commit(
    offset: string | undefined,
    metadata: string | undefined,
    member: ConsumerGroupMetadata | undefined,
    onCommitted: () => void,
  ) {
    this.flush();
    this.pending = false;
    this.awaited = false;
    this.startedAt = Date.now();
    this.unanswered = true;
    this.producer.commit(
      offset === undefined ? undefined : { ...this.input, offset, metadata, member },
      () => {
        this.unanswered = false;
        onCommitted();
      },
    );
  }

  /**
   * Forgets what was collected and not handed over (a fence aborts what was), and a commit
   * that failed and so is never answered.
   */
  discard(): void {
    this.collector.clear();
    this.pending = false;
    this.awaited = false;
    this.unanswered = false;
  }

  /** A transaction begins now (the task resumed). */
  begin(): void {
    this.startedAt = Date.now();
  }
}
