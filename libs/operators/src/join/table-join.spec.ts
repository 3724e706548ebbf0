import fc from 'fast-check';

import { JsonText } from '../stateful/json-text';
import type { StateEntry } from '../stateful/stage';
import { TableJoin } from './table-join';
import type { OnMissing, StreamRecord, TableJoined, TableRow } from './table-join';

type Item = { kind: 'row'; row: TableRow } | { kind: 'record'; record: StreamRecord };

function joinOf(options: {
  temporal?: boolean;
  onMissing?: OnMissing;
  latenessMs?: number;
  trackChanges?: boolean;
  mirrorStream?: boolean;
}) {
  const out: TableJoined[] = [];
  const missing: StreamRecord[] = [];
  const late: Array<StreamRecord | TableRow> = [];
  const join = new TableJoin({
    temporal: options.temporal ?? true,
    onMissing: options.onMissing ?? 'skip',
    latenessMs: options.latenessMs ?? 0,
    trackChanges: options.trackChanges ?? false,
    mirrorStream: options.mirrorStream ?? true,
    emitter: {
      joined: (record) => out.push(record),
      missing: (record) => missing.push(record),
      late: (record) => late.push(record),
    },
  });
  return { join, out, missing, late };
}

type Run = ReturnType<typeof joinOf>;

const canonical = (records: unknown[]) => records.map((r) => JSON.stringify(r)).sort();

/** For each stream record, the version of its key current at its time (ties: the later row). */
function reference(rows: TableRow[], records: StreamRecord[], onMissing: OnMissing) {
  const out: TableJoined[] = [];
  const missing: StreamRecord[] = [];
  for (const record of records) {
    let found: TableRow | undefined;
    for (const row of rows)
      if (row.key === record.key && row.time <= record.time && (!found || row.time >= found.time))
        found = row;
    if (found === undefined || found.value === null) {
      if (onMissing === 'emit')
        out.push({ key: record.key, time: record.time, stream: record.value, table: null });
      if (onMissing === 'error') missing.push(record);
      continue;
    }
    out.push({ key: record.key, time: record.time, stream: record.value, table: found.value });
  }
  return { out: canonical(out), missing: canonical(missing) };
}

const keyArb = fc.constantFrom('c1', 'c2', 'c3');
const rowsArb = fc.array(
  fc.record({
    key: keyArb,
    time: fc.integer({ min: 0, max: 100 }),
    value: fc.oneof(fc.constant(null), fc.record({ tier: fc.constantFrom('gold', 'silver') })),
  }),
  { maxLength: 25 },
);
const recordsArb = fc
  .array(fc.record({ key: keyArb, time: fc.integer({ min: 0, max: 100 }) }), { maxLength: 25 })
  .map((drawn) => drawn.map((r, i) => ({ ...r, id: `o${i}`, value: { order: i } })));

/** The two inputs merged in the order `picks` says, each keeping its own order (a partition's). */
function merge(rows: TableRow[], records: StreamRecord[], picks: boolean[]): Item[] {
  const items: Item[] = [];
  let r = 0;
  let s = 0;
  for (let i = 0; r < rows.length || s < records.length; i++) {
    const takeRow = s >= records.length || (r < rows.length && (picks[i] ?? true));
    if (takeRow) items.push({ kind: 'row', row: rows[r++]! });
    else items.push({ kind: 'record', record: records[s++]! });
  }
  return items;
}

const timeOf = (item: Item) => (item.kind === 'row' ? item.row.time : item.record.time);

function disorder(items: Item[]): number {
  let max = -Infinity;
  let worst = 0;
  for (const item of items) {
    if (timeOf(item) < max) worst = Math.max(worst, max - timeOf(item));
    max = Math.max(max, timeOf(item));
  }
  return worst;
}

/**
 * A changelog as a restore hands it over: the values of the keys the join keeps as text are
 * their JSON text, the others parsed (a copy made through JSON, as the topic holds them).
 */
function asText(join: TableJoin, changelog: StateEntry[]): StateEntry[] {
  return changelog.map(({ key, value }) => {
    if (value === null) return { key, value };
    const text = JSON.stringify(value);
    return { key, value: join.restoresJsonText(key) ? new JsonText(text) : JSON.parse(text) };
  });
}

