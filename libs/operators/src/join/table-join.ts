// A stream-table join (issue 17; Kafka Streams' KStream-KTable join, Flink's event-time
// temporal join): each stream record is joined with the table's row for its key. With
// `temporal`, the row is the version current at the stream record's event time, so a stream
// record waits until the watermark minus the allowed lateness has passed its time (no version
// that could still come may be earlier than it); without, it is the latest row, at once. Pure:
// the caller gives keys, times and ids, and moves the watermark (the smaller of the two
// inputs'); the state is plain entries that a compacted changelog can mirror.
import { JsonText, parseJsonText } from '../stateful/json-text';
import type { StateEntry } from '../stateful/stage';
import { WATERMARK_KEY } from '../stateful/stage';
import { TimeQueue } from '../stateful/time-queue';
import { JoinState } from './join-state';

export type OnMissing = 'skip' | 'error' | 'emit';

export interface TableRow {
  key: string;
  /** Event time of the version, epoch ms. */
  time: number;
  /** `null`: the row is deleted from then on (a tombstone). */
  value: unknown;
}

export interface StreamRecord {
  key: string;
  time: number;
  /** Unique among the stream's records (for instance topic/partition/offset). */
  id: string;
  value: unknown;
}

export interface TableJoined {
  key: string;
  time: number;
  stream: unknown;
  /** `null`: no row (only with `on_missing: emit`). */
  table: unknown;
}

export interface TableJoinEmitter {
  joined(record: TableJoined): void;
  /** No row for the record's key, with `on_missing: error` (a dead letter, say). */
  missing(record: StreamRecord): void;
  late(record: StreamRecord | TableRow, watermark: number): void;
}

export interface TableJoinOptions {
  temporal: boolean;
  onMissing: OnMissing;
  latenessMs: number;
  emitter: TableJoinEmitter;
  trackChanges?: boolean;
  /**
   * Whether waiting stream records go to the changelog (the default). Without, the caller keeps
   * its input and feeds it again after a restore from `oldestUnmirrored()` on (`replay`): the
   * processor re-reads its repartition topic, so the changelog holds the table alone.
   */
  mirrorStream?: boolean;
}

/**
 * A version as the changelog holds it, `[time, value]`: a restore keeps the parsed pairs and a
 * snapshot writes them as they are, with no object built per version either way (a 10⁶-row
 * table's restore spent a quarter of its time collecting garbage). Never changed in place.
 */
type Version = readonly [time: number, value: unknown];

/** A key's versions, or their JSON text as restored, until first needed (json-text.ts). */
type StoredVersions = Version[] | string;

export class TableJoin extends JoinState {
  /** Each key's versions, oldest first (only the latest when not temporal). */
  private readonly rows = new Map<string, StoredVersions>();
  /** Stream records waiting for the watermark (temporal only), by time. */
  private readonly waiting = new TimeQueue<StreamRecord>();
  /** In arrival order: ids are the input's offsets, so the first unmirrored is the oldest. */
  private readonly waitingIds = new Map<string, StreamRecord>();
  /** Waiting records restored from a changelog written with `mirrorStream`: released, they are tombstoned. */
  private readonly restoredIds = new Set<string>();

  constructor(private readonly options: TableJoinOptions) {
    super(options.latenessMs, options.trackChanges);
  }

  /** A table row (an upsert, or a deletion with `value: null`). */
  upsert(row: TableRow): void {
    if (this.options.temporal && row.time < this.horizon()) {
      this.options.emitter.late(row, this.watermark());
      return;
    }
    const versions = this.versionsOf(row.key) ?? [];
    if (!this.options.temporal) versions.length = 0;
    // Sorted by time; of two versions at the same time the later one wins.
    let at = versions.length;
    while (at > 0 && versions[at - 1]![0] > row.time) at -= 1;
    const version: Version = [row.time, row.value];
    if (at > 0 && versions[at - 1]![0] === row.time) versions[at - 1] = version;
    else versions.splice(at, 0, version);
    this.rows.set(row.key, versions);
    if (this.options.temporal) this.prune(row.key, versions);
    this.touchRow(row.key);
  }

  add(record: StreamRecord): void {
    if (!this.options.temporal) {
      this.emit(record);
      return;
    }
    if (record.time < this.horizon()) {
      this.options.emitter.late(record, this.watermark());
      return;
    }
    if (this.waitingIds.has(record.id)) return; // ids are unique; a repeat is ignored
    this.waiting.push(record.time, record);
    this.waitingIds.set(record.id, record);
    if (this.tracking && this.mirrors) this.touchNew(streamKey(record.id));
  }

  /**
   * A stream record read again after a restore (`mirrorStream: false`): taken if it was waiting
   * at the commit the state was restored to, else ignored. A record at or past the horizon was
   * neither late when it came nor released since (both need a time before the horizon, which
   * only grows); one before it was one or the other, and is done with.
   */
  replay(record: StreamRecord): void {
    if (record.time >= this.horizon()) this.add(record);
  }

  /**
   * The id of the oldest waiting record that is not in the changelog (`undefined`: none): a
   * restore must feed the input again from it on (`replay`).
   */
  oldestUnmirrored(): string | undefined {
    if (this.mirrors) return undefined;
    for (const id of this.waitingIds.keys()) if (!this.restoredIds.has(id)) return id;
    return undefined;
  }

  /** The watermark moved: stream records that no version can come before any more are joined. */
  advanceTo(eventTime: number): void {
    if (!this.moveWatermark(eventTime) || !this.options.temporal) return;
    const horizon = this.horizon();
    while (this.waiting.size > 0 && this.waiting.peekTime() < horizon) this.release();
  }

