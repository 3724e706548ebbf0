// docs/design.md §9 "Joins" on the processor (issue 17): an orders ⋈ payments interval join and
// an orders ⋈ customers table join, each on topics partitioned by another key than the join's,
// run by several replicas with one SIGKILLed mid-stream, equal the reference run of the graph,
// read read_committed. The table join runs at issue 17's scale outside CI with
// SLUICE_JOIN_CUSTOMERS=1000000 SLUICE_JOIN_REPLICAS=2 (two replicas beside the one killed).
import type { EventEnvelope, GraphDefinitionInput } from '@sluice/contracts';
import type { GraphReferenceResult, SourcedEvent } from '@sluice/operators';
import { generateOrders } from '@sluice/operators/testing';
import { sleep, until } from '@sluice/testing';

import { canonical, graphReference, TestCluster } from './cluster';
import type { Replica } from './cluster';

const MINUTE = 60_000;
const DAY = 86_400_000;
const START = Date.UTC(2026, 10, 1);
const SIDE_PARTITIONS = 3;
const CUSTOMERS = Number(process.env['SLUICE_JOIN_CUSTOMERS'] ?? 500);
/** Replicas of the table join beside the one SIGKILLed. */
const TABLE_REPLICAS = Number(process.env['SLUICE_JOIN_REPLICAS'] ?? 1);
/** A million rows take minutes to produce, join and restore on two shared cores. */
const SCALED = CUSTOMERS > 10_000;

type Definition = GraphDefinitionInput & { id: string };

/** A seeded stream of numbers in [0, 1). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

/**
 * Orders over two days, each naming its customer (one in forty a customer with no row);
 * keyed (partitioned) by entity, not by id.
 */
function orders(count: number): EventEnvelope[] {
  const next = random(11);
  return generateOrders({ count, start: START, stepMs: (2 * DAY) / count, seed: 5 }).map(
    (order) => ({
      ...order,
      payload: { ...order.payload, customer_id: `c${Math.floor(next() * CUSTOMERS * 1.025)}` },
    }),
  );
}

/** Payments for most orders, up to 90 minutes after them (some outside the hour), in time order. */
function payments(placed: EventEnvelope[]): EventEnvelope[] {
  const next = random(17);
  return placed
    .filter(() => next() < 0.7)
    .map((order, index) => ({
      event_type: 'payment.captured',
      entity_id: `payment-${index}`,
      timestamp: Date.parse(String(order.timestamp)) + Math.floor(next() * 90 * MINUTE),
      payload: { order_id: order.id, amount: order.payload['total'] },
    }))
    .sort((a, b) => a.timestamp - b.timestamp)
    .map((payment) => ({ ...payment, timestamp: new Date(payment.timestamp).toISOString() }));
}

/** Every customer's first row a day before the orders, then tier changes while they flow. */
function customerRows(updates: number): EventEnvelope[] {
  const next = random(23);
  const tiers = ['bronze', 'silver', 'gold'];
  const row = (customer: number, time: number): EventEnvelope => ({
    event_type: 'customer.updated',
    entity_id: `c${customer}`,
    timestamp: new Date(time).toISOString(),
    payload: { customer_id: `c${customer}`, tier: tiers[Math.floor(next() * tiers.length)] },
  });
  const first = Array.from({ length: CUSTOMERS }, (_, customer) => row(customer, START - DAY));
  const later = Array.from({ length: updates }, (_, i) =>
    row(Math.floor(next() * CUSTOMERS), START + Math.floor(((i + 1) * 2 * DAY) / (updates + 1))),
  );
  return [...first, ...later];
}

