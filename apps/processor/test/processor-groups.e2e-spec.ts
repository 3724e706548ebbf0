// Two processor groups on one cluster, one topic prefix and one source: each runs the pipelines
// bound to it (processor_group) and ignores the other's, so each output is its reference run's,
// once. Before pipelines were bound to a group, every group ran every pipeline: each output held
// every result twice.
import { dailyRevenueDefinition, generateOrders } from '@sluice/operators/testing';

import { canonical, reference, TestCluster } from './cluster';
import type { LinearDefinition } from './cluster';

const DAY = 86_400_000;

describe('two processor groups sharing a prefix and a source', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = new TestCluster(6);
    await cluster.setup();
  });

  afterAll(async () => {
    await cluster.teardown();
  });

  it('each runs only its own pipelines, and each output equals its reference', async () => {
    const bars = `${cluster.prefix}.bars`;
    const demo = dailyRevenueDefinition({
      id: '00000000-0000-4000-8000-0000000000b1',
      output: cluster.output('demo_daily_revenue'),
    }) as LinearDefinition;
    const barsRevenue = {
      ...(dailyRevenueDefinition({
        id: '00000000-0000-4000-8000-0000000000b2',
        output: cluster.output('bars_daily_revenue'),
      }) as LinearDefinition),
      processor_group: bars,
    };
    await cluster.putPipeline(demo); // the cluster's own group
    await cluster.putPipeline(barsRevenue);
    const start = Date.UTC(2026, 10, 1);
    const orders = generateOrders({ count: 8000, start, stepMs: (3 * DAY) / 8000, seed: 23 });
    await cluster.produce(orders);
    await cluster.startReplica('demo-0');
    await cluster.startReplica('bars-0', { CONSUMER_GROUP: bars });
    const ticks = await cluster.tickEveryPartition(start + 5 * DAY);

    for (const definition of [demo, barsRevenue]) {
      const expected = reference(definition, [...orders, ...ticks]);
      expect(expected.results.length).toBeGreaterThanOrEqual(8 * 3);
      const results = await cluster.read(definition.output, expected.results.length, {
        settleMs: 3000,
      });
      expect(canonical(results)).toEqual(canonical(expected.results));
    }
  });
});
