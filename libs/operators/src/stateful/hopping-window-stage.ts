import { copyAcc } from '../aggregate/aggregators';
import type { Accumulator } from '../aggregate/aggregators';
import { MinHeap } from './min-heap';
import type { StageInput, StateEntry, StatefulStage } from './stage';
import { WATERMARK_KEY, groupStateKey } from './stage';
import { StageBase, watermarkFromJson, watermarkToJson } from './stage-base';
import type { StageOptions } from './stage-base';

export interface HoppingWindowOptions extends StageOptions {
  sizeMs: number;
  /** Equal to `sizeMs` for a tumbling window. */
  slideMs: number;
  latenessMs: number;
  idleTimeoutMs?: number;
  emitUpdates: boolean;
}

interface Cell {
  group: string | null;
  route: string | undefined;
  acc: Accumulator;
}

interface CellJson {
  group: string | null;
  route?: string;
  start: number;
  acc: Accumulator;
}

/**
 * Tumbling and sliding (hopping) event-time windows, epoch-aligned `[start, start + size)` with
 * starts on multiples of the slide; an event lands in every window that covers it (Flink's
 * SlidingEventTimeWindows). A window fires when the watermark reaches its end.
 */
export class HoppingWindowStage extends StageBase implements StatefulStage {
  private readonly sizeMs: number;
  private readonly slide: number;
  private readonly lateness: number;
  private readonly idleTimeout: number | undefined;
  private readonly emitUpdates: boolean;
  /** Open windows by start, each with its cells by (route, group) state key. */
  private readonly windows = new Map<number, Map<string, Cell>>();
  private readonly starts = new MinHeap<number>();
  private wm = -Infinity;
  private activeSinceTick = false;
  private lastActivity: number | undefined;
  private cellCount = 0;

  constructor(options: HoppingWindowOptions) {
    super(options);
    this.sizeMs = options.sizeMs;
    this.slide = options.slideMs;
    this.lateness = options.latenessMs;
    this.idleTimeout = options.idleTimeoutMs;
    this.emitUpdates = options.emitUpdates;
  }

  add(input: StageInput): void {
    const { time, value } = input;
    const size = this.sizeMs;
    const lastStart = time - (time % this.slide);
    const stateKey = groupStateKey(input.route, input.group);
    let landed = false;
    for (let start = lastStart; start + size > time; start -= this.slide) {
      if (start + size <= this.wm) continue;
      landed = true;
      let cells = this.windows.get(start);
      if (cells === undefined) {
        cells = new Map();
        this.windows.set(start, cells);
        this.starts.push(start, start);
      }
      let cell = cells.get(stateKey);
      if (cell === undefined) {
        cell = { group: input.group, route: input.route, acc: this.aggregator.create() };
        cells.set(stateKey, cell);
        this.cellCount += 1;
      }
      this.aggregator.add(cell.acc, value);
      if (this.tracking) this.touch(cellKey(start, stateKey));
      if (this.emitUpdates)
        this.emitWindow(cell.group, cell.route, start, start + size, cell.acc, false);
    }
    if (!landed) this.emitLate(input, this.wm);
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
      this.cellCount > 0 &&
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
    let latestEnd = this.wm;
    for (const start of this.windows.keys()) latestEnd = Math.max(latestEnd, start + this.sizeMs);
    if (latestEnd > this.wm) {
      this.wm = latestEnd;
      this.touch(WATERMARK_KEY);
    }
    this.fireUntil(latestEnd);
  }

  watermark(): number {
    return this.wm;
  }

  size(): number {
    return this.cellCount;
  }

  private fireUntil(watermark: number): void {
    while (this.starts.peekPriority() + this.sizeMs <= watermark) {
      const start = this.starts.pop()!;
      const cells = this.windows.get(start);
      if (cells === undefined) continue;
      this.windows.delete(start);
      this.cellCount -= cells.size;
      const end = start + this.sizeMs;
      for (const [stateKey, cell] of cells) {
        this.emitWindow(cell.group, cell.route, start, end, cell.acc, true);
        if (this.tracking) this.touch(cellKey(start, stateKey));
      }
    }
  }

  snapshot(): StateEntry[] {
    const entries: StateEntry[] = [];
    if (Number.isFinite(this.wm))
      entries.push({ key: WATERMARK_KEY, value: this.snapshotKey(WATERMARK_KEY) });
    for (const [start, cells] of this.windows) {
      for (const stateKey of cells.keys()) {
        const key = cellKey(start, stateKey);
        entries.push({ key, value: this.snapshotKey(key) });
      }
    }
    return entries;
  }

  snapshotKey(key: string): unknown {
    if (key === WATERMARK_KEY)
      return Number.isFinite(this.wm) ? { watermark: watermarkToJson(this.wm) } : undefined;
    const { start, stateKey } = parseCellKey(key);
    const cell = this.windows.get(start)?.get(stateKey);
    if (cell === undefined) return undefined;
    const json: CellJson = { group: cell.group, start, acc: copyAcc(cell.acc) };
    if (cell.route !== undefined) json.route = cell.route;
    return json;
  }

  restore(entries: Iterable<StateEntry>): void {
    for (const { key, value } of entries) {
      if (key === WATERMARK_KEY) {
        this.wm =
          value === null
            ? -Infinity
            : watermarkFromJson((value as { watermark: unknown }).watermark);
        continue;
      }
      const { start, stateKey } = parseCellKey(key);
      let cells = this.windows.get(start);
      if (value === null || value === undefined) {
        if (cells?.delete(stateKey)) this.cellCount -= 1;
        if (cells?.size === 0) this.windows.delete(start);
        continue;
      }
      const json = value as CellJson;
      if (cells === undefined) {
        cells = new Map();
        this.windows.set(start, cells);
        this.starts.push(start, start);
      }
      if (!cells.has(stateKey)) this.cellCount += 1;
      cells.set(stateKey, { group: json.group, route: json.route, acc: copyAcc(json.acc) });
    }
  }

  /** Drops all state; with change tracking, the next drain holds a deletion for every key. */
  clear(): void {
    if (this.tracking) for (const { key } of this.snapshot()) this.touch(key);
    this.windows.clear();
    this.starts.clear();
    this.cellCount = 0;
    this.wm = -Infinity;
  }
}

function cellKey(start: number, stateKey: string): string {
  return `w${start}|${stateKey}`;
}

function parseCellKey(key: string): { start: number; stateKey: string } {
  const bar = key.indexOf('|');
  if (key[0] !== 'w' || bar < 0) throw new Error(`not a window state key: ${key}`);
  return { start: Number(key.slice(1, bar)), stateKey: key.slice(bar + 1) };
}
