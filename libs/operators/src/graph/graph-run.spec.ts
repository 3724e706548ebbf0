// The graph runner against the linear runner it replaces in the reference (a property over
// generated definitions and events), and what only a graph has: several sources and sinks,
// fan-out, routes as inputs, and event time per source.
import fc from 'fast-check';
import { validateDefinition, validateGraphDefinition } from '@sluice/contracts';
import type {
  EventEnvelope,
  PipelineDefinition,
  PipelineGraph,
  WindowResult,
} from '@sluice/contracts';

import { PipelineRun } from '../pipeline-run';
import type { DeadLetter } from '../pipeline-run';
import { compilePipeline } from '../pipeline';
import { runGraphReference, runReference } from '../reference';
import type { KeyedRecord } from '../reference';
import type { LateRecord } from '../stateful/stage';
import { orderEvent } from '../testing';
import { planOfGraph } from './plan';
import { toEvent } from '@sluice/contracts';
import type { ResultRecord } from '@sluice/contracts';

const T0 = Date.UTC(2026, 10, 1);

/** The reference as it was before graphs: one PipelineRun over the events in order. */
function linearRun(definition: PipelineDefinition, events: EventEnvelope[]) {
  const results: Array<KeyedRecord<ResultRecord>> = [];
  const late: Array<KeyedRecord<LateRecord>> = [];
  const deadLetters: DeadLetter[] = [];
  const run = new PipelineRun(compilePipeline(definition), {
    result: (key, value) => results.push({ key, value }),
    late: (key, value) => late.push({ key, value }),
    deadLetter: (record) => deadLetters.push(record),
  });
  let time = -Infinity;
  for (const raw of events) {
    const decoded = toEvent(raw);
    if (!decoded.ok) throw new Error(decoded.reason);
    run.process(decoded.event);
    if (decoded.event.time > time) run.advanceTo((time = decoded.event.time));
  }
  run.flush();
  return { results, late, dead_letters: deadLetters, stats: { ...run.counters } };
}

const policy = fc.constantFrom(undefined, 'skip', 'error');
const statelessArb = fc.oneof(
  fc.record({
    type: fc.constant('filter'),
    field: fc.constantFrom('g', 'v', 'missing'),
    op: fc.constantFrom('eq', 'ne'),
    value: fc.constantFrom('a', 'b'),
    on_missing: policy,
  }),
  fc.record({
    type: fc.constant('filter'),
    field: fc.constantFrom('g', 'missing'),
    op: fc.constant('exists'),
    value: fc.boolean(),
  }),
  fc.record({
    type: fc.constant('map'),
    field: fc.constantFrom('v', 'g', 'missing'),
    transform: fc.constantFrom('multiply:2', 'add:1', 'uppercase'),
    on_missing: policy,
    on_invalid: policy,
  }),
  fc.record({
    type: fc.constant('branch'),
    field: fc.constantFrom('g', 'v'),
    branches: fc.constant({ a: 'ra', b: 'rb', A: 'rA' }),
    on_invalid: policy,
  }),
);
const statefulArb = fc.oneof(
  fc.record({
    type: fc.constant('reduce'),
    field: fc.constant('v'),
    function: fc.constantFrom('count', 'sum', 'max'),
    group_by: fc.constantFrom('g', null),
    on_invalid: policy,
  }),
  fc.record({
    type: fc.constant('window'),
    config: fc.constantFrom(
      { window_type: 'tumbling', size_seconds: 60, allowed_lateness_seconds: 10 },
      { window_type: 'sliding', size_seconds: 60, slide_seconds: 20 },
      { window_type: 'session', session_timeout_seconds: 30 },
    ),
    aggregation: fc.record({
      type: fc.constant('reduce'),
      field: fc.constant('v'),
      function: fc.constantFrom('sum', 'avg', 'min'),
      group_by: fc.constant('g'),
    }),
  }),
);
const definitionArb = fc
  .tuple(fc.array(statelessArb, { maxLength: 4 }), fc.option(statefulArb, { nil: undefined }))
  .map(([steps, stateful]) => {
    const operators = stateful ? [...steps, stateful] : steps;
    const validated = validateDefinition(
      JSON.parse(JSON.stringify({ name: 'p', output: 'o', operators })),
    );
    if (!validated.valid) throw new Error(JSON.stringify(validated.errors));
    return validated.definition;
  });
