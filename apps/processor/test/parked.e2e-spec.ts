// A definition the processor cannot apply parks that pipeline alone (issue 14): it is reported
// failed with the reason on the stats topic, retried, and every other pipeline, every later
// change, and a replica (re)started with it in the topic go on as if it were not there.
import type { PipelineDefinitionInput, ProcessorStats } from '@sluice/contracts';
import { dailyRevenueDefinition, generateOrders } from '@sluice/operators/testing';
import { until } from '@sluice/testing';

import { canonical, reference, TestCluster } from './cluster';

type Definition = PipelineDefinitionInput & { id: string; output: string };

const DAY = 86_400_000;

describe('a definition that cannot be applied', () => {
  let cluster: TestCluster;

  beforeEach(async () => {
    cluster = new TestCluster(3);
    await cluster.setup();
  });

  afterEach(async () => {
    await cluster.teardown();
  });

  async function reportOf(
    replicaId: string,
    pipelineId: string,
  ): Promise<ProcessorStats | undefined> {
    const records = await cluster.read(cluster.topics.stats, 1, { settleMs: 0, timeoutMs: 5000 });
    return records.filter((r) => r.key === `${replicaId}/${pipelineId}`).pop()?.value as
      ProcessorStats | undefined;
  }

  it('is parked with its reason while the others run, also across a restart', async () => {
    // Kafka refuses a topic whose name collides with an existing one ('.' and '_' are the same
    // in its metrics): no validation can see it, only the broker, when the table is made.
    await cluster.createTopic(cluster.output('lookup_table'), 1, true);
    const broken: Definition = {
      id: '00000000-0000-4000-8000-0000000000f1',
      name: 'enrich from a table Kafka will not create',
      operators: [{ type: 'enrich', source: cluster.output('lookup.table'), fields: ['tier'] }],
      output: cluster.output('never'),
    };
    // Valid anywhere but here: it writes to this processor group's own source topic.
    const loop: Definition = {
      id: '00000000-0000-4000-8000-0000000000f2',
      name: 'a feedback loop',
      operators: [],
      output: cluster.source,
    };
    await cluster.putPipeline(broken);
    await cluster.putPipeline(loop);
    const replica = await cluster.startReplica('r0');

    await until(async () => (await reportOf(replica.id, broken.id))?.state === 'failed', {
      what: 'the broken pipeline reported failed',
    });
    expect(await reportOf(replica.id, broken.id)).toMatchObject({
      state: 'failed',
      error: expect.stringContaining('INVALID_TOPIC_EXCEPTION'),
    });
    expect(await reportOf(replica.id, loop.id)).toMatchObject({
      state: 'failed',
      error: expect.stringContaining('a feedback loop'),
    });

    // A pipeline created afterwards still produces its results.
    const revenue = dailyRevenueDefinition({
      id: '00000000-0000-4000-8000-0000000000f3',
      output: cluster.output('daily_revenue'),
    }) as Definition;
    await cluster.putPipeline(revenue);
    await replica.waitForLog({ msg: 'pipeline created', pipeline_id: revenue.id });
    const start = Date.UTC(2026, 10, 1);
    const orders = generateOrders({ count: 3000, start, stepMs: (2 * DAY) / 3000, seed: 3 });
    await cluster.produce(orders);
    const ticks = await cluster.tickEveryPartition(start + 4 * DAY);
    const expected = reference(revenue, [...orders, ...ticks]).results;
    expect(canonical(await cluster.read(revenue.output, expected.length))).toEqual(
      canonical(expected),
    );
    // Retried with back-off, not given up.
    await until(async () => (await reportOf(replica.id, broken.id)) !== undefined, {
      what: 'a report',
    });
    await replica.waitForLog({
      msg: 'applying a definition failed; the pipeline is parked and retried',
      attempt: 2,
      pipeline_id: broken.id,
    });

    // A replica started with both in the topic starts, and runs the good one.
    expect(await replica.stop()).toBe(0);
    const again = await cluster.startReplica('r1');
    await until(async () => (await reportOf(again.id, broken.id))?.state === 'failed', {
      what: 'the broken pipeline reported failed by the new replica',
    });
    expect(await reportOf(again.id, revenue.id)).toMatchObject({ state: 'running', error: null });
    const later = generateOrders({ count: 500, start: start + 5 * DAY, stepMs: 60_000, seed: 4 });
    await cluster.produce(later);
    const moreTicks = await cluster.tickEveryPartition(start + 7 * DAY);
    const all = reference(revenue, [...orders, ...ticks, ...later, ...moreTicks]).results;
    expect(canonical(await cluster.read(revenue.output, all.length))).toEqual(canonical(all));
  });

  it('holds a pipeline whose output topic is deleted under it; the others go on; it catches up once the topic is back', async () => {
    const doomed: Definition = {
      id: '00000000-0000-4000-8000-0000000000f4',
      name: 'paid orders, to a topic about to be deleted',
      source_event_types: ['order.placed'],
      operators: [{ type: 'filter', field: 'status', op: 'eq', value: 'paid' }],
      output: cluster.output('doomed'),
    };
    const revenue = dailyRevenueDefinition({
      id: '00000000-0000-4000-8000-0000000000f5',
      output: cluster.output('revenue'),
    }) as Definition;
    await cluster.putPipeline(doomed);
    await cluster.putPipeline(revenue);
    const replica = await cluster.startReplica('r0');
    const start = Date.UTC(2026, 10, 1);
    const before = generateOrders({ count: 2000, start, stepMs: DAY / 2000, seed: 5 });
    await cluster.produce(before);
    const paidBefore = reference(doomed, before).results;
    expect(await cluster.read(doomed.output, paidBefore.length)).toHaveLength(paidBefore.length);

    const admin = cluster.kafka.admin();
    await admin.connect();
    try {
      await admin.deleteTopics({ topics: [doomed.output] });
      const after = generateOrders({
        count: 2000,
        start: start + DAY,
        stepMs: DAY / 2000,
        seed: 6,
      });
      await cluster.produce(after);
      const ticks = await cluster.tickEveryPartition(start + 4 * DAY);
      // The other pipeline on the same partitions: every result once, none missing.
      const expected = reference(revenue, [...before, ...after, ...ticks]).results;
      expect(canonical(await cluster.read(revenue.output, expected.length))).toEqual(
        canonical(expected),
      );
      await until(async () => (await reportOf(replica.id, doomed.id))?.state === 'failed', {
        what: 'the pipeline whose topic is gone reported failed',
      });
      expect(await reportOf(replica.id, doomed.id)).toMatchObject({
        error: expect.stringContaining(`${doomed.output}, which no longer exists`),
      });
      expect(await reportOf(replica.id, revenue.id)).toMatchObject({ state: 'running' });

      // Made again: it catches up from where its last commit left it, each result once.
      await until(
        async () =>
          admin
            .createTopics({
              topics: [{ topic: doomed.output, numPartitions: 3 }],
              waitForLeaders: true,
            })
            .then(() => true)
            .catch(() => false),
        { what: 'the topic made again (its deletion completes first)' },
      );
      const paidAfter = reference(doomed, after).results;
      const ids = (records: Array<{ value: unknown }>) =>
        records.map((r) => (r.value as { id: string }).id);
      let published: string[] = [];
      await until(
        async () => {
          published = ids(await cluster.read(doomed.output, paidAfter.length, { timeoutMs: 5000 }));
          return ids(paidAfter).every((id) => published.includes(id));
        },
        { what: "the held pipeline's results after the deletion", timeoutMs: 90_000 },
      );
      expect(new Set(published).size).toBe(published.length);
      await until(async () => (await reportOf(replica.id, doomed.id))?.state === 'running', {
        what: 'the pipeline reported running again',
      });
    } finally {
      await admin.disconnect();
    }
  });
});
