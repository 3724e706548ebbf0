// Invariants of the operator library, checked on generated inputs with fast-check.
import fc from 'fast-check';
import type { EventEnvelope, ReduceResult, WindowResult } from '@sluice/contracts';

import { exactSumAdd, exactSumValue } from './aggregate/exact-sum';
import { PipelineTestDriver } from './testing';

const T0 = Date.UTC(2026, 10, 29);
const GROUPS = ['a', 'b', 'c'];

interface Ev {
  t: number; // seconds after T0
  g: string;
  v: number; // an integer or a multiple of 1/8: plain addition is exact for such values
}

const evArb = fc.record({
  t: fc.integer({ min: 0, max: 600 }),
  g: fc.constantFrom(...GROUPS),
  v: fc.integer({ min: -800, max: 800 }).map((n) => n / 8),
});

const toEnvelope = (e: Ev, i: number): EventEnvelope => ({
  id: `e${i}`,
  event_type: 'x',
  timestamp: T0 + e.t * 1000,
  payload: { g: e.g, v: e.v },
});

type WindowSpec =
  | { window_type: 'tumbling'; size_seconds: number }
  | { window_type: 'sliding'; size_seconds: number; slide_seconds: number }
  | { window_type: 'session'; session_timeout_seconds: number };

const windowArb: fc.Arbitrary<WindowSpec> = fc.oneof(
  fc
    .integer({ min: 1, max: 120 })
    .map((size) => ({ window_type: 'tumbling' as const, size_seconds: size })),
  fc.tuple(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 4 })).map(([slide, k]) => ({
    window_type: 'sliding' as const,
    size_seconds: slide * k,
    slide_seconds: slide,
  })),
  fc
    .integer({ min: 1, max: 60 })
    .map((gap) => ({ window_type: 'session' as const, session_timeout_seconds: gap })),
);

const fnArb = fc.constantFrom('count', 'sum', 'avg', 'min', 'max');

function windowDriver(config: WindowSpec & { allowed_lateness_seconds?: number }, fn: string) {
  return PipelineTestDriver.create({
    id: '00000000-0000-4000-8000-0000000000d1',
    name: 'p',
    output: 'o',
    operators: [
      {
        type: 'window',
        config,
        aggregation: { type: 'reduce', field: 'v', function: fn, group_by: 'g' },
      },
    ],
  });
}

const plain = (fn: string, values: number[]) => {
  switch (fn) {
    case 'count':
      return values.length;
    case 'sum':
      return values.reduce((a, b) => a + b, 0);
    case 'avg':
      return values.reduce((a, b) => a + b, 0) / values.length;
    case 'min':
      return Math.min(...values);
    default:
      return Math.max(...values);
  }
};

/** Windows computed from scratch: every window's events gathered, then aggregated once. */
function recompute(config: WindowSpec, fn: string, events: Ev[]): string[] {
  const buckets = new Map<string, { g: string; start: number; end: number; values: number[] }>();
  const put = (g: string, start: number, end: number, v: number) => {
    const key = `${g}|${start}`;
    const bucket = buckets.get(key) ?? { g, start, end, values: [] };
    bucket.values.push(v);
    buckets.set(key, bucket);
  };
  if (config.window_type === 'session') {
    for (const g of GROUPS) {
      const sorted = events.filter((e) => e.g === g).sort((x, y) => x.t - y.t);
      let current: { start: number; end: number; values: number[] } | undefined;
      for (const e of sorted) {
        if (current && e.t <= current.end) {
          current.end = Math.max(current.end, e.t + config.session_timeout_seconds);
          current.values.push(e.v);
        } else {
          if (current) buckets.set(`${g}|${current.start}`, { g, ...current });
          current = { start: e.t, end: e.t + config.session_timeout_seconds, values: [e.v] };
        }
      }
      if (current) buckets.set(`${g}|${current.start}`, { g, ...current });
    }
  } else {
    // Windows align to the epoch, not to T0: work in absolute seconds.
    const base = T0 / 1000;
    const size = config.size_seconds;
    const slide = config.window_type === 'sliding' ? config.slide_seconds : size;
    for (const e of events) {
      const t = base + e.t;
      for (let start = Math.floor(t / slide) * slide; start + size > t; start -= slide)
        put(e.g, start - base, start - base + size, e.v);
    }
  }
  return [...buckets.values()]
    .map((b) =>
      describeWindow(
        b.g,
        T0 + b.start * 1000,
        T0 + b.end * 1000,
        plain(fn, b.values),
        b.values.length,
      ),
    )
    .sort();
}

const describeWindow = (
  g: string | null,
  start: number,
  end: number,
  value: number,
  count: number,
) => `${g} ${new Date(start).toISOString()} ${new Date(end).toISOString()} ${value} ${count}`;

const finalWindows = (results: WindowResult[]) =>
  results
    .filter((r) => r.final)
    .map((r) =>
      describeWindow(
        r.group,
        Date.parse(r.window.start),
        Date.parse(r.window.end),
        r.value,
        r.count,
      ),
    )
    .sort();