const eventsArb = fc
  .array(
    fc.record({
      t: fc.integer({ min: 0, max: 400 }),
      g: fc.constantFrom('a', 'b', 'c', 'A', undefined),
      v: fc.oneof(fc.integer({ min: -50, max: 50 }), fc.constant('x'), fc.constant(undefined)),
    }),
    { maxLength: 60 },
  )
  .map((list) =>
    list.map(({ t, g, v }, i): EventEnvelope => ({
      id: `e${i}`,
      event_type: 'x',
      entity_id: `k${i % 5}`,
      timestamp: T0 + t * 1000,
      payload: JSON.parse(JSON.stringify({ g, v })),
    })),
  );

describe('a linear definition run as a graph', () => {
  it('gives what the linear runner gives: results, late records, dead letters and counters', () => {
    fc.assert(
      fc.property(definitionArb, eventsArb, (definition, events) => {
        const expected = linearRun(definition, events);
        const snapshot = JSON.stringify(events);
        expect(runReference(definition, events)).toEqual(expected);
        expect(JSON.stringify(events)).toBe(snapshot); // the input is never written to
      }),
      { numRuns: 400 },
    );
  });
});

function graph(input: unknown): PipelineGraph {
  const validated = validateGraphDefinition(input);
  if (!validated.valid) throw new Error(JSON.stringify(validated.errors));
  return validated.graph;
}

/** The example, less the currency column: orders and refunds, a branch, a window. */
const revenueByRoute = graph({
  version: 1,
  id: '00000000-0000-4000-8000-0000000000e1',
  name: 'revenue-by-route',
  sources: [
    { id: 'orders', topic: 'orders', event_types: ['order.placed'], start: 'earliest' },
    { id: 'refunds', topic: 'refunds', event_types: ['order.refunded'] },
  ],
  transforms: [
    { id: 'paid', type: 'filter', input: 'orders', field: 'status', op: 'eq', value: 'paid' },
    {
      id: 'router',
      type: 'branch',
      input: 'paid',
      field: 'region',
      branches: { uk: 'gbp', us: 'usd' },
    },
    {
      id: 'daily',
      type: 'window',
      input: 'router.gbp',
      config: { window_type: 'tumbling', size_seconds: 86400 },
      aggregation: { type: 'reduce', field: 'total', function: 'sum', group_by: 'currency' },
    },
  ],
  sinks: [
    { id: 'out', input: 'daily', topic: 'daily_gbp' },
    { id: 'us_orders', input: 'router.usd', topic: 'us_orders' },
    { id: 'refunds_out', input: 'refunds', topic: 'refunds_copy' },
  ],
});

const order = (at: string, region: string, total: number, status = 'paid') =>
  orderEvent(at, { total, currency: region === 'uk' ? 'gbp' : 'usd', status, region });

