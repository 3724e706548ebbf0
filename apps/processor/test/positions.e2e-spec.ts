// docs/design.md §9, positions: each pipeline has its own position in each source partition. A
// pipeline created after a week of events backfills them from its sources' `start`; a replay
// reprocesses one pipeline alone, in a new epoch, while events flow and the others go on; a
// topic only one pipeline reads, gone quiet, holds back no other pipeline's windows.
import type { EventEnvelope, GraphDefinitionInput } from '@sluice/contracts';
import { dailyRevenueDefinition, generateOrders } from '@sluice/operators/testing';
import { sleep } from '@sluice/testing';

import { canonical, graphReference, reference, TestCluster } from './cluster';
import type { KeyedValue, LinearDefinition } from './cluster';

const DAY = 86_400_000;
const WEEK_START = Date.UTC(2026, 10, 1);

/** A daily revenue graph over one topic, starting where `start` says. */
function dailyGraph(
  id: string,
  topic: string,
  output: string,
  start?: string,
): GraphDefinitionInput & { id: string } {
  return {
    id,
    name: `daily revenue from ${start ?? 'latest'}`,
    sources: [{ id: 'orders', topic, event_types: ['order.placed'], ...(start ? { start } : {}) }],
    transforms: [
      { id: 'paid', type: 'filter', input: 'orders', field: 'status', op: 'eq', value: 'paid' },
      {
        id: 'daily',
        type: 'window',
        input: 'paid',
        config: { window_type: 'tumbling', size_seconds: 86400 },
        aggregation: { type: 'reduce', field: 'total', function: 'sum', group_by: 'currency' },
      },
    ],
    sinks: [{ id: 'out', input: 'daily', topic: output }],
  };
}

const byEpoch = (records: KeyedValue[], epoch: string | undefined) =>
  records.filter((record) => record.epoch === epoch);

