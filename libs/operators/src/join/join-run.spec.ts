// Joins in a graph, run by the reference (docs/design.md §9 "Joins"): against brute-force
// answers, and independent of how the two inputs interleave.
import fc from 'fast-check';
import { validateGraphDefinition } from '@sluice/contracts';
import type { EventEnvelope, JoinResult, PipelineGraph } from '@sluice/contracts';

import { planOfGraph } from '../graph/plan';
import { runGraphReference } from '../reference';
import type { SourcedEvent } from '../reference';

const T0 = Date.UTC(2026, 10, 1);
const MINUTE = 60_000;

function graphOf(input: unknown): PipelineGraph {
  const result = validateGraphDefinition(input);
  if (!result.valid) throw new Error(JSON.stringify(result.errors));
  return result.graph;
}

const event = (type: string, minute: number, payload: Record<string, unknown>): EventEnvelope => ({
  event_type: type,
  timestamp: T0 + minute * MINUTE,
  payload,
});

const paymentsJoin = (kind: string, extra: Record<string, unknown> = {}) =>
  graphOf({
    name: 'orders-paid',
    sources: [
      { id: 'orders', topic: 'orders' },
      { id: 'payments', topic: 'payments' },
    ],
    transforms: [
      {
        id: 'paid',
        type: 'join',
        inputs: ['orders', 'payments'],
        on: 'order',
        within_seconds: 600,
        kind,
        ...extra,
      },
    ],
    sinks: [{ id: 'out', input: 'paid', topic: 'orders_paid' }],
  });

const customersJoin = (onMissing: string) =>
  graphOf({
    name: 'orders-customers',
    sources: [
      { id: 'orders', topic: 'orders' },
      { id: 'customers', topic: 'customers', as: 'table', key: 'customer' },
    ],
    transforms: [
      {
        id: 'enriched',
        type: 'join',
        inputs: ['orders', 'customers'],
        on: 'customer',
        on_missing: onMissing,
        select: { order: 'left.order', tier: 'right.tier' },
      },
    ],
    sinks: [{ id: 'out', input: 'enriched', topic: 'orders_enriched' }],
  });

/** The one sink's output, its results as join results. */
function run(graph: PipelineGraph, events: SourcedEvent[]) {
  const output = runGraphReference(planOfGraph(graph), events);
  const { results, late } = output.sinks['out']!;
  return {
    ...output,
    results: results as Array<{ key: string; value: JoinResult }>,
    late,
  };
}

const canonical = (records: Array<{ key: string; value: unknown }>) =>
  records.map((record) => JSON.stringify(record)).sort();

/** Two time-ordered inputs merged in the order `picks` says (true: the left's next). */
function merge<T>(left: T[], right: T[], picks: boolean[]): T[] {
  const out: T[] = [];
  let l = 0;
  let r = 0;
  for (const pick of picks) {
    if (l === left.length && r === right.length) break;
    if (pick ? l < left.length : r >= right.length) out.push(left[l++]!);
    else out.push(right[r++]!);
  }
  return [...out, ...left.slice(l), ...right.slice(r)];
}

describe('interval joins in a graph', () => {
  const orders = [
    { source: 'orders', event: event('order.placed', 0, { order: 'a', total: 10 }) },
    { source: 'orders', event: event('order.placed', 1, { order: 'b', total: 20 }) },
    { source: 'orders', event: event('order.placed', 30, { order: 'c', total: 30 }) },
  ];
  const payments = [
    { source: 'payments', event: event('payment', 5, { order: 'a', amount: 10 }) },
    { source: 'payments', event: event('payment', 40, { order: 'b', amount: 20 }) },
    { source: 'payments', event: event('payment', 50, { order: 'z', amount: 1 }) },
  ];
  const events = [...orders, ...payments].sort(
    (x, y) => Number(x.event.timestamp) - Number(y.event.timestamp),
  );

  it('joins records of one key within the interval, keyed by the join key', () => {
    const output = run(paymentsJoin('inner'), events);
    expect(output.results).toEqual([
      {
        key: 'a',
        value: {
          pipeline_id: expect.any(String),
          join: 'paid',
          key: 'a',
          event_time: new Date(T0 + 5 * MINUTE).toISOString(),
          left: { order: 'a', total: 10 },
          right: { order: 'a', amount: 10 },
        },
      },
    ]);
  });

  it('reports an unmatched left (outer: either) record once, when no partner can come', () => {
    const left = run(paymentsJoin('left'), events).results;
    expect(left.map(({ value }) => [value.key, value.right === null])).toEqual([
      ['a', false],
      ['b', true],
      ['c', true],
    ]);
    const outer = run(paymentsJoin('outer'), events).results;
    expect(outer.map(({ value }) => value.key).sort()).toEqual(['a', 'b', 'b', 'c', 'z']);
  });

  it('gives the same results for every interleaving of the two inputs', () => {
    const keys = fc.constantFrom('a', 'b', 'c');
    const side = (type: string) =>
      fc
        .array(fc.record({ minute: fc.integer({ min: 0, max: 120 }), order: keys }), {
          maxLength: 25,
        })
        .map((records) =>
          records
            .sort((x, y) => x.minute - y.minute)
            .map(({ minute, order }, index) => ({
              source: type,
              event: event(type, minute, { order, n: index }),
            })),
        );
    fc.assert(
      fc.property(
        side('orders'),
        side('payments'),
        fc.array(fc.boolean(), { maxLength: 60 }),
        fc.array(fc.boolean(), { maxLength: 60 }),
        fc.constantFrom('inner', 'left', 'outer'),
        (lefts, rights, picksA, picksB, kind) => {
          const graph = paymentsJoin(kind);
          const a = run(graph, merge(lefts, rights, picksA));
          const b = run(graph, merge(lefts, rights, picksB));
          expect(a.late).toEqual([]);
          expect(canonical(a.results)).toEqual(canonical(b.results));
        },
      ),
    );
  });

  it('names selected fields, null for a side that is not there', () => {
    const graph = paymentsJoin('left', { select: { total: 'left.total', paid: 'right.amount' } });
    const values = run(graph, events).results.map(({ value }) => value);
    expect(values.map(({ total, paid }) => [total, paid])).toEqual([
      [10, 10],
      [20, null],
      [30, null],
    ]);
  });

  it('reports a record behind the watermark late, and skips one with no key', () => {
    const graph = paymentsJoin('inner');
    const output = run(graph, [
      { source: 'orders', event: event('o', 100, { order: 'a' }) },
      { source: 'payments', event: event('p', 100, { order: 'a' }) },
      { source: 'orders', event: event('o', 10, { order: 'a' }) },
      { source: 'orders', event: event('o', 101, { total: 1 }) },
    ]);
    expect(output.results).toHaveLength(1);
    expect(output.late).toEqual([
      {
        key: 'a',
        value: expect.objectContaining({ group: 'a', side: 'left', event: expect.anything() }),
      },
    ]);
    expect(output.stats).toMatchObject({ late: 1, skipped: 1, emitted: 1 });
  });
});

