import { copyAcc } from '../aggregate/aggregators';
import type { Accumulator } from '../aggregate/aggregators';
import type { PartialAggregate } from './combiner';
import { GroupTable } from './group-table';
import { MinHeap } from './min-heap';
import type { StageInput, StateEntry, StatefulStage } from './stage';
import { WATERMARK_KEY, groupStateKey, parseGroupStateKey } from './stage';
import { WindowStageBase } from './window-stage-base';
import type { WindowStageOptions } from './window-stage-base';

export interface HoppingWindowOptions extends WindowStageOptions {
  sizeMs: number;
  /** Equal to `sizeMs` for a tumbling window. */
  slideMs: number;
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
export class HoppingWindowStage extends WindowStageBase implements StatefulStage {
  private readonly sizeMs: number;
  private readonly slide: number;
  /** Open windows by start, each with an accumulator per (route, group). */
  private readonly windows = new Map<number, GroupTable<Accumulator>>();
  private readonly starts = new MinHeap<number>();
  /** Most events fall in the window the previous one did: skip the lookup by start. */
  private lastStart = NaN;
  private lastCells: GroupTable<Accumulator> | undefined;
  private cellCount = 0;

  constructor(options: HoppingWindowOptions) {
    super(options);
    this.sizeMs = options.sizeMs;
    this.slide = options.slideMs;
  }

  add(input: StageInput): void {
    const { time, value, route, group } = input;
    const size = this.sizeMs;
    let landed = false;
    for (let start = time - (time % this.slide); start + size > time; start -= this.slide) {
      if (start + size <= this.wm) continue;
      landed = true;
      const acc = this.accFor(start, route, group);
      this.aggregator.add(acc, value);
      if (this.tracking) this.touch(cellKey(start, groupStateKey(route, group)));
      if (this.emitUpdates) this.emitWindow(group, route, start, start + size, acc, false);
    }
    if (!landed) this.emitLate(input, this.wm);
    this.markActive();
  }

  addPartial(partial: PartialAggregate): void {
    const start = partial.start!;
    const { route, group } = partial;
    if (start + this.sizeMs <= this.wm) {
      this.emitLatePartial(partial, start, this.wm);
      return;
    }
    const acc = this.accFor(start, route, group);
    this.aggregator.merge(acc, partial.acc);
    if (this.tracking) this.touch(cellKey(start, groupStateKey(route, group)));
    if (this.emitUpdates) this.emitWindow(group, route, start, start + this.sizeMs, acc, false);
    this.markActive();
  }

  /** The accumulator of one (window, route, group), created empty on first use. */
  private accFor(start: number, route: string | undefined, group: string | null): Accumulator {
    const cells = this.cellsFor(start);
    let acc = cells.get(route, group);
    if (acc === undefined) {
      acc = this.aggregator.create();
      cells.set(route, group, acc);
      this.cellCount += 1;
    }
    return acc;
  }

  private cellsFor(start: number): GroupTable<Accumulator> {
    if (start === this.lastStart) return this.lastCells!;
    let cells = this.windows.get(start);
    if (cells === undefined) {
      cells = new GroupTable();
      this.windows.set(start, cells);
      this.starts.push(start, start);
    }
    this.lastStart = start;
    this.lastCells = cells;
    return cells;
  }

  size(): number {
    return this.cellCount;
  }

  protected latestOpenEnd(): number {
    let latest = -Infinity;
    for (const start of this.windows.keys()) latest = Math.max(latest, start + this.sizeMs);
    return latest;
  }

  protected fireUntil(watermark: number): void {
    while (this.starts.size > 0 && this.starts.peekPriority() + this.sizeMs <= watermark) {
      const start = this.starts.pop()!;
      const cells = this.windows.get(start);
      if (cells === undefined) continue;
      this.windows.delete(start);
      if (start === this.lastStart) this.forgetLastWindow();
      this.cellCount -= cells.size;
      const end = start + this.sizeMs;
      for (const [route, group, acc] of cells.entries()) {
        this.emitWindow(group, route, start, end, acc, true);
        if (this.tracking) this.touch(cellKey(start, groupStateKey(route, group)));
      }
    }
  }

  private forgetLastWindow(): void {
    this.lastStart = NaN;
    this.lastCells = undefined;
  }

  snapshot(): StateEntry[] {
    const entries = this.watermarkEntries();
    for (const [start, cells] of this.windows) {
      for (const [route, group] of cells.entries()) {
        const key = cellKey(start, groupStateKey(route, group));
        entries.push({ key, value: this.snapshotKey(key) });
      }
    }
    return entries;
  }

  snapshotKey(key: string): unknown {
    if (key === WATERMARK_KEY) return this.watermarkValue();
    const { start, route, group } = parseCellKey(key);
    const acc = this.windows.get(start)?.get(route, group);
    if (acc === undefined) return undefined;
    const json: CellJson = { group, start, acc: copyAcc(acc) };
    if (route !== undefined) json.route = route;
    return json;
  }

  restore(entries: Iterable<StateEntry>): void {
    this.forgetLastWindow();
    for (const { key, value } of entries) {
      if (key === WATERMARK_KEY) {
        this.restoreWatermark(value);
        continue;
      }
      const { start, route, group } = parseCellKey(key);
      let cells = this.windows.get(start);
      if (value === null || value === undefined) {
        if (cells?.delete(route, group)) this.cellCount -= 1;
        if (cells?.size === 0) this.windows.delete(start);
        continue;
      }
      if (cells === undefined) {
        cells = new GroupTable();
        this.windows.set(start, cells);
        this.starts.push(start, start);
      }
      if (cells.get(route, group) === undefined) this.cellCount += 1;
      cells.set(route, group, copyAcc((value as CellJson).acc));
    }
  }

  /** Drops all state; with change tracking, the next drain holds a deletion for every key. */
  clear(): void {
    if (this.tracking) for (const { key } of this.snapshot()) this.touch(key);
    this.windows.clear();
    this.starts.clear();
    this.forgetLastWindow();
    this.cellCount = 0;
    this.wm = -Infinity;
  }
}

function cellKey(start: number, stateKey: string): string {
  return `w${start}|${stateKey}`;
}

function parseCellKey(key: string): {
  start: number;
  route: string | undefined;
  group: string | null;
} {
  const bar = key.indexOf('|');
  if (key[0] !== 'w' || bar < 0) throw new Error(`not a window state key: ${key}`);
  return { start: Number(key.slice(1, bar)), ...parseGroupStateKey(key.slice(bar + 1)) };
}
