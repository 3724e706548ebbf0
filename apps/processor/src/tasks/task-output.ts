// What a task has handled since its last commit: the records it collected and has not handed to
// its producer yet, whether there is anything to commit, and when its transaction began (the
// commit interval runs from there).
import type { Message } from 'kafkajs';

import { RecordCollector } from './record-collector';
import type { OffsetToCommit, TaskProducer } from './task-producer';

export class TaskOutput {
  private readonly collector = new RecordCollector();
  /** Work handled since the last queued commit (records, or only a position that moved). */
  private pending = false;
  private startedAt = 0;

  constructor(
    private readonly producer: TaskProducer,
    private readonly commitIntervalMs: number,
    /** The group and input partition whose offset each commit moves. */
    private readonly input: Omit<OffsetToCommit, 'offset' | 'metadata'>,
  ) {}

  get hasPending(): boolean {
    return this.pending;
  }

  add(topic: string, message: Message): void {
    this.collector.add(topic, message);
  }

  /** Work was handled: the next commit has a position to move, even with no record. */
  handled(): void {
    this.pending = true;
  }

  /** Hands what was collected to the producer, into the open transaction. */
  flush(): void {
    if (this.collector.isEmpty) return;
    this.pending = true;
    this.producer.send(this.collector.drain());
  }

  /** Whether there is work to commit and the commit interval has passed since it began. */
  due(now: number): boolean {
    return this.pending && now - this.startedAt >= this.commitIntervalMs;
  }

  /**
   * Queues the commit of the transaction, with the input's `offset` and its `metadata` in it
   * (`undefined`: no offset to commit yet); a new transaction begins now.
   */
  commit(offset: string | undefined, metadata: string | undefined, onCommitted: () => void) {
    this.flush();
    this.pending = false;
    this.startedAt = Date.now();
    this.producer.commit(
      offset === undefined ? undefined : { ...this.input, offset, metadata },
      onCommitted,
    );
  }

  /** Forgets what was collected and not handed over (a fence aborts what was). */
  discard(): void {
    this.collector.clear();
    this.pending = false;
  }

  /** A transaction begins now (the task resumed). */
  begin(): void {
    this.startedAt = Date.now();
  }
}
