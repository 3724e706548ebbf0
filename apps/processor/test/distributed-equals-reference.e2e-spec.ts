// docs/design.md §5: read read_committed, the output of a distributed run equals the in-process reference
// run of the same definition over the same events.
import { dailyRevenueDefinition, generateOrders } from '@sluice/operators/testing';

import { canonical, reference, TestCluster } from './cluster';
import type { LinearDefinition } from './cluster';

const DAY = 86_400_000;

describe('daily revenue on a 6-partition source keyed by entity', () => {
  let cluster: TestCluster;

  beforeEach(async () => {
    cluster = new TestCluster(6);
    await cluster.setup();
  });

  afterEach(async () => {
    await cluster.teardown();
  });

  // By default a transaction no reader waits for (state changes, partials of a daily window)
  // stays open for a second (QUIET_COMMIT_INTERVAL_MS); the first case commits every one at
  // the commit interval instead.
  it.each([
    [1, { QUIET_COMMIT_INTERVAL_MS: '100' }],
    [3, {}],
  ])('with %i replica(s) %j equals the reference run', async (replicas, env) => {
    const definition = dailyRevenueDefinition({
      id: '00000000-0000-4000-8000-00000000000a',
      output: cluster.output('daily_revenue'),
    }) as LinearDefinition;
    await cluster.putPipeline(definition);
    const start = Date.UTC(2026, 10, 1);
    // 4 days of orders, 1,000 entities: every currency lands on every partition.
    const orders = generateOrders({ count: 20_000, start, stepMs: (4 * DAY) / 20_000 });
    await cluster.produce(orders);
    for (let i = 0; i < replicas; i++) await cluster.startReplica(`r${i}`, env);
    const ticks = await cluster.tickEveryPartition(start + 6 * DAY);

    const expected = reference(definition, [...orders, ...ticks]);
    expect(expected.late).toHaveLength(0);
    expect(expected.results.length).toBeGreaterThanOrEqual(8 * 4);
    const results = await cluster.read(definition.output, expected.results.length);
    expect(canonical(results)).toEqual(canonical(expected.results));
  });
});
