// A windowed stream-stream join (issue 17; Flink's interval join, Kafka Streams' KStream-KStream
// join): a left record at time tl joins every right record of the same key whose time tr lies
// in [tl - before, tl + after], and so a right record joins every left record with tl in
// [tr - after, tr + before]. A pair is emitted when its second record arrives, with the later of
// the two times. Pure: the caller gives each record's join key, event time and a unique id, and
// moves the watermark; the state is plain entries that a compacted changelog can mirror.
//
// Why the results do not depend on the order the two inputs interleave in: a record older than
// the watermark minus the allowed lateness is late (reported, not joined), and a buffered record
// is dropped only once the watermark minus the lateness is past the last time a partner could
// have; so every partner of a record that is not late is still buffered when it arrives. For a
// left (outer) join, a left (either) record that never matched is emitted once, when it is
// dropped: no partner can come after that, so a match that arrives in time is never also
// reported as unmatched.
import { MinHeap } from '../stateful/min-heap';
import type { StateEntry } from '../stateful/stage';
import { WATERMARK_KEY } from '../stateful/stage';
import { JoinState } from './join-state';

export type JoinSide = 'left' | 'right';
export type JoinKind = 'inner' | 'left' | 'outer';

export interface JoinInput {
  side: JoinSide;
  /** The join key (the value at the join's `on` path). */
  key: string;
  /** Event time, epoch ms. */
  time: number;
  /** Unique among all records of both inputs (for instance topic/partition/offset). */
  id: string;
  /** What the output carries of it. */
  value: unknown;
}

export interface JoinedRecord {
  key: string;
  /** The later of the two times (an unmatched record's own). */
  time: number;
  /** `null`: no partner on that side (left and outer joins). */
  left: unknown;
  right: unknown;
}

export interface JoinEmitter {
  joined(record: JoinedRecord): void;
  /** A record older than the watermark minus the allowed lateness: not joined. */
  late(input: JoinInput, watermark: number): void;
}

export interface IntervalJoinOptions {
  kind: JoinKind;
  /** How far before a left record's time a right record may lie, ms (≥ 0). */
  beforeMs: number;
  /** How far after a left record's time a right record may lie, ms (≥ 0). */
  afterMs: number;
  /** How long after the watermark a record is still joined, ms (≥ 0). */
  latenessMs: number;
  emitter: JoinEmitter;
  /** Record changed entries for `drainChanges` (the processor's changelog). */
  trackChanges?: boolean;
}

interface Buffered {
  side: JoinSide;
  key: string;
  time: number;
  id: string;
  value: unknown;
  matched: boolean;
}

/** A buffered record as a changelog entry's value. */
interface BufferedEntry {
  s: 'l' | 'r';
  k: string;
  t: number;
  v: unknown;
  m: boolean;
}

const entryKey = (id: string) => `j${id}`;

export class IntervalJoin extends JoinState {
  /** Buffered records by join key, each side in arrival order. */
  private readonly byKey = new Map<string, { left: Buffered[]; right: Buffered[] }>();
  private readonly byId = new Map<string, Buffered>();
  /** Buffered records by the time after which no partner can arrive. */
  private readonly expiries = new MinHeap<string>();

  constructor(private readonly options: IntervalJoinOptions) {
    super(options.latenessMs, options.trackChanges);
    const { beforeMs, afterMs } = options;
    for (const [name, ms] of Object.entries({ beforeMs, afterMs }))
      if (!(ms >= 0)) throw new Error(`${name} must be a number of ms at least 0, not ${ms}`);
  }

  add(input: JoinInput): void {
    // Ids are unique; a repeat is ignored rather than left to corrupt the buffers.
    if (this.byId.has(input.id)) return;
    if (input.time < this.horizon()) {
      this.options.emitter.late(input, this.watermark());
      return;
    }
    // Not a spread of `input`: V8 builds a spread plus a new field the slow way.
    const record: Buffered = {
      side: input.side,
      key: input.key,
      time: input.time,
      id: input.id,
      value: input.value,
      matched: false,
    };
    const buffers = this.buffersOf(input.key);
    const partners = input.side === 'left' ? buffers.right : buffers.left;
    const [from, to] = this.partnerRange(record);
    for (const partner of partners) {
      if (partner.time < from || partner.time > to) continue;
      const [left, right] = input.side === 'left' ? [record, partner] : [partner, record];
      this.options.emitter.joined({
        key: input.key,
        time: Math.max(left.time, right.time),
        left: left.value,
        right: right.value,
      });
      record.matched = true;
      if (!partner.matched) {
        partner.matched = true;
        // Only an unmatched left (left join) or either (outer) record is ever emitted.
        if (this.tracking && this.emitsUnmatched(partner.side)) this.touch(entryKey(partner.id));
      }
    }
    (input.side === 'left' ? buffers.left : buffers.right).push(record);
    this.byId.set(record.id, record);
    this.expiries.push(this.expiresAt(record), record.id, record.id);
    if (this.tracking) this.touchNew(entryKey(record.id));
  }

