import fc from 'fast-check';
import type { EventEnvelope } from '@sluice/contracts';

import { GraphTestDriver } from './graph-test-driver';

const T0 = Date.UTC(2026, 10, 1);
const MINUTE = 60_000;

const ordersPaid = {
  id: '00000000-0000-4000-8000-0000000000f1',
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
      kind: 'outer',
    },
  ],
  sinks: [{ id: 'out', input: 'paid', topic: 'orders_paid' }],
};

const event = (type: string, minute: number, order: string): EventEnvelope => ({
  event_type: type,
  timestamp: T0 + minute * MINUTE,
  payload: { order, minute },
});

type Step = { source: 'orders' | 'payments'; event: EventEnvelope };

/** Each source in time order, the two interleaved as generated. */
const steps = fc
  .array(
    fc.record({
      source: fc.constantFrom('orders' as const, 'payments' as const),
      gap: fc.integer({ min: 0, max: 8 }),
      order: fc.constantFrom('a', 'b', 'c'),
    }),
    { maxLength: 40 },
  )
  .map((generated) => {
    const clock = { orders: 0, payments: 0 };
    return generated.map(({ source, gap, order }): Step => {
      clock[source] += gap;
      return { source, event: event(source, clock[source], order) };
    });
  });

function runAll(driver: GraphTestDriver, list: Step[]): GraphTestDriver {
  for (const { source, event: e } of list) driver.send(source, e);
  return driver;
}

const canonical = (driver: GraphTestDriver) =>
  driver
    .readResults('out')
    .map((record) => JSON.stringify(record))
    .sort();

describe('GraphTestDriver', () => {
  it('runs a join: a pair once both sides are in, an unmatched record once time passes it', () => {
    const driver = GraphTestDriver.create(ordersPaid);
    driver.send('orders', event('order', 0, 'a'));
    expect(driver.readValues('out')).toEqual([]);
    driver.send('payments', event('payment', 5, 'a'), event('payment', 6, 'z'));
    expect(driver.readValues('out')).toEqual([
      expect.objectContaining({ key: 'a', left: { order: 'a', minute: 0 } }),
    ]);
    driver.advanceEventTime('orders', T0 + 60 * MINUTE);
    driver.advanceEventTime('payments', T0 + 60 * MINUTE);
    expect(driver.readValues('out')).toEqual([
      expect.objectContaining({ key: 'z', left: null, right: { order: 'z', minute: 6 } }),
    ]);
    expect(driver.snapshot('paid')).toEqual([{ key: '~watermark', value: T0 + 60 * MINUTE }]);
  });

  it('continues after a restart from the join’s snapshot as an uninterrupted run does (property)', () => {
    fc.assert(
      fc.property(steps, fc.nat(), (list, at) => {
        const split = list.length === 0 ? 0 : at % (list.length + 1);
        const whole = runAll(GraphTestDriver.create(ordersPaid), list).endOfInput();
        const first = runAll(GraphTestDriver.create(ordersPaid), list.slice(0, split));
        const before = canonical(first);
        const second = runAll(first.restart(), list.slice(split)).endOfInput();
        expect([...before, ...canonical(second)].sort()).toEqual(canonical(whole));
      }),
    );
  });

  it('names a node that has no state', () => {
    expect(() => GraphTestDriver.create(ordersPaid).snapshot('orders')).toThrow(
      'the graph has no reduce, window or join orders',
    );
  });
});