describe('joins on the processor', () => {
  let cluster: TestCluster;
  let side: string;

  beforeEach(async () => {
    cluster = new TestCluster(6);
    await cluster.setup();
    side = cluster.output('side');
    await cluster.createTopic(side, SIDE_PARTITIONS);
  });

  afterEach(async () => {
    await cluster.teardown();
  });

  /**
   * Streams orders and the side topic's events in chunks (each in time order within its
   * partitions), `during` each chunk, then moves event time past everything on every partition
   * of both topics; the sink must equal the reference run.
   */
  async function streamAndCompare(
    definition: Definition,
    placed: EventEnvelope[],
    sideEvents: EventEnvelope[],
    during: (chunk: number) => Promise<void>,
  ): Promise<GraphReferenceResult> {
    const chunks = 8;
    for (let chunk = 0; chunk < chunks; chunk++) {
      const part = <T>(all: T[]) =>
        all.slice((chunk * all.length) / chunks, ((chunk + 1) * all.length) / chunks);
      await cluster.produce(part(sideEvents), { topic: side });
      await cluster.produce(part(placed));
      await during(chunk);
      await sleep(200);
    }
    const end = START + 5 * DAY;
    const orderTicks = await cluster.tickEveryPartition(end);
    const sideTicks = await cluster.tickEveryPartition(end, {
      topic: side,
      partitions: SIDE_PARTITIONS,
    });
    const sourced = (source: string, events: EventEnvelope[]): SourcedEvent[] =>
      events.map((event) => ({ source, event }));
    const sideSource = definition.sources[1]!.id;
    const expected = graphReference(definition, [
      ...sourced(sideSource, [...sideEvents, ...sideTicks]),
      ...sourced('orders', [...placed, ...orderTicks]),
    ]);
    const { results, late } = expected.sinks['out']!;
    expect(late).toHaveLength(0);
    const published = await cluster.read(definition.sinks[0]!.topic, results.length, {
      timeoutMs: SCALED ? 900_000 : 120_000,
      settleMs: 2000,
    });
    expect(canonical(published)).toEqual(canonical(results));
    return expected;
  }

  /** Starts a replica at `startAt` and SIGKILLs it at `killAt`, once it has work in hand. */
  function victimDuring(startAt: number, killAt: number) {
    let victim: Replica | undefined;
    return async (chunk: number) => {
      if (chunk === startAt) victim = await cluster.startReplica('victim');
      if (chunk !== killAt) return;
      await until(
        async () =>
          /records_consumed_total\{kind="repartition"\} [1-9]/.test(await victim!.metrics()),
        { what: 'the victim consuming repartitioned records' },
      );
      victim!.kill();
      expect(await victim!.exited).toBeNull();
    };
  }

  it('an interval left join of orders and payments within an hour, 3 replicas, one SIGKILLed', async () => {
    const definition: Definition = {
      id: '00000000-0000-4000-8000-0000000000e1',
      name: 'orders-paid',
      sources: [
        { id: 'orders', topic: cluster.source, event_types: ['order.placed'] },
        { id: 'payments', topic: side, event_types: ['payment.captured'] },
      ],
      transforms: [
        {
          id: 'paid',
          type: 'join',
          inputs: ['orders', 'payments'],
          on: { left: '$.id', right: 'order_id' },
          within_seconds: 3600,
          kind: 'left',
          select: { total: 'left.total', amount: 'right.amount', region: 'left.region' },
        },
      ],
      sinks: [{ id: 'out', input: 'paid', topic: cluster.output('orders_paid') }],
    };
    await cluster.putPipeline(definition);
    await cluster.startReplica('r0');
    await cluster.startReplica('r1');
    const placed = orders(8_000);
    const expected = await streamAndCompare(
      definition,
      placed,
      payments(placed),
      victimDuring(2, 4),
    );
    // Pairs and unmatched orders both: the hour leaves some payments out.
    expect(expected.sinks['out']!.results.length).toBeGreaterThan(placed.length * 0.9);
    // Buffered records are not in the changelog: a partition that moved with some read them
    // again from the repartition topic (and the output above is still the reference's).
    const rereads = cluster.startedReplicas
      .flatMap((replica) => replica.logs())
      .filter((entry) => typeof entry['reread_from'] === 'string');
    expect(rereads.length).toBeGreaterThan(0);
  });

  it(
    `a temporal table join of orders and ${CUSTOMERS} customers, ${TABLE_REPLICAS + 1} replicas, one SIGKILLed; an order with no row is a dead letter`,
    async () => {
      const definition: Definition = {
        id: '00000000-0000-4000-8000-0000000000e2',
        name: 'orders-by-tier',
        sources: [
          { id: 'orders', topic: cluster.source, event_types: ['order.placed'] },
          {
            id: 'customers',
            topic: side,
            as: 'table',
            key: 'customer_id',
            event_types: ['customer.updated'],
          },
        ],
        transforms: [
          {
            id: 'tiered',
            type: 'join',
            inputs: ['orders', 'customers'],
            on: 'customer_id',
            on_missing: 'error',
            select: { total: 'left.total', tier: 'right.tier' },
          },
        ],
        sinks: [{ id: 'out', input: 'tiered', topic: cluster.output('orders_tiered') }],
      };
      await cluster.putPipeline(definition);
      for (let i = 0; i < TABLE_REPLICAS; i++) await cluster.startReplica(`r${i}`);
      const placed = orders(8_000);
      const expected = await streamAndCompare(
        definition,
        placed,
        customerRows(1_000),
        victimDuring(1, 3),
      );
      const refused = expected.dead_letters.length;
      expect(refused).toBeGreaterThan(50);
      expect(expected.sinks['out']!.results.length + refused).toBe(placed.length);
      const dlq = await cluster.readWithHeaders(cluster.topics.dlq, refused);
      expect(dlq).toHaveLength(refused);
      // The customers past CUSTOMERS have no row.
      const missingKey = (error: string) => Number(/no row with key "c(\d+)"/.exec(error)?.[1]);
      expect(
        dlq.every((record) => missingKey(record.headers['sluice-error'] ?? '') >= CUSTOMERS),
      ).toBe(true);
      // Each named by its own repartition record.
      const named = dlq.map(
        ({ headers }) => `${headers['sluice-source-partition']}/${headers['sluice-source-offset']}`,
      );
      expect(new Set(named).size).toBe(refused);
    },
    SCALED ? 1_800_000 : undefined,
  );
});
