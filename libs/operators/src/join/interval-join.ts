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
  /**
   * Whether buffered records go to the changelog (the default). Without, the caller keeps its
   * input and feeds it again after a restore from `oldestUnmirrored()` on (`replay`): the
   * processor re-reads its repartition topic, and the changelog holds only what the input cannot
   * tell again, which records a left or outer join has matched and which came late.
   */
  mirrorRecords?: boolean;
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

/**
 * What a changelog written without `mirrorRecords` holds of a record: that it matched (only a
 * record a left or outer join would emit unmatched), or that it came late, with the time its
 * interval closes (until then a replay could not tell it from one that did not).
 */
type RecordMark = { matched: true } | { late: number };

const MATCHED: RecordMark = { matched: true };

const entryKey = (id: string) => `j${id}`;

export class IntervalJoin extends JoinState {
  /** Buffered records by join key, each side in arrival order. */
  private readonly byKey = new Map<string, { left: Buffered[]; right: Buffered[] }>();
  private readonly byId = new Map<string, Buffered>();
  /** Buffered records by the time after which no partner can arrive. */
  private readonly expiries = new MinHeap<string>();
  /** Without `mirrorRecords`: buffered records restored from a changelog that mirrored them. */
  private readonly restoredIds = new Set<string>();
  /** Without `mirrorRecords`: matched records restored, marked so as they are replayed. */
  private readonly restoredMatched = new Set<string>();
  /** Without `mirrorRecords`: records found late whose interval is still open, with its end. */
  private readonly lateIds = new Map<string, number>();

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
      this.markLate(input);
      this.options.emitter.late(input, this.watermark());
      return;
    }
    const record = buffered(input);
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
      if (!partner.matched) this.markMatched(partner);
    }
    this.buffer(record, buffers);
    if (this.tracking && this.inChangelog(record)) this.touchNew(entryKey(record.id));
  }

  /**
   * A record read again after a restore (`mirrorRecords: false`): buffered again if it was
   * buffered at the commit the state was restored to, else ignored. It was, unless it came late
   * (marked so while its interval is open) or has expired since (its interval ended before the
   * horizon, which only grows). Its partners were all joined with it before the commit, so it
   * joins nothing now; whether it had matched is restored.
   */
  replay(input: JoinInput): void {
    if (this.byId.has(input.id) || this.lateIds.has(input.id)) return;
    const record = buffered(input);
    if (this.expiresAt(record) < this.horizon()) return;
    record.matched = this.restoredMatched.delete(record.id);
    this.buffer(record, this.buffersOf(record.key));
  }

  /**
   * The id of the oldest buffered record that is not in the changelog (`undefined`: none): a
   * restore must feed the input again from it on (`replay`). Ids are taken to be in input order.
   */
  oldestUnmirrored(): string | undefined {
    if (this.mirrors) return undefined;
    for (const id of this.byId.keys()) if (!this.restoredIds.has(id)) return id;
    return undefined;
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
    const entries: StateEntry[] = [];
    for (const id of [...this.byId.keys(), ...this.lateIds.keys()]) {
      const value = this.snapshotKey(entryKey(id));
      if (value !== null) entries.push({ key: entryKey(id), value });
    }
    return [...entries, ...this.watermarkEntries()];
  }

  snapshotKey(key: string): unknown {
    if (key === WATERMARK_KEY) return this.watermarkValue();
    const id = key.slice(1);
    const record = this.byId.get(id);
    if (!record) {
      const closes = this.lateIds.get(id);
      return closes === undefined ? null : ({ late: closes } satisfies RecordMark);
    }
    if (!this.mirrors && !this.restoredIds.has(id))
      return this.inChangelog(record) ? MATCHED : null;
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
      this.restoredMatched.delete(id);
      this.lateIds.delete(id);
      if (value === null) continue;
      const mark = value as RecordMark | BufferedEntry;
      if ('late' in mark) {
        this.lateIds.set(id, mark.late);
        this.expiries.push(mark.late, id, id);
        continue;
      }
      if ('matched' in mark) {
        this.restoredMatched.add(id);
        continue;
      }
      const record: Buffered = {
        side: mark.s === 'l' ? 'left' : 'right',
        key: mark.k,
        time: mark.t,
        id,
        value: mark.v,
        matched: mark.m,
      };
      this.buffer(record, this.buffersOf(record.key));
      if (!this.mirrors) this.restoredIds.add(id);
    }
  }

  clear(): void {
    this.byKey.clear();
    this.byId.clear();
    this.expiries.clear();
    this.restoredIds.clear();
    this.restoredMatched.clear();
    this.lateIds.clear();
    this.resetWatermark();
  }

  private get mirrors(): boolean {
    return this.options.mirrorRecords !== false;
  }

  /** Whether the changelog has (or, at the next drain, will have) an entry for `record`. */
  private inChangelog(record: Buffered): boolean {
    return (
      this.mirrors ||
      this.restoredIds.has(record.id) ||
      (record.matched && this.emitsUnmatched(record.side))
    );
  }

  /** A buffered record has matched for the first time. */
  private markMatched(record: Buffered): void {
    const had = this.tracking && this.inChangelog(record);
    record.matched = true;
    // Only an unmatched left (left join) or either (outer) record is ever emitted: for others
    // the flag is nobody's concern after a restore.
    if (!this.tracking || !this.emitsUnmatched(record.side)) return;
    if (had) this.touch(entryKey(record.id));
    else this.touchNew(entryKey(record.id));
  }

  /**
   * Without `mirrorRecords`, a late record is remembered while its interval is open: until the
   * horizon passes its end, a replay could not tell it from a record buffered at the commit.
   */
  private markLate(input: JoinInput): void {
    if (!this.tracking || this.mirrors) return;
    const closes = this.expiresAt(input);
    if (closes < this.horizon() || this.lateIds.has(input.id)) return;
    this.lateIds.set(input.id, closes);
    this.expiries.push(closes, input.id, input.id);
    this.touchNew(entryKey(input.id));
  }

  private buffer(record: Buffered, buffers: { left: Buffered[]; right: Buffered[] }): void {
    (record.side === 'left' ? buffers.left : buffers.right).push(record);
    this.byId.set(record.id, record);
    this.expiries.push(this.expiresAt(record), record.id, record.id);
  }

  private emitsUnmatched(side: JoinSide): boolean {
    const { kind } = this.options;
    return kind === 'outer' || (kind === 'left' && side === 'left');
  }

  /** The times a partner of `record` may have, inclusive. */
  private partnerRange(record: Pick<JoinInput, 'side' | 'time'>): [number, number] {
    const { beforeMs, afterMs } = this.options;
    return record.side === 'left'
      ? [record.time - beforeMs, record.time + afterMs]
      : [record.time - afterMs, record.time + beforeMs];
  }

  /** The last time a partner of `record` can have: once the horizon passes it, it goes. */
  private expiresAt(record: Pick<JoinInput, 'side' | 'time'>): number {
    return this.partnerRange(record)[1];
  }

  private expire(): void {
    const id = this.expiries.pop()!;
    if (this.lateIds.delete(id)) {
      this.touch(entryKey(id));
      return;
    }
    const record = this.byId.get(id);
    if (!record) return; // replaced by a restore
    if (this.tracking && this.inChangelog(record)) this.touch(entryKey(id));
    this.remove(id);
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
    this.restoredIds.delete(id);
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

/** Not a spread of `input`: V8 builds a spread plus a new field the slow way. */
function buffered(input: JoinInput): Buffered {
  return {
    side: input.side,
    key: input.key,
    time: input.time,
    id: input.id,
    value: input.value,
    matched: false,
  };
}
