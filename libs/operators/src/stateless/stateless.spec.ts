import type { EventEnvelope, EventResult } from '@sluice/contracts';

import { PipelineTestDriver } from '../testing';

const event = (
  payload: Record<string, unknown>,
  extra: Partial<EventEnvelope> = {},
): EventEnvelope => ({
  event_type: 'order.placed',
  entity_id: 'order-1',
  timestamp: '2026-11-29T10:00:00.000Z',
  payload,
  metadata: { source: 'web', nested: { depth: 2 } },
  ...extra,
});

function pipelineOf(...operators: unknown[]) {
  return PipelineTestDriver.create({
    id: '00000000-0000-4000-8000-00000000000a',
    name: 't',
    output: 'out',
    operators,
  });
}

/** Runs events through a stateless pipeline; returns what passed and the counters. */
function run(operators: unknown[], ...events: EventEnvelope[]) {
  const driver = pipelineOf(...operators);
  driver.send(...events);
  return {
    out: driver.readValues() as EventResult[],
    stats: driver.stats(),
    dead: driver.readDeadLetters(),
  };
}

const passes = (operator: unknown, payload: Record<string, unknown>) =>
  run([operator], event(payload)).out.length === 1;

describe('filter', () => {
  it.each([
    ['eq', 'paid', { status: 'paid' }, true],
    ['eq', 'paid', { status: 'PAID' }, false],
    ['eq', 5, { status: '5' }, false],
    ['eq', { a: [1, 2] }, { status: { a: [1, 2] } }, true],
    ['ne', 'paid', { status: 'refunded' }, true],
    ['ne', 'paid', { status: 'paid' }, false],
    ['gt', 10, { status: 10.5 }, true],
    ['gt', 10, { status: 10 }, false],
    ['gte', 10, { status: 10 }, true],
    ['lt', 10, { status: 9 }, true],
    ['lte', 10, { status: 10 }, true],
    ['lte', 10, { status: 11 }, false],
    ['contains', 'ai', { status: 'paid' }, true],
    ['contains', 'x', { status: 'paid' }, false],
    ['contains', 'vip', { status: ['new', 'vip'] }, true],
    ['contains', 'vip', { status: ['new'] }, false],
    ['in', ['paid', 'settled'], { status: 'settled' }, true],
    ['in', ['paid', 'settled'], { status: 'pending' }, false],
    ['in', [{ k: 1 }], { status: { k: 1 } }, true],
  ])('%s %j on %j: %s', (op, value, payload, kept) => {
    expect(passes({ type: 'filter', field: 'status', op, value }, payload)).toBe(kept);
  });

  it('drops events missing the field for every op but ne, which keeps them', () => {
    for (const [op, value] of [
      ['eq', 1],
      ['gt', 1],
      ['lt', 1],
      ['gte', 1],
      ['lte', 1],
      ['in', [1]],
      ['contains', 'x'],
    ] as const) {
      expect(passes({ type: 'filter', field: 'absent', op, value }, {})).toBe(false);
    }
    expect(passes({ type: 'filter', field: 'absent', op: 'ne', value: 1 }, {})).toBe(true);
    expect(passes({ type: 'filter', field: 'status', op: 'eq', value: 1 }, { status: null })).toBe(
      false,
    );
  });

  it('compares numbers only with gt/lt/gte/lte: a numeric string is dropped', () => {
    expect(passes({ type: 'filter', field: 'total', op: 'gt', value: 1 }, { total: '5' })).toBe(
      false,
    );
    expect(passes({ type: 'filter', field: 'total', op: 'gt', value: 1 }, { total: true })).toBe(
      false,
    );
  });

  it('exists keeps present fields, or absent ones with value false', () => {
    expect(passes({ type: 'filter', field: 'a', op: 'exists' }, { a: 0 })).toBe(true);
    expect(passes({ type: 'filter', field: 'a', op: 'exists' }, {})).toBe(false);
    expect(passes({ type: 'filter', field: 'a', op: 'exists', value: false }, {})).toBe(true);
    expect(passes({ type: 'filter', field: 'a', op: 'exists', value: false }, { a: 1 })).toBe(
      false,
    );
  });

  it('resolves nested and $. paths', () => {
    expect(
      passes(
        { type: 'filter', field: 'customer.tier', op: 'eq', value: 'gold' },
        { customer: { tier: 'gold' } },
      ),
    ).toBe(true);
    expect(
      passes(
        { type: 'filter', field: 'customer.tier', op: 'eq', value: 'gold' },
        { customer: 'gold' },
      ),
    ).toBe(false);
    expect(passes({ type: 'filter', field: '$.metadata.source', op: 'eq', value: 'web' }, {})).toBe(
      true,
    );
    expect(passes({ type: 'filter', field: '$.entity_id', op: 'eq', value: 'order-1' }, {})).toBe(
      true,
    );
    expect(
      passes({ type: 'filter', field: '$.metadata.nested.depth', op: 'gte', value: 2 }, {}),
    ).toBe(true);
    expect(
      passes(
        { type: 'filter', field: 'a.b.c.d.e', op: 'eq', value: 1 },
        { a: { b: { c: { d: { e: 1 } } } } },
      ),
    ).toBe(true);
  });

  it('counts filtered events, and dead-letters under on_missing/on_invalid: error', () => {
    const { stats } = run(
      [{ type: 'filter', field: 'status', op: 'eq', value: 'paid' }],
      event({ status: 'paid' }),
      event({ status: 'x' }),
      event({}),
    );
    expect(stats).toMatchObject({ processed: 3, filtered: 2, emitted: 1, failed: 0 });

    const missing = run(
      [{ type: 'filter', field: 'status', op: 'ne', value: 'x', on_missing: 'error' }],
      event({}),
    );
    expect(missing.out).toEqual([]);
    expect(missing.dead).toEqual([
      {
        pipeline_id: expect.any(String),
        reason: 'operators[0] (filter): field status is missing',
        event: event({}),
      },
    ]);
    expect(missing.stats.failed).toBe(1);

    const invalid = run(
      [{ type: 'filter', field: 'total', op: 'gt', value: 1, on_invalid: 'error' }],
      event({ total: 'lots' }),
    );
    expect(invalid.dead[0]!.reason).toBe(
      'operators[0] (filter): field total is a string, gt needs a number',
    );
  });
});

