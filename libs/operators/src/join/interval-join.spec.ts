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
  { beforeMs = 10, afterMs = 20, latenessMs = 0, trackChanges = false } = {},
): Run {
  const out: JoinedRecord[] = [];
  const late: JoinInput[] = [];
  const join = new IntervalJoin({
    kind,
    beforeMs,
    afterMs,
    latenessMs,
    trackChanges,
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

/** Feeds `order`, moving the watermark to the largest time seen after each record. */
function feed(run: Run, order: JoinInput[]): void {
  let max = -Infinity;
  for (const record of order) {
    run.join.add(record);
    max = Math.max(max, record.time);
    run.join.advanceTo(max);
  }
}

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
          const order = fc.sample(fc.shuffledSubarray(records, { minLength: records.length }), {
            numRuns: 1,
            seed,
          })[0]!;
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

  it('refuses a negative interval or lateness', () => {
    expect(() => joinOf('inner', { beforeMs: -1 })).toThrow(/beforeMs must be/);
    expect(() => joinOf('inner', { latenessMs: Number.NaN })).toThrow(/latenessMs must be/);
  });
});