describe('properties', () => {
  it('incremental window results equal a recomputation from scratch', () => {
    fc.assert(
      fc.property(
        windowArb,
        fnArb,
        fc.array(evArb, { minLength: 1, maxLength: 80 }),
        (config, fn, events) => {
          const sorted = [...events].sort((a, b) => a.t - b.t);
          const driver = windowDriver(config, fn);
          driver.send(...sorted.map(toEnvelope)).endOfInput();
          expect(driver.readLate()).toEqual([]);
          expect(finalWindows(driver.readValues() as WindowResult[])).toEqual(
            recompute(config, fn, sorted),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('every running reduce value equals the function over the group so far', () => {
    fc.assert(
      fc.property(fnArb, fc.array(evArb, { maxLength: 60 }), (fn, events) => {
        const driver = PipelineTestDriver.create({
          name: 'r',
          output: 'o',
          operators: [{ type: 'reduce', field: 'v', function: fn, group_by: 'g' }],
        });
        driver.send(...events.map(toEnvelope));
        const seen = new Map<string, number[]>();
        const values = driver.readValues() as ReduceResult[];
        expect(values).toHaveLength(events.length);
        events.forEach((e, i) => {
          seen.set(e.g, [...(seen.get(e.g) ?? []), e.v]);
          expect(values[i]!.group).toBe(e.g);
          expect(values[i]!.value).toBe(plain(fn, seen.get(e.g)!));
        });
      }),
      { numRuns: 300 },
    );
  });

  it('any arrival order within the allowed lateness gives the same final results', () => {
    fc.assert(
      fc.property(
        windowArb,
        fnArb,
        fc.integer({ min: 0, max: 120 }),
        fc.array(fc.tuple(evArb, fc.double({ min: 0, max: 1, noNaN: true })), {
          minLength: 1,
          maxLength: 80,
        }),
        (config, fn, lateness, jittered) => {
          const events = jittered.map(([e]) => e);
          const inOrder = windowDriver({ ...config, allowed_lateness_seconds: lateness }, fn);
          inOrder.send(...[...events].sort((a, b) => a.t - b.t).map(toEnvelope)).endOfInput();
          // Each event arrives up to `lateness` seconds after its time: never behind the watermark.
          const arrival = jittered
            .map(([e, r], i) => ({ e, i, at: e.t + r * lateness }))
            .sort((x, y) => x.at - y.at);
          const shuffled = windowDriver({ ...config, allowed_lateness_seconds: lateness }, fn);
          shuffled.send(...arrival.map(({ e, i }) => toEnvelope(e, i))).endOfInput();
          expect(shuffled.readLate()).toEqual([]);
          expect(finalWindows(shuffled.readValues() as WindowResult[])).toEqual(
            finalWindows(inOrder.readValues() as WindowResult[]),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('snapshot, restore and continue equals an uninterrupted run, also when rebuilt from the changelog', () => {
    fc.assert(
      fc.property(
        fc.oneof(windowArb, fc.constant(undefined)),
        fnArb,
        fc.integer({ min: 0, max: 30 }),
        fc.array(evArb, { minLength: 1, maxLength: 60 }),
        fc.nat(),
        (config, fn, lateness, events, cutSeed) => {
          const definition = {
            id: '00000000-0000-4000-8000-0000000000d2',
            name: 'p',
            output: 'o',
            operators: [
              config === undefined
                ? { type: 'reduce', field: 'v', function: fn, group_by: 'g' }
                : {
                    type: 'window',
                    config: { ...config, allowed_lateness_seconds: lateness },
                    aggregation: { type: 'reduce', field: 'v', function: fn, group_by: 'g' },
                    emit: 'update',
                  },
            ],
          };
          const envelopes = events.map(toEnvelope);
          const cut = cutSeed % (envelopes.length + 1);

          const whole = PipelineTestDriver.create(definition);
          whole.send(...envelopes).endOfInput();
          const expected = { results: whole.readResults(), late: whole.readLate() };

          const first = PipelineTestDriver.create(definition);
          first.send(...envelopes.slice(0, cut));
          const changelog = new Map<string, unknown>();
          for (const { key, value } of first.readChangelog()) changelog.set(key, value);
          const live = first.snapshot();
          // The compacted changelog holds exactly the live state.
          expect(new Map([...changelog].filter(([, value]) => value !== null))).toEqual(
            new Map(live.map((e) => [e.key, e.value])),
          );

          const second = first.restart();
          second.send(...envelopes.slice(cut)).endOfInput();
          expect({
            results: [...first.readResults(), ...second.readResults()],
            late: [...first.readLate(), ...second.readLate()],
          }).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('exact sums do not depend on the order of additions', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e300, max: 1e300 }), {
          maxLength: 40,
        }),
        fc.nat(),
        (values, seed) => {
          const forward: number[] = [];
          for (const v of values) exactSumAdd(forward, v);
          const shuffled = [...values].sort(
            (a, b) => ((a * 7919 + seed) % 13) - ((b * 7919 + seed) % 13) || a - b,
          );
          const backward: number[] = [];
          for (const v of shuffled.reverse()) exactSumAdd(backward, v);
          expect(exactSumValue(forward)).toBe(exactSumValue(backward));
        },
      ),
      { numRuns: 1000 },
    );
    const partials: number[] = [];
    for (const v of [1e100, 1, -1e100, 0.1, 0.2]) exactSumAdd(partials, v);
    expect(exactSumValue(partials)).toBe(1.3);
  });
});
