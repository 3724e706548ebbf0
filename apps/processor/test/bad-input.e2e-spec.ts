// Bad input at volume (docs/design.md §1): malformed records of every kind interleaved with valid
// events. No replica crashes, every malformed record is in the dead-letter topic with a reason,
// and the valid events' results equal the reference run.
import fc from 'fast-check';
import { dailyRevenueDefinition, generateOrders, seededRandom } from '@sluice/operators/testing';
import type { EventEnvelope } from '@sluice/contracts';

import { canonical, reference, TestCluster } from './cluster';
import type { LinearDefinition } from './cluster';

const MALFORMED = Number(process.env['SLUICE_FUZZ_RECORDS'] ?? 100_000);
const DAY = 86_400_000;

/** Malformed record values, each kind docs/design.md §1 names, drawn with a fixed seed. */
function malformedValues(count: number): Array<string | Buffer> {
  const random = seededRandom(99);
  const kinds: Array<() => string | Buffer> = [
    () =>
      Buffer.from(
        fc.sample(fc.uint8Array({ minLength: 1, maxLength: 64 }), {
          numRuns: 1,
          seed: Math.floor(random() * 1e9),
        })[0]!,
      ),
    () => Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d]), // invalid UTF-8 inside JSON
    () =>
      JSON.stringify(
        fc.sample(fc.oneof(fc.integer(), fc.string(), fc.array(fc.integer()), fc.constant(null)), {
          numRuns: 1,
          seed: Math.floor(random() * 1e9),
        })[0],
      ),
    () => JSON.stringify({ payload: { total: 1 }, timestamp: '2026-11-01T00:00:00Z' }),
    () => JSON.stringify({ event_type: 42, payload: {} }),
    () => JSON.stringify({ event_type: 'order.placed', payload: 'not an object' }),
    () =>
      JSON.stringify({
        event_type: 'order.placed',
        payload: {},
        timestamp: '1066-10-14T09:00:00Z',
      }),
    () => JSON.stringify({ event_type: 'order.placed', payload: {}, timestamp: 253402300799999 }),
    () => JSON.stringify({ event_type: 'order.placed', payload: {}, timestamp: 'soon' }),
    () => '{"event_type": "order.placed", "payload": {',
  ];
  return Array.from({ length: count }, () => kinds[Math.floor(random() * kinds.length)]!());
}

describe('bad input at volume', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = new TestCluster(6);
    await cluster.setup();
  });

  afterAll(async () => {
    await cluster.teardown();
  });

  it(`dead-letters ${MALFORMED} malformed records among valid ones and loses nothing`, async () => {
    const definition = dailyRevenueDefinition({
      id: '00000000-0000-4000-8000-0000000000f1',
      output: cluster.output('daily_revenue'),
    }) as LinearDefinition;
    await cluster.putPipeline(definition);
    const replicas = [await cluster.startReplica('r0'), await cluster.startReplica('r1')];

    const start = Date.UTC(2026, 10, 1);
    const orders = generateOrders({ count: 20_000, start, stepMs: (3 * DAY) / 20_000, seed: 5 });
    const malformed = malformedValues(MALFORMED);
    // Five events of about 1 MB: valid JSON, but too large to process (and no event type).
    const huge = Array.from({ length: 5 }, (_, i) =>
      JSON.stringify({ payload: { blob: 'x'.repeat(1_000_000 - 100), i } }),
    );
    const mixed: Array<EventEnvelope | string | Buffer> = [];
    const perOrder = Math.ceil(malformed.length / orders.length);
    const bad = [...malformed];
    for (const order of orders) {
      mixed.push(order);
      for (let i = 0; i < perOrder && bad.length > 0; i++) mixed.push(bad.pop()!);
    }
    mixed.push(...bad);
    await cluster.produce(mixed, { chunk: 2000 });
    // One request each: the broker takes at most 1 MiB per partition and request.
    for (const value of huge) await cluster.produce([value]);
    const ticks = await cluster.tickEveryPartition(start + 5 * DAY);

    const expected = reference(definition, [...orders, ...ticks]);
    const results = await cluster.read(definition.output, expected.results.length);
    expect(canonical(results)).toEqual(canonical(expected.results));

    const dlq = await cluster.readWithHeaders(cluster.topics.dlq, MALFORMED + huge.length);
    expect(dlq).toHaveLength(MALFORMED + huge.length);
    expect(dlq.every((record) => (record.headers['sluice-error'] ?? '').length > 0)).toBe(true);
    expect(dlq.filter((r) => r.headers['sluice-error']!.includes('bytes; at most'))).toHaveLength(
      5,
    );

    for (const replica of replicas) {
      expect(await replica.ready()).toBe(true);
      expect(replica.logs().some((entry) => entry['level'] === 60)).toBe(false);
    }
  });
});
