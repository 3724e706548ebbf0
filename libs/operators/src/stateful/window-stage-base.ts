import type { StateEntry } from './stage';
import { WATERMARK_KEY } from './stage';
import { StageBase } from './stage-base';
import type { StageOptions } from './stage-base';

export interface WindowStageOptions extends StageOptions {
  latenessMs: number;
  idleTimeoutMs?: number;
  emitUpdates: boolean;
}

/**
 * What tumbling, sliding and session windows share: the watermark (event time minus the allowed
 * lateness), firing as it advances, the idle-timeout flush, and the watermark's state entry.
 */
export abstract class WindowStageBase extends StageBase {
  protected readonly lateness: number;
  protected readonly emitUpdates: boolean;
  private readonly idleTimeout: number | undefined;
  protected wm = -Infinity;
  private activeSinceTick = false;
  private lastActivity: number | undefined;

  constructor(options: WindowStageOptions) {
    super(options);
    this.lateness = options.latenessMs;
    this.idleTimeout = options.idleTimeoutMs;
    this.emitUpdates = options.emitUpdates;
  }

  /** Fires every open window whose end the watermark has reached. */
  protected abstract fireUntil(watermark: number): void;
  /** The latest end among open windows (-Infinity when none is open). */
  protected abstract latestOpenEnd(): number;
  abstract size(): number;

  /** Input arrived: the stage is not idle. */
  protected markActive(): void {
    this.activeSinceTick = true;
  }

  advanceTo(eventTime: number): void {
    const watermark = eventTime - this.lateness;
    if (watermark <= this.wm) return;
    this.wm = watermark;
    this.touch(WATERMARK_KEY);
    this.activeSinceTick = true;
    this.fireUntil(watermark);
  }

  onWallClock(now: number): void {
    if (this.activeSinceTick || this.lastActivity === undefined) {
      this.activeSinceTick = false;
      this.lastActivity = now;
      return;
    }
    if (
      this.idleTimeout !== undefined &&
      this.size() > 0 &&
      now - this.lastActivity >= this.idleTimeout
    ) {
      this.flush();
      this.lastActivity = now;
    }
  }

  /**
   * Fires every open window and moves the watermark to the latest end among them, so an event
   * for a flushed window that still arrives is reported late rather than opening it twice.
   */
  flush(): void {
    const latestEnd = Math.max(this.wm, this.latestOpenEnd());
    if (latestEnd > this.wm) {
      this.wm = latestEnd;
      this.touch(WATERMARK_KEY);
    }
    this.fireUntil(Infinity);
  }

  watermark(): number {
    return this.wm;
  }

  /** The watermark's entry for a snapshot; none before any event time. */
  protected watermarkEntries(): StateEntry[] {
    return Number.isFinite(this.wm) ? [{ key: WATERMARK_KEY, value: { watermark: this.wm } }] : [];
  }

  protected watermarkValue(): unknown {
    return Number.isFinite(this.wm) ? { watermark: this.wm } : undefined;
  }

  protected restoreWatermark(value: unknown): void {
    const watermark = (value as { watermark?: unknown } | null)?.watermark;
    this.wm = typeof watermark === 'number' ? watermark : -Infinity;
  }
}