  /**
   * The watermark moved to `eventTime` (it never goes back): records no partner can join any
   * more are dropped, those that never matched emitted as the join's kind says.
   */
  advanceTo(eventTime: number): void {
    if (!this.moveWatermark(eventTime)) return;
    const horizon = this.horizon();
    while (this.expiries.size > 0 && this.expiries.peekPriority() < horizon) this.expire();
  }

  /** End of input: every buffered record is dropped, as if time had run out. */
  flush(): void {
    while (this.expiries.size > 0) this.expire();
  }

  size(): number {
    return this.byId.size;
  }

  snapshot(): StateEntry[] {
    const entries: StateEntry[] = [...this.byId.keys()].map((id) => ({
      key: entryKey(id),
      value: this.snapshotKey(entryKey(id)),
    }));
    return [...entries, ...this.watermarkEntries()];
  }

  snapshotKey(key: string): unknown {
    if (key === WATERMARK_KEY) return this.watermarkValue();
    const record = this.byId.get(key.slice(1));
    if (!record) return null;
    const entry: BufferedEntry = {
      s: record.side === 'left' ? 'l' : 'r',
      k: record.key,
      t: record.time,
      v: record.value,
      m: record.matched,
    };
    return entry;
  }

  /** Applies entries in order (a later entry for a key wins; `null` deletes). */
  restore(entries: Iterable<StateEntry>): void {
    for (const entry of entries) {
      if (this.restoreWatermark(entry)) continue;
      const { key, value } = entry;
      const id = key.slice(1);
      this.remove(id);
      if (value === null) continue;
      const buffered = value as BufferedEntry;
      const record: Buffered = {
        side: buffered.s === 'l' ? 'left' : 'right',
        key: buffered.k,
        time: buffered.t,
        id,
        value: buffered.v,
        matched: buffered.m,
      };
      const buffers = this.buffersOf(record.key);
      (record.side === 'left' ? buffers.left : buffers.right).push(record);
      this.byId.set(id, record);
      this.expiries.push(this.expiresAt(record), id, id);
    }
  }

  clear(): void {
    this.byKey.clear();
    this.byId.clear();
    while (this.expiries.size > 0) this.expiries.pop();
    this.resetWatermark();
  }

  private emitsUnmatched(side: JoinSide): boolean {
    const { kind } = this.options;
    return kind === 'outer' || (kind === 'left' && side === 'left');
  }

  /** The times a partner of `record` may have, inclusive. */
  private partnerRange(record: Buffered): [number, number] {
    const { beforeMs, afterMs } = this.options;
    return record.side === 'left'
      ? [record.time - beforeMs, record.time + afterMs]
      : [record.time - afterMs, record.time + beforeMs];
  }

  /** The last time a partner of `record` can have: once the horizon passes it, it goes. */
  private expiresAt(record: Buffered): number {
    return this.partnerRange(record)[1];
  }

  private expire(): void {
    const id = this.expiries.pop()!;
    const record = this.byId.get(id);
    if (!record) return; // replaced by a restore
    this.remove(id);
    if (this.tracking) this.touch(entryKey(id));
    if (record.matched) return;
    const { kind, emitter } = this.options;
    if (record.side === 'left' && kind !== 'inner')
      emitter.joined({ key: record.key, time: record.time, left: record.value, right: null });
    else if (record.side === 'right' && kind === 'outer')
      emitter.joined({ key: record.key, time: record.time, left: null, right: record.value });
  }

  private remove(id: string): void {
    const record = this.byId.get(id);
    if (!record) return;
    this.byId.delete(id);
    const buffers = this.byKey.get(record.key)!;
    const list = record.side === 'left' ? buffers.left : buffers.right;
    list.splice(list.indexOf(record), 1);
    if (buffers.left.length === 0 && buffers.right.length === 0) this.byKey.delete(record.key);
  }

  private buffersOf(key: string) {
    let buffers = this.byKey.get(key);
    if (!buffers) {
      buffers = { left: [], right: [] };
      this.byKey.set(key, buffers);
    }
    return buffers;
  }
}