describe('runGraphReference', () => {
  it('sends each route to its own sink and each source to what reads it', () => {
    const refund = orderEvent('2026-11-28T12:00:00Z', { type: 'order.refunded', total: 5 });
    const run = runGraphReference(planOfGraph(revenueByRoute), [
      { source: 'orders', event: order('2026-11-28T09:00:00Z', 'uk', 10) },
      { source: 'orders', event: order('2026-11-28T10:00:00Z', 'us', 7) },
      { source: 'orders', event: order('2026-11-28T11:00:00Z', 'uk', 4) },
      { source: 'orders', event: order('2026-11-28T11:30:00Z', 'uk', 100, 'refunded') },
      { source: 'refunds', event: refund },
      { source: 'orders', event: order('2026-11-29T01:00:00Z', 'uk', 1) },
    ]);
    const daily = run.sinks['out']!.results.map((r) => r.value as WindowResult);
    expect(daily.map((w) => [w.window.start.slice(0, 10), w.group, w.value, w.route])).toEqual([
      ['2026-11-28', 'gbp', 14, 'gbp'],
      ['2026-11-29', 'gbp', 1, 'gbp'],
    ]);
    const us = run.sinks['us_orders']!.results;
    expect(
      us.map((r) => [(r.value as { route?: string }).route, (r.value as EventEnvelope).payload]),
    ).toEqual([['usd', expect.objectContaining({ total: 7, _route: 'usd' })]]);
    expect(run.sinks['refunds_out']!.results.map((r) => (r.value as EventEnvelope).id)).toEqual([
      refund.id,
    ]);
    expect(run.sinks['us_orders']!.topic).toBe('us_orders');
    expect(run.stats).toMatchObject({ processed: 6, filtered: 1, emitted: 4 });
  });

  it('gives each reader of a split stream its own copy of the event', () => {
    const split = graph({
      name: 'split',
      sources: [{ id: 'in', topic: 'in' }],
      transforms: [
        { id: 'double', type: 'map', input: 'in', field: 'total', transform: 'multiply:2' },
        { id: 'upper', type: 'map', input: 'in', field: 'currency', transform: 'uppercase' },
      ],
      sinks: [
        { id: 'doubled', input: 'double', topic: 'doubled' },
        { id: 'uppered', input: 'upper', topic: 'uppered' },
        { id: 'as_is', input: 'in', topic: 'as_is' },
      ],
    });
    const event = orderEvent('2026-11-28T09:00:00Z', { total: 3, currency: 'gbp' });
    const before = JSON.stringify(event);
    const run = runGraphReference(planOfGraph(split), [{ source: 'in', event }]);
    const payload = (sink: string) => (run.sinks[sink]!.results[0]!.value as EventEnvelope).payload;
    expect(payload('doubled')).toMatchObject({ total: 6, currency: 'gbp' });
    expect(payload('uppered')).toMatchObject({ total: 3, currency: 'GBP' });
    expect(payload('as_is')).toMatchObject({ total: 3, currency: 'gbp' });
    expect(JSON.stringify(event)).toBe(before);
  });

  it("keeps event time per source: a quiet source holds back none of the other's windows", () => {
    const twoWindows = graph({
      name: 'two',
      sources: [
        { id: 'busy', topic: 'busy' },
        { id: 'quiet', topic: 'quiet' },
      ],
      transforms: ['busy', 'quiet'].map((input) => ({
        id: `${input}_count`,
        type: 'window',
        input,
        config: { window_type: 'tumbling', size_seconds: 60 },
        aggregation: { type: 'reduce', function: 'count' },
      })),
      sinks: [
        { id: 'busy_out', input: 'busy_count', topic: 'busy_out' },
        { id: 'quiet_out', input: 'quiet_count', topic: 'quiet_out' },
      ],
    });
    const at = (seconds: number) => orderEvent(T0 + seconds * 1000);
    const finals: string[] = [];
    const plan = planOfGraph(twoWindows);
    // Results in arrival order: the busy source's first window fires when its own time passes
    // it, though the quiet source has one event, early, and nothing after.
    const run = runGraphReference(plan, [
      { source: 'quiet', event: at(1) },
      { source: 'busy', event: at(2) },
      { source: 'busy', event: at(61) },
      { source: 'busy', event: at(125) },
    ]);
    for (const [sink, output] of Object.entries(run.sinks))
      for (const r of output.results)
        finals.push(`${sink}:${(r.value as WindowResult).window.start}`);
    expect(run.sinks['busy_out']!.results).toHaveLength(3);
    // busy's first two windows came before the end-of-input flush that closed quiet's window.
    expect(finals.slice(0, 2)).toEqual([
      `busy_out:${new Date(T0).toISOString()}`,
      `busy_out:${new Date(T0 + 60_000).toISOString()}`,
    ]);
  });

  it("sends a route only what its own branch sent there, not an earlier branch's route", () => {
    const chained = graph({
      name: 'chained',
      sources: [{ id: 'in', topic: 'in' }],
      transforms: [
        { id: 'by_region', type: 'branch', input: 'in', field: 'region', branches: { uk: 'x' } },
        {
          id: 'by_status',
          type: 'branch',
          input: 'by_region',
          field: 'status',
          branches: { paid: 'x', open: 'y' },
        },
      ],
      sinks: [
        { id: 'x', input: 'by_status.x', topic: 'x' },
        { id: 'y', input: 'by_status.y', topic: 'y' },
        { id: 'all', input: 'by_status', topic: 'all' },
      ],
    });
    const events = [
      orderEvent(T0, { id: 'uk-paid', region: 'uk', status: 'paid' }),
      orderEvent(T0, { id: 'uk-refunded', region: 'uk', status: 'refunded' }),
      orderEvent(T0, { id: 'us-open', region: 'us', status: 'open' }),
    ];
    const run = runGraphReference(
      planOfGraph(chained),
      events.map((event) => ({ source: 'in', event })),
    );
    const ids = (sink: string) =>
      run.sinks[sink]!.results.map((r) => [
        (r.value as EventEnvelope).id,
        (r.value as { route?: string }).route,
      ]);
    expect(ids('x')).toEqual([['uk-paid', 'x']]);
    expect(ids('y')).toEqual([['us-open', 'y']]);
    // The branch's whole output keeps the earlier route where this branch matched nothing.
    expect(ids('all')).toEqual([
      ['uk-paid', 'x'],
      ['uk-refunded', 'x'],
      ['us-open', 'y'],
    ]);
  });

  it('refuses an event for a source the graph does not have', () => {
    expect(() =>
      runGraphReference(planOfGraph(revenueByRoute), [{ source: 'nope', event: orderEvent(T0) }]),
    ).toThrow('no source nope');
  });
});