describe('map', () => {
  const mapped = (transform: string, payload: Record<string, unknown>, field = 'v') =>
    run([{ type: 'map', field, transform }], event(payload)).out[0]?.payload;

  it.each([
    ['uppercase', 'gbp', 'GBP'],
    ['lowercase', 'GBP', 'gbp'],
    ['trim', '  x \n', 'x'],
    ['multiply:100', 12.5, 1250],
    ['multiply:-0.5', 4, -2],
    ['add:2.5', 1, 3.5],
    ['add:-1e3', 0, -1000],
  ])('%s turns %j into %j', (transform, input, output) => {
    expect(mapped(transform, { v: input })).toEqual({ v: output });
  });

  it('passes a missing or wrong-typed field unchanged', () => {
    expect(mapped('uppercase', {})).toEqual({});
    expect(mapped('uppercase', { v: 5 })).toEqual({ v: 5 });
    expect(mapped('multiply:2', { v: '5' })).toEqual({ v: '5' });
    expect(mapped('add:1', { v: null })).toEqual({ v: null });
  });

  it('skips an event whose result is not finite, or dead-letters it under on_invalid: error', () => {
    const skipped = run(
      [{ type: 'map', field: 'v', transform: 'multiply:1e308' }],
      event({ v: 1e308 }),
    );
    expect(skipped.out).toEqual([]);
    expect(skipped.stats).toMatchObject({ skipped: 1, failed: 0 });
    const failed = run(
      [{ type: 'map', field: 'v', transform: 'multiply:1e308', on_invalid: 'error' }],
      event({ v: 1e308 }),
    );
    expect(failed.dead[0]!.reason).toContain('multiply:1e308 of 1e+308 is not finite');
    const missing = run(
      [{ type: 'map', field: 'v', transform: 'trim', on_missing: 'error' }],
      event({}),
    );
    expect(missing.dead[0]!.reason).toBe(
      'operators[0] (map): field v is missing, trim needs a string',
    );
  });

  it('writes nested and $. paths without touching the event other pipelines see', () => {
    const original = event({ customer: { name: ' ada ', tier: 'gold' } });
    const snapshot = JSON.parse(JSON.stringify(original));
    const { out } = run(
      [
        { type: 'map', field: 'customer.name', transform: 'trim' },
        { type: 'map', field: '$.metadata.source', transform: 'uppercase' },
      ],
      original,
    );
    expect(out[0]!.payload).toEqual({ customer: { name: 'ada', tier: 'gold' } });
    expect(out[0]!.metadata).toEqual({ source: 'WEB', nested: { depth: 2 } });
    expect(original).toEqual(snapshot);
  });
});

