// What both join stages keep beside their buffers: the watermark, the horizon before which a
// record is late, and the entries changed since the changelog last took them.
import type { StateEntry } from '../stateful/stage';
import { WATERMARK_KEY } from '../stateful/stage';

export abstract class JoinState {
  private current = -Infinity;
  private readonly changed: Set<string> | undefined;
  /**
   * Keys first written since the last drain: one gone again by the drain was never in the
   * changelog, so it needs no tombstone (most of a join's records live less than a batch).
   */
  private readonly born: Set<string> | undefined;

  constructor(
    protected readonly latenessMs: number,
    trackChanges: boolean | undefined,
  ) {
    if (!(latenessMs >= 0))
      throw new Error(`latenessMs must be a number of ms at least 0, not ${latenessMs}`);
    this.changed = trackChanges ? new Set() : undefined;
    this.born = trackChanges ? new Set() : undefined;
  }

  /** The current watermark, epoch ms (-Infinity before any). */
  watermark(): number {
    return this.current;
  }

  /** Changes since the last call (only when created with `trackChanges`). */
  drainChanges(): StateEntry[] {
    if (!this.changed || this.changed.size === 0) return [];
    const entries: StateEntry[] = [];
    for (const key of this.changed) {
      const value = this.snapshotKey(key);
      if (value !== null || !this.born!.has(key)) entries.push({ key, value });
    }
    this.changed.clear();
    this.born!.clear();
    return entries;
  }

  /** An entry's value now (`null`: it is gone). */
  abstract snapshotKey(key: string): unknown;
  /** The watermark moved to `eventTime` (it never goes back). */
  abstract advanceTo(eventTime: number): void;
  /** End of input: whatever waits is decided as if time had run out. */
  abstract flush(): void;
  /** Entries held. */
  abstract size(): number;
  abstract snapshot(): StateEntry[];
  /** Applies entries in order (a later entry for a key wins; `null` deletes). */
  abstract restore(entries: Iterable<StateEntry>): void;
  abstract clear(): void;

  /** The keys `snapshot` gives (StatefulStage). */
  stateKeys(): string[] {
    return this.snapshot().map((entry) => entry.key);
  }

  /** Whether a restored entry of `key` may come as JSON text (StatefulStage). */
  restoresJsonText(_key: string): boolean {
    return false;
  }

  /** Records older than this are late. */
  protected horizon(): number {
    return this.current - this.latenessMs;
  }

  /** Moves the watermark to `eventTime`; false when that is not forward. */
  protected moveWatermark(eventTime: number): boolean {
    if (eventTime <= this.current) return false;
    this.current = eventTime;
    this.touch(WATERMARK_KEY);
    return true;
  }

  protected touch(key: string): void {
    this.changed?.add(key);
  }

  /** A key that did not exist before: see `born`. */
  protected touchNew(key: string): void {
    if (!this.changed!.has(key)) this.born!.add(key);
    this.changed!.add(key);
  }

  /** Whether changes are tracked: callers skip building a key nobody will read. */
  protected get tracking(): boolean {
    return this.changed !== undefined;
  }

  /** The watermark's entry for a snapshot (none before any). */
  protected watermarkEntries(): StateEntry[] {
    return this.current > -Infinity ? [{ key: WATERMARK_KEY, value: this.current }] : [];
  }

  protected watermarkValue(): number | null {
    return this.current > -Infinity ? this.current : null;
  }

  /** Takes a restored entry if it is the watermark's; false otherwise. */
  protected restoreWatermark(entry: StateEntry): boolean {
    if (entry.key !== WATERMARK_KEY) return false;
    this.current = entry.value === null ? -Infinity : (entry.value as number);
    return true;
  }

  protected resetWatermark(): void {
    this.current = -Infinity;
    this.changed?.clear();
    this.born?.clear();
  }
}
