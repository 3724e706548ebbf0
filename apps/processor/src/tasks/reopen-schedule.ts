// When a failed task's partition is opened again: after a short fixed pause for a fenced task
// (it was handed over, nothing is wrong with it), after a back-off growing with each failure in a
// row for any other (0.25 s doubling to 60 s), so one bad partition never spins.
import { backoffDelay, FAILURE_BACKOFF } from '../support/backoff';
import type { TaskErrorKind } from './task-errors';

/** A fenced task's partition is opened again after this pause (not a growing back-off). */
export const MIGRATED_PAUSE_MS = 1_000;

export class ReopenSchedule {
  /** Failures in a row, by partition. */
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();

  /** Whether the partition waits to be opened again. */
  has(key: string): boolean {
    return this.timers.has(key);
  }

  keys(): IterableIterator<string> {
    return this.timers.keys();
  }

  /**
   * The partition's task failed: `reopen` runs once the pause is over (a later failure
   * replaces it). Returns the attempt and the pause.
   */
  schedule(
    key: string,
    kind: TaskErrorKind,
    reopen: () => void,
  ): { attempt: number; retryInMs: number } {
    const attempt = this.count(key);
    const retryInMs =
      kind === 'task-migrated' ? MIGRATED_PAUSE_MS : backoffDelay(attempt, FAILURE_BACKOFF);
    const previous = this.timers.get(key);
    if (previous) clearTimeout(previous);
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        reopen();
      }, retryInMs),
    );
    return { attempt, retryInMs };
  }

  /**
   * Counts a failure in a row of the partition's task. Called alone when another task already
   * took its place: nothing to reopen, but a failure that keeps coming still backs off further.
   */
  count(key: string): number {
    const attempt = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, attempt);
    return attempt;
  }

  /** A batch went through: the next failure starts the back-off over. */
  succeeded(key: string): void {
    this.failures.delete(key);
  }

  /** The partition is no longer ours: no reopening, and its failures are forgotten. */
  forget(key: string): void {
    const timer = this.timers.get(key);
    if (timer) clearTimeout(timer);
    this.timers.delete(key);
    this.failures.delete(key);
  }

  forgetAll(): void {
    for (const key of [...this.timers.keys()]) this.forget(key);
  }
}
