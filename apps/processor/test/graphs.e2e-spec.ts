// docs/design.md §9 on the processor: a graph with two sources, a branch whose routes go to two
// sinks, and a window on each source, run by 1 and by 3 replicas (one SIGKILLed mid-stream),
// equals the reference run of the graph sink by sink, read read_committed.
import type { EventEnvelope, GraphDefinitionInput } from '@sluice/contracts';
import type { SourcedEvent } from '@sluice/operators';
import { generateOrders } from '@sluice/operators/testing';
import { sleep, until } from '@sluice/testing';

import { canonical, graphReference, TestCluster } from './cluster';
import type { Replica } from './cluster';

const DAY = 86_400_000;
const REFUND_PARTITIONS = 3;

describe('a graph of two sources, a branch to two sinks and two windows', () => {
  let cluster: TestCluster;
  let refunds: string;

  beforeEach(async () => {
    cluster = new TestCluster(6);
    await cluster.setup();
    refunds = cluster.output('refunds');
    await cluster.createTopic(refunds, REFUND_PARTITIONS);
  });

  afterEach(async () => {
    await cluster.teardown();
  });

  function graph(id: string): GraphDefinitionInput & { id: string } {
    return {
      id,
      name: 'revenue-by-route',
      sources: [
        { id: 'orders', topic: cluster.source, event_types: ['order.placed'] },
        { id: 'refunds', topic: refunds, event_types: ['order.refunded'] },
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
        {
          id: 'refunded',
          type: 'window',
          input: 'refunds',
          config: { window_type: 'tumbling', size_seconds: 86400 },
          aggregation: { type: 'reduce', field: 'total', function: 'count', group_by: 'currency' },
        },
      ],
      sinks: [
        { id: 'out', input: 'daily', topic: cluster.output('daily_gbp') },
        { id: 'us', input: 'router.usd', topic: cluster.output('us_orders') },
        { id: 'refunds_out', input: 'refunded', topic: cluster.output('refunds_daily') },
      ],
    };
  }

  /**
   * Streams five days of orders and refunds in chunks, `during` each chunk, then closes every
   * window with a tick on each partition of both topics; each sink must equal the reference.
   */
  async function streamAndCompare(
    definition: GraphDefinitionInput & { id: string },
    during: (chunk: number) => Promise<void>,
  ): Promise<void> {
    const start = Date.UTC(2026, 10, 1);
    const orders = generateOrders({ count: 30_000, start, stepMs: (5 * DAY) / 30_000, seed: 3 });
    const refunded = generateOrders({
      count: 6_000,
      start,
      stepMs: (5 * DAY) / 6_000,
      seed: 4,
    }).map((event): EventEnvelope => ({ ...event, event_type: 'order.refunded' }));
    const chunks = 10;
    for (let chunk = 0; chunk < chunks; chunk++) {
      const part = <T>(all: T[]) =>
        all.slice((chunk * all.length) / chunks, ((chunk + 1) * all.length) / chunks);
      await cluster.produce(part(orders));
      await cluster.produce(part(refunded), { topic: refunds });
      await during(chunk);
      await sleep(300);
    }
    const end = start + 7 * DAY;
    const orderTicks = await cluster.tickEveryPartition(end);
    const refundTicks = await cluster.tickEveryPartition(end, {
      topic: refunds,
      partitions: REFUND_PARTITIONS,
    });
    const sourced = (source: string, events: EventEnvelope[]): SourcedEvent[] =>
      events.map((event) => ({ source, event }));
    const expected = graphReference(definition, [
      ...sourced('orders', [...orders, ...orderTicks]),
      ...sourced('refunds', [...refunded, ...refundTicks]),
    ]);
    for (const sink of definition.sinks) {
      const { results, late } = expected.sinks[sink.id]!;
      expect(late).toHaveLength(0);
      expect(results.length).toBeGreaterThan(4);
      const published = await cluster.read(sink.topic, results.length, {
        timeoutMs: 120_000,
        settleMs: 2000,
      });
      expect({ sink: sink.id, results: canonical(published) }).toEqual({
        sink: sink.id,
        results: canonical(results),
      });
    }
  }

  it('with 1 replica equals the reference run of the graph, sink by sink', async () => {
    const definition = graph('00000000-0000-4000-8000-0000000000d1');
    await cluster.putPipeline(definition);
    await cluster.startReplica('r0');
    await streamAndCompare(definition, async () => undefined);
  });

  it('with 3 replicas, one SIGKILLed mid-stream, equals the reference run', async () => {
    const definition = graph('00000000-0000-4000-8000-0000000000d2');
    await cluster.putPipeline(definition);
    await cluster.startReplica('r0');
    await cluster.startReplica('r1');
    let victim: Replica | undefined;
    await streamAndCompare(definition, async (chunk) => {
      if (chunk === 2) victim = await cluster.startReplica('victim');
      if (chunk === 5) {
        // Killed once it has work in hand, not before it joined.
        await until(
          async () =>
            /records_consumed_total\{kind="(source|repartition)"\} [1-9]/.test(
              await victim!.metrics(),
            ),
          { what: 'the victim consuming' },
        );
        victim!.kill();
        expect(await victim!.exited).toBeNull();
      }
    });
  });
});