/** Feeds `items` from `max` on, moving the watermark to the largest time seen; returns it. */
/** Feeds items in order; with a changelog, drains it every `drainEvery` items and at the end. */
function feed(
  run: Run,
  items: Item[],
  max = -Infinity,
  changelog?: StateEntry[],
  drainEvery = 1,
): number {
  items.forEach((item, index) => {
    if (item.kind === 'row') run.join.upsert(item.row);
    else run.join.add(item.record);
    max = Math.max(max, timeOf(item));
    run.join.advanceTo(max);
    if (index % drainEvery === 0) changelog?.push(...run.join.drainChanges());
  });
  changelog?.push(...run.join.drainChanges());
  return max;
}

describe('the stream-table join', () => {
  it('joins each stream record with the version current at its time, waiting for the watermark', () => {
    const { join, out, late } = joinOf({ latenessMs: 10 });
    join.upsert({ key: 'c1', time: 0, value: { tier: 'silver' } });
    join.add({ key: 'c1', time: 50, id: 'o1', value: { order: 1 } });
    join.advanceTo(55);
    expect(out).toEqual([]); // a version before 50 may still come until 60
    join.upsert({ key: 'c1', time: 46, value: { tier: 'gold' } }); // in time: 46 >= 55 - 10
    join.upsert({ key: 'c1', time: 44, value: { tier: 'bronze' } }); // late: 44 < 45
    expect(late).toEqual([{ key: 'c1', time: 44, value: { tier: 'bronze' } }]);
    join.advanceTo(61);
    expect(out).toEqual([{ key: 'c1', time: 50, stream: { order: 1 }, table: { tier: 'gold' } }]);
  });

  it('joins with the latest row at once when not temporal', () => {
    const { join, out } = joinOf({ temporal: false });
    join.upsert({ key: 'c1', time: 100, value: { tier: 'silver' } });
    join.add({ key: 'c1', time: 5, id: 'o1', value: { order: 1 } });
    join.upsert({ key: 'c1', time: 1, value: { tier: 'gold' } });
    join.add({ key: 'c1', time: 5, id: 'o2', value: { order: 2 } });
    expect(out.map((r) => r.table)).toEqual([{ tier: 'silver' }, { tier: 'gold' }]);
  });

  it.each<[OnMissing, number, number]>([
    ['skip', 0, 0],
    ['error', 0, 1],
    ['emit', 1, 0],
  ])(
    'treats a record with no row (or a deleted one) as on_missing: %s says',
    (onMissing, emitted, errors) => {
      const { join, out, missing } = joinOf({ onMissing });
      join.upsert({ key: 'c1', time: 0, value: { tier: 'gold' } });
      join.upsert({ key: 'c1', time: 10, value: null });
      join.add({ key: 'c1', time: 20, id: 'o1', value: { order: 1 } });
      join.flush();
      expect(out).toHaveLength(emitted);
      expect(missing).toHaveLength(errors);
    },
  );

  it('gives the same results in any interleaving of the two inputs within the allowed lateness (property)', () => {
    fc.assert(
      fc.property(
        rowsArb,
        recordsArb,
        fc.array(fc.boolean(), { maxLength: 60 }),
        fc.constantFrom<OnMissing>('skip', 'error', 'emit'),
        (rows, records, picks, onMissing) => {
          const items = merge(rows, records, picks);
          const run = joinOf({ onMissing, latenessMs: disorder(items) });
          feed(run, items);
          run.join.flush();
          expect(run.late).toEqual([]);
          const expected = reference(rows, records, onMissing);
          expect(canonical(run.out)).toEqual(expected.out);
          expect(canonical(run.missing)).toEqual(expected.missing);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('continues after snapshot → restore, or a restore from its changelog, as an uninterrupted run does (property)', () => {
    fc.assert(
      fc.property(
        rowsArb,
        recordsArb,
        fc.array(fc.boolean(), { maxLength: 60 }),
        fc.nat(),
        fc.integer({ min: 1, max: 6 }),
        (rows, records, picks, cutAt, drainEvery) => {
          const items = merge(rows, records, picks);
          const latenessMs = disorder(items);
          const whole = joinOf({ latenessMs, onMissing: 'emit' });
          feed(whole, items);
          whole.join.flush();

          const cut = cutAt % (items.length + 1);
          const first = joinOf({ latenessMs, onMissing: 'emit', trackChanges: true });
          const changelog: StateEntry[] = [];
          const max = feed(first, items.slice(0, cut), -Infinity, changelog, drainEvery);
          for (const state of [first.join.snapshot(), changelog, asText(first.join, changelog)]) {
            const second = joinOf({ latenessMs, onMissing: 'emit' });
            second.join.restore(state);
            expect(second.join.stateKeys().sort()).toEqual(first.join.stateKeys().sort());
            // A row restored as text counts as one version until it is looked at.
            if (state.some((entry) => entry.value instanceof JsonText))
              expect(second.join.size()).toBeLessThanOrEqual(first.join.size());
            else expect(second.join.size()).toBe(first.join.size());
            feed(second, items.slice(cut), max);
            second.join.flush();
            expect(canonical([...first.out, ...second.out])).toEqual(canonical(whole.out));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('restored from a changelog of the table alone, and fed its input again from the oldest record waiting, continues as an uninterrupted run does (property)', () => {
    fc.assert(
      fc.property(
        rowsArb,
        recordsArb,
        fc.array(fc.boolean(), { maxLength: 60 }),
        fc.nat(),
        fc.integer({ min: 1, max: 6 }),
        (rows, records, picks, cutAt, drainEvery) => {
          const items = merge(rows, records, picks);
          const latenessMs = disorder(items);
          const whole = joinOf({ latenessMs, onMissing: 'emit' });
          feed(whole, items);
          whole.join.flush();

          const cut = cutAt % (items.length + 1);
          const options = { latenessMs, onMissing: 'emit' as const, mirrorStream: false };
          const first = joinOf({ ...options, trackChanges: true });
          const changelog: StateEntry[] = [];
          const max = feed(first, items.slice(0, cut), -Infinity, changelog, drainEvery);
          expect(changelog.some((entry) => entry.key.startsWith('s'))).toBe(false);
          const oldest = first.join.oldestUnmirrored();

          const second = joinOf(options);
          second.join.restore(changelog);
          // The input again, from the oldest record waiting at the cut (ids are in input order).
          const before = items.slice(0, cut).filter((item) => item.kind === 'record');
          const from = before.findIndex((item) => item.record.id === oldest);
          if (oldest !== undefined) expect(from).toBeGreaterThanOrEqual(0);
          for (const item of oldest === undefined ? [] : before.slice(from))
            second.join.replay(item.record);
          expect(second.join.size()).toBe(first.join.size());
          expect(second.out).toEqual([]);
          expect(second.late).toEqual([]);
          feed(second, items.slice(cut), max);
          second.join.flush();
          expect(canonical([...first.out, ...second.out])).toEqual(canonical(whole.out));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('keeps a row restored as text as it was until it is looked at, and drops unreadable text', () => {
    const run = joinOf({ trackChanges: true });
    const versions = [
      [10, { tier: 'gold' }],
      [20, { tier: 'silver' }],
    ];
    run.join.restore([
      { key: 'tc1', value: new JsonText(JSON.stringify(versions)) },
      { key: 'tc2', value: new JsonText('[[10,') },
      { key: 'tc3', value: new JsonText('[]') },
    ]);
    // Listing the keys (a new epoch's tombstones) parses no row: each still counts as one.
    expect(run.join.stateKeys()).toEqual(['tc1', 'tc2', 'tc3']);
    expect(run.join.size()).toBe(3);
    expect(run.join.snapshotKey('tc1')).toEqual(versions);
    expect(run.join.snapshotKey('tc2')).toBeNull();
    expect(run.join.snapshotKey('tc3')).toBeNull();
    run.join.add({ key: 'c1', time: 15, id: 'o1', value: { order: 1 } });
    run.join.advanceTo(30);
    expect(run.out).toEqual([
      { key: 'c1', time: 15, stream: { order: 1 }, table: { tier: 'gold' } },
    ]);
    expect(run.join.restoresJsonText('tc1')).toBe(true);
    expect(run.join.restoresJsonText('so1')).toBe(false);
  });

  it('tombstones a waiting record restored from an older changelog once it is released', () => {
    const older = joinOf({ trackChanges: true });
    older.join.add({ key: 'c1', time: 10, id: 'o1', value: { order: 1 } });
    const changelog = older.join.drainChanges();
    expect(changelog.map((entry) => entry.key)).toEqual(['so1']);

    const upgraded = joinOf({ trackChanges: true, mirrorStream: false });
    upgraded.join.restore(changelog);
    expect(upgraded.join.oldestUnmirrored()).toBeUndefined();
    upgraded.join.add({ key: 'c1', time: 12, id: 'o2', value: { order: 2 } });
    expect(upgraded.join.oldestUnmirrored()).toBe('o2');
    upgraded.join.advanceTo(20);
    expect(upgraded.join.drainChanges().filter((entry) => entry.key.startsWith('s'))).toEqual([
      { key: 'so1', value: null },
    ]);
    expect(upgraded.join.oldestUnmirrored()).toBeUndefined();
  });
});