describe('pipelines own their positions', () => {
  let cluster: TestCluster;

  beforeEach(async () => {
    cluster = new TestCluster(3);
    await cluster.setup();
  });

  afterEach(async () => {
    await cluster.teardown();
  });

  it('backfills a week of events that exist before it: from the earliest, or from a time', async () => {
    // Stamped with their event times, as a producer replaying history writes them.
    const week = generateOrders({ count: 9_000, start: WEEK_START, stepMs: (7 * DAY) / 9_000 });
    await cluster.produce(week, { eventTimeStamps: true });
    const ticks = await cluster.tickEveryPartition(WEEK_START + 9 * DAY);
    const replica = await cluster.startReplica('r0');

    const earliest = dailyGraph(
      '00000000-0000-4000-8000-0000000000e1',
      cluster.source,
      cluster.output('from_earliest'),
      'earliest',
    );
    const fromThursday = dailyGraph(
      '00000000-0000-4000-8000-0000000000e2',
      cluster.source,
      cluster.output('from_thursday'),
      new Date(WEEK_START + 3 * DAY).toISOString(),
    );
    const latest = dailyGraph(
      '00000000-0000-4000-8000-0000000000e3',
      cluster.source,
      cluster.output('from_now'),
    );
    for (const definition of [earliest, fromThursday, latest]) {
      await cluster.putPipeline(definition);
      await replica.waitForLog({ msg: 'pipeline created', pipeline_id: definition.id });
    }

    const all = graphReference(
      earliest,
      [...week, ...ticks].map((event) => ({ source: 'orders', event })),
    );
    const fromThen = graphReference(
      fromThursday,
      [
        ...week.filter((e) => Date.parse(String(e.timestamp)) >= WEEK_START + 3 * DAY),
        ...ticks,
      ].map((event) => ({ source: 'orders', event })),
    );
    const expectedAll = all.sinks['out']!.results;
    const expectedFromThen = fromThen.sinks['out']!.results;
    expect(expectedFromThen.length).toBeLessThan(expectedAll.length);
    expect(canonical(await cluster.read(earliest.sinks[0]!.topic, expectedAll.length))).toEqual(
      canonical(expectedAll),
    );
    expect(
      canonical(await cluster.read(fromThursday.sinks[0]!.topic, expectedFromThen.length)),
    ).toEqual(canonical(expectedFromThen));
    // `latest` is from its creation on: the week was written before.
    expect(await cluster.read(latest.sinks[0]!.topic, 0, { timeoutMs: 1, settleMs: 2000 })).toEqual(
      [],
    );
  });

  it('replays one pipeline from the earliest while events flow; the others are untouched', async () => {
    const revenue = dailyRevenueDefinition({
      id: '00000000-0000-4000-8000-0000000000e4',
      output: cluster.output('revenue'),
    }) as LinearDefinition;
    const paid: LinearDefinition = {
      id: '00000000-0000-4000-8000-0000000000e5',
      name: 'paid orders',
      source_event_types: ['order.placed'],
      operators: [{ type: 'filter', field: 'status', op: 'eq', value: 'paid' }],
      output: cluster.output('paid'),
    };
    await cluster.putPipeline(revenue);
    await cluster.putPipeline(paid);
    await cluster.startReplica('r0');
    await cluster.startReplica('r1');
    const orders = generateOrders({ count: 24_000, start: WEEK_START, stepMs: (5 * DAY) / 24_000 });
    const chunks = 8;
    for (let chunk = 0; chunk < chunks; chunk++) {
      await cluster.produce(
        orders.slice((chunk * orders.length) / chunks, ((chunk + 1) * orders.length) / chunks),
      );
      if (chunk === 4)
        await cluster.putPipeline(revenue, {
          version: 2,
          replay: { generation: 1, from: 'earliest' },
        });
      await sleep(300);
    }
    const ticks: EventEnvelope[] = await cluster.tickEveryPartition(WEEK_START + 7 * DAY);

    const expectedRevenue = reference(revenue, [...orders, ...ticks]).results;
    const expectedPaid = reference(paid, [...orders, ...ticks]).results;
    // The other pipeline: every result once, none missing.
    const paidOut = await cluster.read(paid.output, expectedPaid.length, { timeoutMs: 120_000 });
    expect(canonical(paidOut)).toEqual(canonical(expectedPaid));
    expect(new Set(paidOut.map((r) => r.epoch)).size).toBe(1);
    // The replayed one: its new epoch holds the reference's results, each once.
    let revenueOut: KeyedValue[] = [];
    const epochs = () => [...new Set(revenueOut.map((r) => r.epoch))];
    for (let attempt = 0; attempt < 30; attempt++) {
      revenueOut = await cluster.read(revenue.output, expectedRevenue.length, { settleMs: 2000 });
      const replayed = epochs().find(
        (epoch) => byEpoch(revenueOut, epoch).length >= expectedRevenue.length,
      );
      if (replayed !== undefined) break;
    }
    expect(epochs()).toHaveLength(2);
    const [first, second] = epochs();
    const replayed = byEpoch(revenueOut, second).length >= expectedRevenue.length ? second : first;
    expect(canonical(byEpoch(revenueOut, replayed))).toEqual(canonical(expectedRevenue));
  });

  it("does not hold a pipeline's windows for a quiet topic that only another pipeline reads", async () => {
    const busy = cluster.output('busy');
    await cluster.createTopic(busy, 3);
    // The group's own source (read by the linear pipeline) stays silent throughout.
    const quiet = dailyRevenueDefinition({
      id: '00000000-0000-4000-8000-0000000000e6',
      output: cluster.output('quiet_revenue'),
    }) as LinearDefinition;
    const onBusy = dailyGraph(
      '00000000-0000-4000-8000-0000000000e7',
      busy,
      cluster.output('busy_revenue'),
    );
    await cluster.putPipeline(quiet);
    await cluster.putPipeline(onBusy);
    await cluster.startReplica('r0');
    const orders = generateOrders({ count: 6_000, start: WEEK_START, stepMs: (3 * DAY) / 6_000 });
    await cluster.produce(orders, { topic: busy });
    const ticks = await cluster.tickEveryPartition(WEEK_START + 5 * DAY, {
      topic: busy,
      partitions: 3,
    });
    const expected = graphReference(
      onBusy,
      [...orders, ...ticks].map((event) => ({ source: 'orders', event })),
    ).sinks['out']!.results;
    expect(
      canonical(await cluster.read(onBusy.sinks[0]!.topic, expected.length, { timeoutMs: 60_000 })),
    ).toEqual(canonical(expected));
  });
});
