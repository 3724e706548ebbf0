// KNOWN ISSUE, not in the CI suite (run it with `npm run test:known-issues`): the broker goes
// away mid-stream (a controlled shutdown) and comes back while two replicas process a stream.
// Fixed on the way: a task opened for a partition a rebalance had moved elsewhere stayed open
// (the double counts of earlier sessions), a replaced task did not go back to the start of a
// partition with nothing committed, a failed task's work waited for new records. What is left
// (about 1 run in 17): the single-node broker loses commit markers it had acknowledged just
// before its shutdown, and the hanging transaction is later made visible beside the work
// redone from before it, so a window is published twice (README, Known issues). It must pass
// reliably before it goes back into the suite.
import { OwnBroker } from '@sluice/kafka/testing';
import { dailyRevenueDefinition, generateOrders } from '@sluice/operators/testing';
import { sleep } from '@sluice/testing';

import { canonical, reference, TestCluster } from './cluster';

const DAY = 86_400_000;

describe('a broker restart mid-stream', () => {
  const broker = new OwnBroker(19_492);
  let cluster: TestCluster;

  beforeAll(async () => {
    broker.up();
    cluster = new TestCluster(6, broker.address);
    await cluster.setup();
  });

  afterAll(async () => {
    await cluster.teardown();
    // With SLUICE_TEST_LOGS set, the broker's logs stay for a post-mortem (kafka-dump-log).
    if (process.env['SLUICE_TEST_LOGS']) {
      broker.down();
      process.stderr.write(`broker data kept in ${broker.directory}\n`);
    } else {
      broker.destroy();
    }
  });

  it('loses and duplicates nothing', async () => {
    const definition = dailyRevenueDefinition({
      id: '00000000-0000-4000-8000-0000000000e1',
      output: cluster.output('daily_revenue'),
    }) as Parameters<TestCluster['putPipeline']>[0];
    await cluster.putPipeline(definition);
    const replicas = [await cluster.startReplica('r0'), await cluster.startReplica('r1')];
    const start = Date.UTC(2026, 10, 1);
    const orders = generateOrders({ count: 40_000, start, stepMs: (4 * DAY) / 40_000, seed: 11 });
    const chunks = 8;
    const size = orders.length / chunks;
    for (let chunk = 0; chunk < chunks; chunk++) {
      await cluster.produce(orders.slice(chunk * size, (chunk + 1) * size));
      if (chunk === 3) {
        broker.down();
        await sleep(2000);
        broker.up();
      }
      await sleep(300);
    }
    const ticks = await cluster.tickEveryPartition(start + 6 * DAY);
    const expected = reference(definition, [...orders, ...ticks]);
    expect(expected.late).toHaveLength(0);
    const results = await cluster.read(definition.output, expected.results.length, {
      timeoutMs: 150_000,
      settleMs: 3000,
    });
    const late = await cluster.read(`${definition.output}.late`, 0, { settleMs: 500 });
    expect(late.map((record) => record.value)).toEqual([]);
    expect(canonical(results)).toEqual(canonical(expected.results));
    for (const replica of replicas) expect(await replica.ready()).toBe(true);
  });
});
