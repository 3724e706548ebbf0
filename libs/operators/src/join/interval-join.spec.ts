import fc from 'fast-check';

import type { StateEntry } from '../stateful/stage';
import { IntervalJoin } from './interval-join';
import type { JoinedRecord, JoinInput, JoinKind } from './interval-join';

interface Run {
  join: IntervalJoin;
  out: JoinedRecord[];
  late: JoinInput[];
}

function joinOf(
  kind: JoinKind,
  { beforeMs = 10, afterMs = 20, latenessMs = 0, trackChanges = false, mirrorRecords = true } = {},
): Run {
  const out: JoinedRecord[] = [];
  const late: JoinInput[] = [];
  const join = new IntervalJoin({
    kind,
    beforeMs,
    afterMs,
    latenessMs,
    trackChanges,
    mirrorRecords,
    emitter: { joined: (record) => out.push(record), late: (input) => late.push(input) },
  });
  return { join, out, late };
}

const input = (side: 'left' | 'right', key: string, time: number, id: string): JoinInput => ({
  side,
  key,
  time,
  id,
  value: { id },
});

/** Every pair and unmatched record, computed by comparing every left with every right. */
function reference(records: JoinInput[], kind: JoinKind, beforeMs: number, afterMs: number) {
  const out: JoinedRecord[] = [];
  const lefts = records.filter((r) => r.side === 'left');
  const rights = records.filter((r) => r.side === 'right');
  const inRange = (l: JoinInput, r: JoinInput) =>
    l.key === r.key && r.time >= l.time - beforeMs && r.time <= l.time + afterMs;
  for (const l of lefts)
    for (const r of rights)
      if (inRange(l, r))
        out.push({ key: l.key, time: Math.max(l.time, r.time), left: l.value, right: r.value });
  if (kind !== 'inner')
    for (const l of lefts)
      if (!rights.some((r) => inRange(l, r)))
        out.push({ key: l.key, time: l.time, left: l.value, right: null });
  if (kind === 'outer')
    for (const r of rights)
      if (!lefts.some((l) => inRange(l, r)))
        out.push({ key: r.key, time: r.time, left: null, right: r.value });
  return canonical(out);
}

const canonical = (records: JoinedRecord[]) => records.map((r) => JSON.stringify(r)).sort();

/** Records of both sides, ids unique, keys and times drawn close together so that many join. */
const recordsArb = fc
  .array(
    fc.record({
      side: fc.constantFrom('left' as const, 'right' as const),
      key: fc.constantFrom('a', 'b', 'c'),
      time: fc.integer({ min: 0, max: 200 }),
    }),
    { maxLength: 40 },
  )
  .map((drawn) => drawn.map((r, i) => input(r.side, r.key, r.time, `r${i}`)));

const kindArb = fc.constantFrom<JoinKind>('inner', 'left', 'outer');

/** How far a record in `order` comes after a later time already seen: the lateness it needs. */
function disorder(order: JoinInput[]): number {
  let max = -Infinity;
  let worst = 0;
  for (const record of order) {
    if (record.time < max) worst = Math.max(worst, max - record.time);
    max = Math.max(max, record.time);
  }
  return worst;
}

/**
 * Feeds `order`, moving the watermark to the largest time seen after each record; with a
 * `changelog`, drains the changes into it every `drainEvery` records and at the end.
 */
function feed(
  run: Run,
  order: JoinInput[],
  max = -Infinity,
  changelog?: StateEntry[],
  drainEvery = 1,
) {
  order.forEach((record, index) => {
    run.join.add(record);
    max = Math.max(max, record.time);
    run.join.advanceTo(max);
    if (changelog && index % drainEvery === 0) changelog.push(...run.join.drainChanges());
  });
  changelog?.push(...run.join.drainChanges());
  return max;
}

/** What a compacted changelog keeps: each key's last value, deleted keys left out. */
function compacted(changelog: StateEntry[]): Map<string, unknown> {
  const last = new Map<string, unknown>();
  for (const { key, value } of changelog) {
    if (value === null) last.delete(key);
    else last.set(key, value);
  }
  return last;
}

const shuffled = (records: JoinInput[], seed: number) =>
  fc.sample(fc.shuffledSubarray(records, { minLength: records.length }), { numRuns: 1, seed })[0]!;

