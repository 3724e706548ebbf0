import { validateDefinition } from '@sluice/contracts';
import type { PipelineDefinition, WindowResult } from '@sluice/contracts';

import { runReference } from './reference';
import { dailyRevenueDefinition, generateOrders, orderEvent } from './testing';

function valid(input: unknown): PipelineDefinition {
  const result = validateDefinition(input);
  if (!result.valid) throw new Error(JSON.stringify(result.errors));
  return result.definition;
}

describe('runReference: the AllSource daily-revenue example', () => {
  const definition = valid(dailyRevenueDefinition());

  it('sums paid orders per currency per UTC day, flushing the last day at the end', () => {
    const events = [
      orderEvent('2026-11-28T09:00:00Z', { total: 12.5, currency: 'gbp' }),
      orderEvent('2026-11-28T10:00:00Z', { total: 20, currency: 'usd' }),
      orderEvent('2026-11-28T11:00:00Z', { total: 99, currency: 'gbp', status: 'refunded' }),
      orderEvent('2026-11-28T12:00:00Z', { total: 7.25, currency: 'gbp' }),
      orderEvent('2026-11-28T13:00:00Z', { total: 1, currency: 'gbp', type: 'order.viewed' }),
      orderEvent('2026-11-29T08:00:00Z', { total: 3, currency: 'gbp' }),
    ];
    const { results, late, dead_letters, stats } = runReference(definition, events);
    expect(
      results.map((r) => [
        r.key,
        (r.value as WindowResult).window.start.slice(0, 10),
        (r.value as WindowResult).value,
        (r.value as WindowResult).count,
      ]),
    ).toEqual([
      ['gbp', '2026-11-28', 19.75, 2],
      ['usd', '2026-11-28', 20, 1],
      ['gbp', '2026-11-29', 3, 1],
    ]);
    expect(results.every((r) => (r.value as WindowResult).final)).toBe(true);
    expect(late).toEqual([]);
    expect(dead_letters).toEqual([]);
    expect(stats).toMatchObject({
      processed: 5,
      filtered: 1,
      skipped: 0,
      failed: 0,
      late: 0,
      emitted: 3,
    });
  });

  it('advances event time on every valid event, even one of another type', () => {
    // The viewed event moves time past the 28th, so the late-arriving paid order is late.
    const { results, late } = runReference(definition, [
      orderEvent('2026-11-28T09:00:00Z', { total: 1 }),
      orderEvent('2026-11-29T00:00:00Z', { type: 'order.viewed' }),
      orderEvent('2026-11-28T23:59:59Z', { total: 2 }),
    ]);
    expect(results.map((r) => (r.value as WindowResult).value)).toEqual([1]);
    expect(late.map((l) => l.value.event_time)).toEqual(['2026-11-28T23:59:59.000Z']);
  });

  it('agrees with a direct computation over 5,000 generated orders', () => {
    const orders = generateOrders({ count: 5000, seed: 7, stepMs: 60_000 });
    const expected = new Map<string, { cents: number; count: number }>();
    for (const order of orders) {
      if (order.payload['status'] !== 'paid') continue;
      const key = `${order.payload['currency']}|${String(order.timestamp).slice(0, 10)}`;
      const entry = expected.get(key) ?? { cents: 0, count: 0 };
      entry.cents += Math.round((order.payload['total'] as number) * 100);
      entry.count += 1;
      expected.set(key, entry);
    }
    const { results, late, stats } = runReference(definition, orders);
    expect(late).toEqual([]);
    expect(results).toHaveLength(expected.size);
    for (const { key, value } of results) {
      const window = value as WindowResult;
      const want = expected.get(`${key}|${window.window.start.slice(0, 10)}`)!;
      expect(window.count).toBe(want.count);
      expect(window.value).toBeCloseTo(want.cents / 100, 6);
    }
    expect(stats.processed).toBe(5000);
    expect(stats.filtered).toBe(5000 - [...expected.values()].reduce((n, e) => n + e.count, 0));
  });

  it('dead-letters malformed events and keeps going', () => {
    const { results, dead_letters } = runReference(definition, [
      { event_type: 'order.placed' },
      orderEvent('2026-11-28T09:00:00Z', { total: 4 }),
      { event_type: 'order.placed', payload: {}, timestamp: 'not a time' },
    ]);
    expect(dead_letters.map((d) => d.reason)).toEqual([
      'payload is missing or not a JSON object',
      'timestamp "not a time" is not ISO-8601',
    ]);
    expect(results).toHaveLength(1);
  });
});