describe('branch', () => {
  const branch = {
    type: 'branch',
    field: 'region',
    branches: { uk: 'europe', fr: 'europe', us: 'americas' },
  };

  it('stores the route on the result and in the payload as _route', () => {
    const { out } = run([branch], event({ region: 'us' }));
    expect(out[0]).toMatchObject({
      route: 'americas',
      payload: { region: 'us', _route: 'americas' },
    });
  });

  it('passes an event with no matching value unchanged and without a route', () => {
    for (const payload of [{ region: 'jp' }, {}, { region: 7 }]) {
      const { out } = run([branch], event(payload));
      expect(out[0]!.route).toBeUndefined();
      expect(out[0]!.payload).toEqual(payload);
    }
  });
});

describe('enrich', () => {
  const lookups = { customers: { 'c-1': { tier: 'gold', country: 'uk', secret: 'x' } } };
  const enrich = {
    type: 'enrich',
    source: 'customers',
    key: 'customer_id',
    fields: ['tier', 'country', 'missing'],
  };

  it('copies the listed fields of the matching record into the payload', () => {
    const driver = pipelineOf(enrich);
    const withLookups = PipelineTestDriver.create(driver.definition, { lookups });
    withLookups.send(event({ customer_id: 'c-1', total: 3 }));
    expect((withLookups.readValues()[0] as EventResult).payload).toEqual({
      customer_id: 'c-1',
      total: 3,
      tier: 'gold',
      country: 'uk',
    });
  });

  it('follows on_missing when there is no match or no key: skip by default, error on request', () => {
    const skip = PipelineTestDriver.create(
      { name: 't', output: 'o', operators: [enrich] },
      { lookups },
    );
    skip.send(event({ customer_id: 'c-2' }), event({}));
    expect(skip.readValues()).toEqual([]);
    expect(skip.stats()).toMatchObject({ skipped: 2 });

    const error = PipelineTestDriver.create(
      { name: 't', output: 'o', operators: [{ ...enrich, on_missing: 'error' }] },
      { lookups },
    );
    error.send(event({ customer_id: 'c-2' }));
    expect(error.readDeadLetters()[0]!.reason).toBe(
      'operators[0] (enrich): no "c-2" in lookup table customers',
    );
  });

  it('defaults the key to the entity id, as AllSource configs have none', () => {
    const driver = PipelineTestDriver.create(
      {
        name: 't',
        output: 'o',
        operators: [{ type: 'enrich', source: 'orders', fields: ['note'] }],
      },
      { lookups: { orders: { 'order-1': { note: 'gift' } } } },
    );
    driver.send(event({}));
    expect((driver.readValues()[0] as EventResult).payload).toEqual({ note: 'gift' });
  });
});

describe('pipeline matching', () => {
  it('takes every event type when source_event_types is empty, only the listed ones otherwise', () => {
    const all = PipelineTestDriver.create({ name: 't', output: 'o', operators: [] });
    all.send(event({}), event({}, { event_type: 'user.signed_up' }));
    expect(all.stats().processed).toBe(2);
    const some = PipelineTestDriver.create({
      name: 't',
      output: 'o',
      operators: [],
      source_event_types: ['user.signed_up'],
    });
    some.send(event({}), event({}, { event_type: 'user.signed_up' }));
    expect(some.stats().processed).toBe(1);
  });

  it('processes nothing when disabled', () => {
    const driver = PipelineTestDriver.create({
      name: 't',
      output: 'o',
      operators: [],
      enabled: false,
    });
    driver.send(event({}));
    expect(driver.readValues()).toEqual([]);
    expect(driver.stats().processed).toBe(0);
  });

  it('emits the transformed event with pipeline_id, keyed by its entity', () => {
    const driver = pipelineOf({ type: 'map', field: 'v', transform: 'add:1' });
    driver.send(event({ v: 1 }));
    expect(driver.readResults()).toEqual([
      {
        key: 'order-1',
        value: { ...event({ v: 2 }), pipeline_id: '00000000-0000-4000-8000-00000000000a' },
      },
    ]);
  });

  it('dead-letters malformed events with their reason and no pipeline', () => {
    const driver = pipelineOf();
    driver.send({ payload: {} }, 'text', event({}, { timestamp: 'soon' }));
    expect(driver.readDeadLetters().map((d) => [d.pipeline_id, d.reason])).toEqual([
      [null, 'event_type is missing or not a non-empty string'],
      [null, 'the event is not a JSON object'],
      [null, 'timestamp "soon" is not ISO-8601'],
    ]);
  });
});