describe('the interval join', () => {
  it('joins a left record with each right record of its key within [t - before, t + after], with the later time', () => {
    const { join, out } = joinOf('inner');
    join.add(input('left', 'k', 100, 'l1'));
    join.add(input('right', 'k', 89, 'r-too-early')); // before 100 - 10
    join.add(input('right', 'k', 90, 'r1'));
    join.add(input('right', 'k', 120, 'r2'));
    join.add(input('right', 'k', 121, 'r-too-late')); // after 100 + 20
    join.add(input('right', 'other', 100, 'r-other-key'));
    expect(out).toEqual([
      { key: 'k', time: 100, left: { id: 'l1' }, right: { id: 'r1' } },
      { key: 'k', time: 120, left: { id: 'l1' }, right: { id: 'r2' } },
    ]);
  });

  it('emits an unmatched left record once, when the watermark passes its interval, and never a matched one', () => {
    const { join, out } = joinOf('left', { latenessMs: 5 });
    join.add(input('left', 'k', 50, 'lonely')); // its partners lie in [40, 70]
    join.add(input('left', 'k', 100, 'paired'));
    join.add(input('right', 'k', 110, 'r'));
    join.advanceTo(75); // 75 - 5 = 70: a right record at 70 could still come
    expect(out.filter((r) => r.right === null)).toEqual([]);
    join.advanceTo(76);
    expect(out.filter((r) => r.right === null)).toEqual([
      { key: 'k', time: 50, left: { id: 'lonely' }, right: null },
    ]);
    join.advanceTo(1_000);
    join.flush();
    expect(out.filter((r) => r.right === null)).toHaveLength(1);
    expect(join.size()).toBe(0);
  });

  it('reports a record older than the watermark minus the lateness as late, and joins nothing with it', () => {
    const { join, out, late } = joinOf('outer', { latenessMs: 5 });
    join.add(input('left', 'k', 100, 'l'));
    join.advanceTo(200);
    join.add(input('right', 'k', 194, 'too-late'));
    join.add(input('right', 'k', 195, 'in-time'));
    expect(late.map((r) => r.id)).toEqual(['too-late']);
    join.flush();
    expect(canonical(out)).toEqual(
      canonical([
        { key: 'k', time: 100, left: { id: 'l' }, right: null },
        { key: 'k', time: 195, left: null, right: { id: 'in-time' } },
      ]),
    );
  });

  it('gives the same results in any interleaving within the allowed lateness, equal to comparing every pair (property)', () => {
    fc.assert(
      fc.property(
        recordsArb,
        kindArb,
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 0, max: 30 }),
        fc.integer(),
        (records, kind, beforeMs, afterMs, seed) => {
          const order = shuffled(records, seed);
          const run = joinOf(kind, { beforeMs, afterMs, latenessMs: disorder(order) });
          feed(run, order);
          run.join.flush();
          expect(run.late).toEqual([]);
          expect(canonical(run.out)).toEqual(reference(records, kind, beforeMs, afterMs));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('continues after snapshot → restore, or a restore from its changelog, as an uninterrupted run does (property)', () => {
    fc.assert(
      // Drained every few records, as the processor drains once per batch of records.
      fc.property(
        recordsArb,
        kindArb,
        fc.nat(),
        fc.integer({ min: 1, max: 6 }),
        (records, kind, cutAt, drainEvery) => {
          const order = [...records];
          const latenessMs = disorder(order);
          const whole = joinOf(kind, { latenessMs });
          feed(whole, order);
          whole.join.flush();

          const cut = records.length === 0 ? 0 : cutAt % (records.length + 1);
          const first = joinOf(kind, { latenessMs, trackChanges: true });
          const changelog: StateEntry[] = [];
          let max = -Infinity;
          order.slice(0, cut).forEach((record, index) => {
            first.join.add(record);
            max = Math.max(max, record.time);
            first.join.advanceTo(max);
            if (index % drainEvery === 0) changelog.push(...first.join.drainChanges());
          });
          changelog.push(...first.join.drainChanges());
          for (const state of [first.join.snapshot(), changelog]) {
            const second = joinOf(kind, { latenessMs });
            second.join.restore(state);
            expect(second.join.size()).toBe(first.join.size());
            for (const record of order.slice(cut)) {
              second.join.add(record);
              max = Math.max(max, record.time);
              second.join.advanceTo(max);
            }
            second.join.flush();
            expect(canonical([...first.out, ...second.out])).toEqual(canonical(whole.out));
            max = first.join.watermark();
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('restored from a changelog without its records, and fed its input again from the oldest record buffered, continues as an uninterrupted run does (property)', () => {
    fc.assert(
      fc.property(
        recordsArb,
        kindArb,
        fc.integer(),
        fc.nat(),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 100 }),
        (records, kind, seed, cutAt, drainEvery, latenessPercent) => {
          const order = shuffled(records, seed);
          // Less lateness than the disorder needs, so that some records come late.
          const latenessMs = Math.floor((disorder(order) * latenessPercent) / 100);
          const whole = joinOf(kind, { latenessMs });
          feed(whole, order);
          whole.join.flush();

          const cut = cutAt % (order.length + 1);
          const options = { latenessMs, mirrorRecords: false, trackChanges: true };
          const first = joinOf(kind, options);
          const changelog: StateEntry[] = [];
          const max = feed(first, order.slice(0, cut), -Infinity, changelog, drainEvery);
          for (const { value } of changelog)
            expect(value !== null && typeof value === 'object' && 's' in value).toBe(false);
          const oldest = first.join.oldestUnmirrored();

          const second = joinOf(kind, options);
          second.join.restore(changelog);
          // The input again, from the oldest record buffered at the cut (ids in input order).
          const before = order.slice(0, cut);
          const from =
            oldest === undefined ? before.length : before.findIndex((r) => r.id === oldest);
          expect(from).toBeGreaterThanOrEqual(0);
          for (const record of before.slice(from)) second.join.replay(record);
          expect(second.join.size()).toBe(first.join.size());
          const byKey = (entries: StateEntry[]) =>
            [...entries].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
          expect(byKey(second.join.snapshot())).toEqual(byKey(first.join.snapshot()));
          expect(second.out).toEqual([]);
          expect(second.late).toEqual([]);

          feed(second, order.slice(cut), max, changelog);
          second.join.flush();
          changelog.push(...second.join.drainChanges());
          expect(canonical([...first.out, ...second.out])).toEqual(canonical(whole.out));
          expect([...first.late, ...second.late]).toEqual(whole.late);
          // Every mark written was deleted again once its record was done with.
          expect([...compacted(changelog).keys()].filter((key) => key.startsWith('j'))).toEqual([]);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('after a restore, does not buffer again a record that came late while its interval is still open', () => {
    const options = { latenessMs: 5, mirrorRecords: false, trackChanges: true };
    const first = joinOf('left', options);
    first.join.add(input('left', 'k', 100, 'on-time'));
    first.join.advanceTo(110);
    first.join.add(input('right', 'k', 104, 'late')); // before 110 - 5, its partners up to 114
    expect(first.late.map((r) => r.id)).toEqual(['late']);
    const changelog = first.join.drainChanges();
    expect(changelog).toContainEqual({ key: 'jlate', value: { late: 114 } });

    const second = joinOf('left', options);
    second.join.restore(changelog);
    second.join.replay(input('left', 'k', 100, 'on-time'));
    second.join.replay(input('right', 'k', 104, 'late'));
    expect(second.join.size()).toBe(1);
    second.join.add(input('left', 'k', 108, 'would-pair-with-late'));
    second.join.advanceTo(200);
    expect(second.out.map((r) => [r.left, r.right])).toEqual([
      [{ id: 'on-time' }, null],
      [{ id: 'would-pair-with-late' }, null],
    ]);
    expect(second.join.drainChanges()).toContainEqual({ key: 'jlate', value: null });
  });

  it('lists a matched mark not yet read again among its state, so that a new epoch deletes it', () => {
    const options = { latenessMs: 0, mirrorRecords: false, trackChanges: true };
    const first = joinOf('left', options);
    first.join.add(input('left', 'k', 100, 'l1'));
    first.join.add(input('right', 'k', 105, 'r1'));
    const changelog = first.join.drainChanges();
    expect(changelog).toContainEqual({ key: 'jl1', value: { matched: true } });
    const second = joinOf('left', options);
    second.join.restore(changelog);
    expect(second.join.stateKeys()).toContain('jl1');
  });

  it('keeps a record restored from a changelog that mirrored it, and tombstones it when it expires', () => {
    const older = joinOf('inner', { trackChanges: true });
    older.join.add(input('left', 'k', 10, 'l1'));
    const changelog = older.join.drainChanges();
    expect(changelog.map((entry) => entry.key)).toEqual(['jl1']);

    const upgraded = joinOf('inner', { trackChanges: true, mirrorRecords: false });
    upgraded.join.restore(changelog);
    expect(upgraded.join.oldestUnmirrored()).toBeUndefined();
    upgraded.join.replay(input('left', 'k', 10, 'l1')); // already held: not twice
    upgraded.join.add(input('left', 'k', 12, 'l2'));
    expect(upgraded.join.oldestUnmirrored()).toBe('l2');
    upgraded.join.add(input('right', 'k', 15, 'r1'));
    expect(upgraded.out.map((r) => r.left)).toEqual([{ id: 'l1' }, { id: 'l2' }]);
    upgraded.join.advanceTo(1_000);
    expect(upgraded.join.drainChanges().filter((entry) => entry.key.startsWith('j'))).toEqual([
      { key: 'jl1', value: null },
    ]);
    expect(upgraded.join.oldestUnmirrored()).toBeUndefined();
  });

  it('refuses a negative interval or lateness', () => {
    expect(() => joinOf('inner', { beforeMs: -1 })).toThrow(/beforeMs must be/);
    expect(() => joinOf('inner', { latenessMs: Number.NaN })).toThrow(/latenessMs must be/);
  });
});
