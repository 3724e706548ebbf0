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
import { TimeQueue } from '../stateful/time-queue';
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
  readonly side: JoinSide;
  readonly key: string;
  readonly time: number;
  readonly id: string;
  /** Dropped once the record is gone: `arrivals` may hold a gone record a while. */
  value: unknown;
  /** The last time a partner can have: once the horizon passes it, the record goes. */
  readonly expires: number;
  matched: boolean;
  /** Its changelog entry is the whole record (mirrored, or restored from a changelog that was). */
  mirrored: boolean;
  /** In `byId`. */
  indexed: boolean;
  /** Expired, or replaced by a restore, while its expiry or its arrival may still be queued. */
  gone: boolean;
  /**
   * The key's buffered records in arrival order, as a ring: `byKey` holds the first, whose
   * `prev` is the last. Linked through the records, so a key takes no arrays.
   */
  prev: Buffered;
  next: Buffered;
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
  /** Each join key's first buffered record (see `Buffered.prev`). */
  private readonly byKey = new Map<string, Buffered>();
  /**
   * Buffered records looked up by id: every one when records are mirrored; without, only
   * those with a changelog entry (a matched mark, or restored whole), so that most records
   * cost no map entry.
   */
  private readonly byId = new Map<string, Buffered>();
  /** Without `mirrorRecords`: the records not in the changelog in arrival order, some gone. */
  private readonly arrivals: Buffered[] = [];
  private arrivalsHead = 0;
  private buffered = 0;
  /** Buffered records by the time after which no partner can arrive. */
  private readonly expiries = new TimeQueue<Buffered>();
  /** Without `mirrorRecords`: matched records restored, marked so as they are replayed. */
  private readonly restoredMatched = new Set<string>();
  /** Without `mirrorRecords`: records found late whose interval is still open, with its end. */
  private readonly lateIds = new Map<string, number>();
  /** Their ids by that end (an id no longer in `lateIds` was restored away). */
  private readonly lateExpiries = new MinHeap<string>();

  constructor(private readonly options: IntervalJoinOptions) {
    super(options.latenessMs, options.trackChanges);
    const { beforeMs, afterMs } = options;
    for (const [name, ms] of Object.entries({ beforeMs, afterMs }))
      if (!(ms >= 0)) throw new Error(`${name} must be a number of ms at least 0, not ${ms}`);
  }

  add(input: JoinInput): void {
    // Ids are unique. Mirrored, a repeat is ignored rather than left to corrupt the index;
    // without, the processor's stage drops an input offset it has taken (join-node.ts).
    if (this.mirrors && this.byId.has(input.id)) return;
    if (input.time < this.horizon()) {
      this.markLate(input);
      this.options.emitter.late(input, this.watermark());
      return;
    }
    const record = this.recordOf(input, this.mirrors);
    const first = this.byKey.get(record.key);
    if (first !== undefined) this.match(record, first);
    this.buffer(record, first);
    if (this.tracking && this.inChangelog(record)) {
      this.index(record);
      this.touchNew(entryKey(record.id));
    }
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
    const record = this.recordOf(input, false);
    if (record.expires < this.horizon()) return;
    record.matched = this.restoredMatched.delete(record.id);
    this.buffer(record, this.byKey.get(record.key));
    if (record.matched) this.index(record);
  }

  /**
   * The id of the oldest buffered record that is not in the changelog (`undefined`: none): a
   * restore must feed the input again from it on (`replay`). Ids are taken to be in input order.
   */
  oldestUnmirrored(): string | undefined {
    if (this.mirrors) return undefined;
    this.dropGoneArrivals();
    return this.arrivals[this.arrivalsHead]?.id;
  }

  /**
   * The watermark moved to `eventTime` (it never goes back): records no partner can join any
   * more are dropped, those that never matched emitted as the join's kind says.
   */
  advanceTo(eventTime: number): void {
    if (!this.moveWatermark(eventTime)) return;
    const horizon = this.horizon();
    while (this.expiries.peekTime() < horizon) this.expire(this.expiries.pop()!);
    while (this.lateExpiries.peekPriority() < horizon) this.forgetLate(this.lateExpiries.pop()!);
  }

  /** End of input: every buffered record is dropped, as if time had run out. */
  flush(): void {
    while (this.expiries.size > 0) this.expire(this.expiries.pop()!);
    while (this.lateExpiries.size > 0) this.forgetLate(this.lateExpiries.pop()!);
  }

  size(): number {
    return this.buffered;
  }

  snapshot(): StateEntry[] {
    const entries: StateEntry[] = [];
    const add = (id: string) => {
      const value = this.snapshotKey(entryKey(id));
      if (value !== null) entries.push({ key: entryKey(id), value });
    };
    for (const first of this.byKey.values()) {
      let record = first;
      do {
        add(record.id);
        record = record.next;
      } while (record !== first);
    }
    for (const id of [...this.lateIds.keys(), ...this.restoredMatched]) add(id);
    return [...entries, ...this.watermarkEntries()];
  }

  snapshotKey(key: string): unknown {
    if (key === WATERMARK_KEY) return this.watermarkValue();
    const id = key.slice(1);
    const record = this.byId.get(id);
    if (!record) {
      // Not indexed: gone, late, restored as a mark and not read again yet, or with no entry.
      if (this.restoredMatched.has(id)) return MATCHED;
      const closes = this.lateIds.get(id);
      return closes === undefined ? null : ({ late: closes } satisfies RecordMark);
    }
    if (!record.mirrored) return this.inChangelog(record) ? MATCHED : null;
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
      const held = this.byId.get(id);
      if (held) this.remove(held);
      this.restoredMatched.delete(id);
      this.lateIds.delete(id);
      if (value === null) continue;
      const mark = value as RecordMark | BufferedEntry;
      if ('late' in mark) {
        this.lateIds.set(id, mark.late);
        this.lateExpiries.push(mark.late, id);
      } else if ('matched' in mark) this.restoredMatched.add(id);
      else {
        const side = mark.s === 'l' ? 'left' : 'right';
        const record = this.recordOf({ side, key: mark.k, time: mark.t, id, value: mark.v }, true);
        record.matched = mark.m;
        this.buffer(record, this.byKey.get(record.key));
      }
    }
  }

  clear(): void {
    this.byKey.clear();
    this.byId.clear();
    this.arrivals.length = this.arrivalsHead = this.buffered = 0;
    this.expiries.clear();
    this.restoredMatched.clear();
    this.lateIds.clear();
    this.lateExpiries.clear();
    this.resetWatermark();
  }

  private get mirrors(): boolean {
    return this.options.mirrorRecords !== false;
  }

  /** Joins `record` with each buffered record of the other side whose time is in its interval. */
  private match(record: Buffered, first: Buffered): void {
    const { beforeMs, afterMs, emitter } = this.options;
    const isLeft = record.side === 'left';
    const from = record.time - (isLeft ? beforeMs : afterMs);
    const to = record.time + (isLeft ? afterMs : beforeMs);
    let partner = first;
    do {
      if (partner.side !== record.side && partner.time >= from && partner.time <= to) {
        const left = isLeft ? record : partner;
        const right = isLeft ? partner : record;
        emitter.joined({
          key: record.key,
          time: Math.max(left.time, right.time),
          left: left.value,
          right: right.value,
        });
        record.matched = true;
        if (!partner.matched) this.markMatched(partner);
      }
      partner = partner.next;
    } while (partner !== first);
  }

  /** Whether the changelog has (or, at the next drain, will have) an entry for `record`. */
  private inChangelog(record: Buffered): boolean {
    return record.mirrored || (record.matched && this.emitsUnmatched(record.side));
  }

  /** A buffered record has matched for the first time. */
  private markMatched(record: Buffered): void {
    const had = this.tracking && this.inChangelog(record);
    record.matched = true;
    // Only an unmatched left (left join) or either (outer) record is ever emitted: for others
    // the flag is nobody's concern after a restore.
    if (!this.tracking || !this.emitsUnmatched(record.side)) return;
    if (had) this.touch(entryKey(record.id));
    else {
      this.index(record);
      this.touchNew(entryKey(record.id));
    }
  }

  private index(record: Buffered): void {
    record.indexed = true;
    this.byId.set(record.id, record);
  }

  /**
   * Without `mirrorRecords`, a late record is remembered while its interval is open: until the
   * horizon passes its end, a replay could not tell it from a record buffered at the commit.
   */
  private markLate(input: JoinInput): void {
    if (!this.tracking || this.mirrors) return;
    const closes = this.closesAt(input.side, input.time);
    if (closes < this.horizon() || this.lateIds.has(input.id)) return;
    this.lateIds.set(input.id, closes);
    this.lateExpiries.push(closes, input.id);
    this.touchNew(entryKey(input.id));
  }

  private forgetLate(id: string): void {
    if (this.lateIds.delete(id)) this.touch(entryKey(id));
  }

  private emitsUnmatched(side: JoinSide): boolean {
    const { kind } = this.options;
    return kind === 'outer' || (kind === 'left' && side === 'left');
  }

  /** The last time a partner of a record of `side` at `time` can have. */
  private closesAt(side: JoinSide, time: number): number {
    return time + (side === 'left' ? this.options.afterMs : this.options.beforeMs);
  }

  /** Not a spread of `input`: V8 builds a spread plus a new field the slow way. */
  private recordOf(input: JoinInput, mirrored: boolean): Buffered {
    const record: Buffered = {
      side: input.side,
      key: input.key,
      time: input.time,
      id: input.id,
      value: input.value,
      expires: this.closesAt(input.side, input.time),
      matched: false,
      mirrored,
      indexed: false,
      gone: false,
      prev: undefined!,
      next: undefined!,
    };
    record.prev = record.next = record;
    return record;
  }

  /** Appends `record` to its key's ring (`first`: the ring's first, if any). */
  private buffer(record: Buffered, first: Buffered | undefined): void {
    if (first === undefined) this.byKey.set(record.key, record);
    else {
      const last = first.prev;
      last.next = record;
      record.prev = last;
      record.next = first;
      first.prev = record;
    }
    this.buffered += 1;
    if (record.mirrored) this.index(record);
    else {
      this.dropGoneArrivals();
      this.arrivals.push(record);
    }
    this.expiries.push(record.expires, record);
  }

  /**
   * Moves past the arrivals gone from the head (most records go in arrival order), and drops
   * them once they are most of the array: amortized O(1) a record.
   */
  private dropGoneArrivals(): void {
    const arrivals = this.arrivals;
    let head = this.arrivalsHead;
    while (head < arrivals.length && arrivals[head]!.gone) head += 1;
    if (head >= 1024 && head * 2 >= arrivals.length) {
      arrivals.splice(0, head);
      head = 0;
    }
    this.arrivalsHead = head;
  }

  private expire(record: Buffered): void {
    if (record.gone) return; // replaced by a restore
    if (this.tracking && this.inChangelog(record)) this.touch(entryKey(record.id));
    const { value } = record;
    this.remove(record);
    if (record.matched) return;
    const { kind, emitter } = this.options;
    if (record.side === 'left' && kind !== 'inner')
      emitter.joined({ key: record.key, time: record.time, left: value, right: null });
    else if (record.side === 'right' && kind === 'outer')
      emitter.joined({ key: record.key, time: record.time, left: null, right: value });
  }

  private remove(record: Buffered): void {
    if (record.indexed) this.byId.delete(record.id);
    this.buffered -= 1;
    record.gone = true;
    record.value = undefined;
    if (record.next === record) {
      this.byKey.delete(record.key);
      return;
    }
    record.prev.next = record.next;
    record.next.prev = record.prev;
    if (this.byKey.get(record.key) === record) this.byKey.set(record.key, record.next);
  }
}