  /** End of input: every waiting stream record is joined with what the table holds. */
  flush(): void {
    while (this.waiting.size > 0) this.release();
  }

  /**
   * Versions and waiting stream records held; a key restored and not looked at since counts
   * as one version (its text is not parsed to count them).
   */
  size(): number {
    let versions = 0;
    for (const list of this.rows.values()) versions += typeof list === 'string' ? 1 : list.length;
    return versions + this.waitingIds.size;
  }

  snapshot(): StateEntry[] {
    const entries: StateEntry[] = [];
    for (const key of this.rows.keys())
      entries.push({ key: rowKey(key), value: this.snapshotKey(rowKey(key)) });
    for (const id of this.waitingIds.keys())
      entries.push({ key: streamKey(id), value: this.snapshotKey(streamKey(id)) });
    return [...entries, ...this.watermarkEntries()];
  }

  snapshotKey(key: string): unknown {
    if (key === WATERMARK_KEY) return this.watermarkValue();
    const name = key.slice(1);
    if (key[0] === 't') {
      const versions = this.versionsOf(name);
      return versions && versions.length > 0 ? versions.slice() : null;
    }
    const record = this.waitingIds.get(name);
    return record ? { k: record.key, t: record.time, v: record.value } : null;
  }

  restore(entries: Iterable<StateEntry>): void {
    for (const entry of entries) {
      if (this.restoreWatermark(entry)) continue;
      const { key, value } = entry;
      const name = key.slice(1);
      if (key[0] === 't') {
        if (value === null) this.rows.delete(name);
        else if (value instanceof JsonText) this.rows.set(name, value.text);
        // A copy of the list (the caller's may be restored elsewhere too); the pairs are shared.
        else this.rows.set(name, (value as Version[]).slice());
        continue;
      }
      this.waitingIds.delete(name);
      this.restoredIds.delete(name);
      if (value === null) continue;
      const waiting = value as { k: string; t: number; v: unknown };
      const record = { key: waiting.k, time: waiting.t, id: name, value: waiting.v };
      this.waitingIds.set(name, record);
      this.waiting.push(record.time, record);
      if (!this.mirrors) this.restoredIds.add(name);
    }
  }

  /** As `snapshot`'s keys, with no row restored as text parsed for it. */
  override stateKeys(): string[] {
    const keys: string[] = [];
    for (const key of this.rows.keys()) keys.push(rowKey(key));
    for (const id of this.waitingIds.keys()) keys.push(streamKey(id));
    for (const entry of this.watermarkEntries()) keys.push(entry.key);
    return keys;
  }

  /** A table row's versions may be restored as text: most are never looked at again. */
  override restoresJsonText(key: string): boolean {
    return key[0] === 't';
  }

  clear(): void {
    this.rows.clear();
    this.waitingIds.clear();
    this.restoredIds.clear();
    this.waiting.clear();
    this.resetWatermark();
  }

  private release(): void {
    const record = this.waiting.pop()!;
    if (this.waitingIds.get(record.id) !== record) return; // replaced by a restore
    this.waitingIds.delete(record.id);
    const mirrored = this.mirrors || this.restoredIds.delete(record.id);
    if (this.tracking && mirrored) this.touch(streamKey(record.id));
    this.emit(record);
  }

  private emit(record: StreamRecord): void {
    const row = this.rowAt(record.key, record.time);
    if (row === undefined || row === null) {
      const { onMissing, emitter } = this.options;
      if (onMissing === 'error') emitter.missing(record);
      else if (onMissing === 'emit')
        emitter.joined({ key: record.key, time: record.time, stream: record.value, table: null });
      return;
    }
    this.options.emitter.joined({
      key: record.key,
      time: record.time,
      stream: record.value,
      table: row,
    });
  }

  /** The row current at `time` (temporal), or the latest; `undefined` or `null`: none. */
  private rowAt(key: string, time: number): unknown {
    const versions = this.versionsOf(key);
    if (!versions || versions.length === 0) return undefined;
    if (!this.options.temporal) return versions[versions.length - 1]![1];
    let found: Version | undefined;
    for (const version of versions) {
      if (version[0] > time) break;
      found = version;
    }
    return found?.[1];
  }

  /**
   * Drops a key's versions no stream record can be joined with any more: every record still to
   * be joined is at the horizon or later, so of the versions before it only the last one
   * counts. Done when the key changes, so a watermark's move costs nothing per row.
   */
  private prune(key: string, versions: Version[]): void {
    const bound = Math.min(this.horizon(), this.waiting.peekTime());
    let keep = 0;
    while (keep + 1 < versions.length && versions[keep + 1]![0] <= bound) keep += 1;
    if (keep > 0) versions.splice(0, keep);
    // A deletion no later record can look past or before: the key has no row at all.
    if (versions.length === 1 && versions[0]![1] === null && versions[0]![0] <= bound)
      this.rows.delete(key);
  }

  /**
   * A key's versions, parsed and kept parsed if they were restored as text; `undefined` when
   * the key has none (text that does not parse, as an unreadable changelog value, is none).
   */
  private versionsOf(key: string): Version[] | undefined {
    const stored = this.rows.get(key);
    if (typeof stored !== 'string') return stored;
    const parsed = parseJsonText(stored);
    if (!Array.isArray(parsed) || parsed.length === 0) {
      this.rows.delete(key);
      return undefined;
    }
    const versions = parsed as Version[];
    this.rows.set(key, versions);
    return versions;
  }

  private get mirrors(): boolean {
    return this.options.mirrorStream !== false;
  }

  private touchRow(key: string): void {
    if (this.tracking) this.touch(rowKey(key));
  }
}

const rowKey = (key: string) => `t${key}`;
const streamKey = (id: string) => `s${id}`;