interface Sourced extends SourcedEvent {
  event: EventEnvelope;
}

describe('stream-table joins in a graph', () => {
  const row = (minute: number, customer: string, tier: string): Sourced => ({
    source: 'customers',
    event: event('customer', minute, { customer, tier }),
  });
  const order = (minute: number, customer: string, id: string): Sourced => ({
    source: 'orders',
    event: event('order', minute, { customer, order: id }),
  });

  it('joins each order with the row current at its event time', () => {
    const output = run(customersJoin('emit'), [
      row(0, 'c1', 'bronze'),
      order(5, 'c1', 'o1'),
      row(10, 'c1', 'gold'),
      order(9, 'c1', 'o2'),
      order(12, 'c1', 'o3'),
      order(13, 'c2', 'o4'),
      row(20, 'c2', 'silver'),
    ]);
    expect(output.results.map(({ value }) => [value['order'], value['tier']])).toEqual([
      ['o1', 'bronze'],
      ['o2', 'bronze'],
      ['o3', 'gold'],
      ['o4', null],
    ]);
  });

  it('sends an order with no row to the dead letters under on_missing: error', () => {
    const output = run(customersJoin('error'), [order(1, 'c9', 'o1'), row(2, 'c1', 'gold')]);
    expect(output.results).toEqual([]);
    expect(output.dead_letters).toEqual([
      {
        pipeline_id: expect.any(String),
        reason: expect.stringMatching(/^transforms\[0\] \(join\): no row with key "c9"/),
        event: expect.objectContaining({ payload: { customer: 'c9', order: 'o1' } }),
      },
    ]);
  });

  it('gives the same results for every interleaving of orders and table updates', () => {
    const customers = fc.constantFrom('c1', 'c2', 'c3');
    const stream = <T>(make: (minute: number, customer: string, index: number) => T) =>
      fc
        .array(fc.record({ minute: fc.integer({ min: 0, max: 60 }), customer: customers }), {
          maxLength: 20,
        })
        .map((records) =>
          records
            .sort((x, y) => x.minute - y.minute)
            .map(({ minute, customer }, index) => make(minute, customer, index)),
        );
    fc.assert(
      fc.property(
        stream((minute, customer, index) => order(minute, customer, `o${index}`)),
        stream((minute, customer, index) => row(minute, customer, `t${index}`)),
        fc.array(fc.boolean(), { maxLength: 40 }),
        (orders, rows, picks) => {
          const graph = customersJoin('emit');
          const merged = run(graph, merge(orders, rows, picks)).results;
          // Brute force: the last row at or before the order's time (of two at one time, the later).
          const expected = orders.map(({ event: placed }) => {
            const time = Number(placed.timestamp);
            const current = rows
              .filter(
                (r) =>
                  r.event.payload['customer'] === placed.payload['customer'] &&
                  Number(r.event.timestamp) <= time,
              )
              .at(-1);
            return [placed.payload['order'], current?.event.payload['tier'] ?? null];
          });
          expect(merged.map(({ value }) => [value['order'], value['tier']]).sort()).toEqual(
            expected.sort(),
          );
        },
      ),
    );
  });
});
