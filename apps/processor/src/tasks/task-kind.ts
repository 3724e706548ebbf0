// What a kind of task (source-task.ts, stateful-task.ts) provides to the machinery of task.ts:
// how it handles records, restores and refreshes its state, and what it adds to a commit. The
// machinery calls these one at a time, never concurrently (task.ts runs a task's work in turn).
import type { WrittenPartitions } from './committed-offset';
import type { InputMessage } from './input-batch';

export abstract class TaskKind {
  /** Handles a batch's records: every output goes through `send`. */
  protected abstract handle(messages: InputMessage[]): void;
  /**
   * Records before the task's position, read again: after a restore that asked for them
   * (`rereadFrom`), or delivered again by kafkajs. Their effects are in the state already;
   * only what the state keeps outside its changelog is taken again. Default: ignored.
   */
  protected reread(_messages: InputMessage[]): void {}
  /**
   * At a resume: where the consumer must read from for `reread`, before the committed offset
   * (`undefined`: from the committed offset) — after a rebuild, or to finish a re-read that a
   * rebalance interrupted.
   */
  protected rereadFrom(): string | undefined {
    return undefined;
  }
  /** Work the wall clock triggers (idle flushes); may `send`. */
  protected abstract onTick(now: number): void;
  /** Replaces the in-memory state by what the committed logs hold. */
  protected abstract restoreState(): Promise<void>;
  /** Called before each batch and tick: adopt definition changes. */
  protected abstract refresh(): void;
  /** Every topic (and its partitions) this task may write to: what a hanging sweep covers. */
  protected abstract writtenPartitions(): Promise<WrittenPartitions>;
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

  /**
   * Whether work the task holds outside the records it sent waits for the next commit (a
   * source's folded partials of a node that emits on them, or a marker due); if nothing does,
   * the transaction may stay open for the quiet interval (task-output.ts).
   */
  protected awaitsCommit(): boolean {
    return false;
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
}
