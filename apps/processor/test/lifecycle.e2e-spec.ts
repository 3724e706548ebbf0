// Definitions change while events flow (docs/design.md §5 registry): create, update, reset, delete; bad
// records go to the dead-letter topic without stopping anything; idle keys and idle sources
// still get their windows closed.
import { dailyRevenueDefinition, orderEvent } from '@sluice/operators/testing';
import type { EventEnvelope, PipelineDefinitionInput } from '@sluice/contracts';
import { sleep } from '@sluice/testing';

import { canonical, reference, TestCluster } from './cluster';
import type { Replica } from './cluster';

type Definition = PipelineDefinitionInput & { id: string; output: string };

const day = (n: number, hour: number) => Date.UTC(2026, 10, n, hour);

function orders(days: number[], perHour: number, tag: string, currency?: string): EventEnvelope[] {
  const events: EventEnvelope[] = [];
  for (const d of days)
    for (let hour = 0; hour < 24; hour++)
      for (let i = 0; i < perHour; i++)
        events.push(
          orderEvent(new Date(day(d, hour) + i * 1000).toISOString(), {
            id: `${tag}-${d}-${hour}-${i}`,
            entity: `order-${tag}-${i}`,
            currency: currency ?? ['gbp', 'usd', 'eur'][(hour + i) % 3],
            total: 1 + ((hour * 7 + i) % 13),
            status: i % 4 === 3 ? 'pending' : 'paid',
          }),
        );
  return events;
}

describe('pipelines changing while events flow', () => {
  let cluster: TestCluster;
  let replica: Replica;

  beforeAll(async () => {
    cluster = new TestCluster(3);
    await cluster.setup();
    replica = await cluster.startReplica('r0');
  });

  afterAll(async () => {
    await cluster.teardown();
  });

  it('applies create, update, reset and delete live, and dead-letters bad records', async () => {
    const stateless: Definition = {
      id: '00000000-0000-4000-8000-0000000000c1',
      name: 'paid orders, currency upper-cased',
      source_event_types: ['order.placed'],
      operators: [
        { type: 'filter', field: 'status', op: 'eq', value: 'paid' },
        { type: 'map', field: 'currency', transform: 'uppercase' },
      ],
      output: cluster.output('paid'),
    };
    const revenue = dailyRevenueDefinition({
      id: '00000000-0000-4000-8000-0000000000c2',
      output: cluster.output('revenue'),
    }) as Definition;
    await cluster.putPipeline(stateless);
    await cluster.putPipeline(revenue);
    await replica.waitForLog({ msg: 'pipeline created', pipeline_id: revenue.id });
    await replica.waitForLog({ msg: 'processor running' }).catch(() => undefined);

    // Phase A: day 1, including a currency nobody uses afterwards (a key that goes idle).
    const phaseA = [...orders([1], 2, 'a'), ...orders([1], 1, 'idle', 'chf')];
    await cluster.produce(phaseA);
    const ticksA = await cluster.tickEveryPartition(day(2, 0));
    const referenceA = reference(revenue, [...phaseA, ...ticksA]);
    const firedA = await cluster.read(revenue.output, referenceA.results.length);
    expect(canonical(firedA)).toEqual(canonical(referenceA.results));
    expect(firedA.some((r) => (r.value as { group: string }).group === 'chf')).toBe(true);

    const statelessA = reference(stateless, phaseA);
    expect(canonical(await cluster.read(stateless.output, statelessA.results.length))).toEqual(
      canonical(statelessA.results),
    );

    // Update the stateless pipeline: lower-case instead.
    await cluster.putPipeline(
      {
        ...stateless,
        operators: [
          { type: 'filter', field: 'status', op: 'eq', value: 'paid' },
          { type: 'map', field: 'region', transform: 'uppercase' },
        ],
      },
      { version: 2 },
    );
    await replica.waitForLog({ msg: 'pipeline updated', pipeline_id: stateless.id, version: 2 });

    // Phase B: day 2, then a reset of the revenue pipeline: B's sums must vanish.
    const phaseB = orders([2], 1, 'b');
    await cluster.produce(phaseB);
    // B has gone through the source partitions (its repartitioned records carry the old epoch).
    const paidB = phaseB.filter((e) => e.payload['status'] === 'paid').length;
    await cluster.read(stateless.output, statelessA.results.length + paidB);
    await cluster.putPipeline(revenue, { version: 1, reset_generation: 1 });
    await replica.waitForLog({ msg: 'pipeline reset', pipeline_id: revenue.id });

    // Phase C: day 2 again and day 3, with malformed records in between.
    const malformed = [
      'not json',
      '[1,2,3]',
      JSON.stringify({ payload: {} }),
      JSON.stringify({ event_type: 'order.placed', payload: {}, timestamp: 'yesterday' }),
      '\u00ff\u00fe',
    ];
    const phaseC = orders([2, 3], 1, 'c');
    await cluster.produce([...phaseC.slice(0, 30), ...malformed, ...phaseC.slice(30)]);
    const ticksC = await cluster.tickEveryPartition(day(6, 0));
    const referenceC = reference(revenue, [...phaseC, ...ticksC]);
    const revenueOut = await cluster.read(
      revenue.output,
      referenceA.results.length + referenceC.results.length,
    );
    expect(canonical(revenueOut)).toEqual(
      canonical([...referenceA.results, ...referenceC.results]),
    );

    const dlq = await cluster.readWithHeaders(cluster.topics.dlq, malformed.length);
    expect(dlq.map((r) => r.value).sort()).toEqual(
      malformed.map((m) => Buffer.from(m).toString('utf8')).sort(),
    );
    for (const record of dlq) {
      expect(record.headers['sluice-error']).toEqual(expect.any(String));
      expect(record.headers['sluice-source-topic']).toBe(cluster.source);
      expect(Number(record.headers['sluice-source-offset'])).toBeGreaterThanOrEqual(0);
    }

    // The update took effect: B and C come out with the region upper-cased, currency as is.
    const paid = await cluster.read(stateless.output, 1);
    const fromC = paid.filter((r) => String((r.value as EventEnvelope).id).startsWith('c-'));
    expect(fromC.length).toBe(phaseC.filter((e) => e.payload['status'] === 'paid').length);
    expect(fromC.every((r) => (r.value as EventEnvelope).payload['region'] === 'UK')).toBe(true);
    expect(fromC.every((r) => (r.value as EventEnvelope).payload['currency'] !== 'GBP')).toBe(true);

    // A straggler for day 2, whose window fired when the day-6 ticks passed: late, not lost.
    const straggler = orderEvent(new Date(day(2, 12)).toISOString(), {
      id: 'straggler',
      entity: 'order-late',
      total: 99,
    });
    await cluster.produce([straggler]);
    const late = await cluster.read(`${revenue.output}.late`, 1);
    expect(late).toHaveLength(1);
    expect(late[0]!.value).toMatchObject({
      pipeline_id: revenue.id,
      group: 'gbp',
      event_time: '2026-11-02T12:00:00.000Z',
      event: { id: 'straggler', payload: { total: 99 } },
    });

    // Delete: nothing more comes out.
    await cluster.deletePipeline(stateless.id);
    await replica.waitForLog({ msg: 'pipeline deleted', pipeline_id: stateless.id });
    const before = (await cluster.read(stateless.output, paid.length)).length;
    await cluster.produce(orders([8], 1, 'd'));
    await cluster.tickEveryPartition(day(10, 0));
    expect(await cluster.read(revenue.output, revenueOut.length + 3)).toHaveLength(
      revenueOut.length + 3,
    );
    expect((await cluster.read(stateless.output, before)).length).toBe(before);
  });

  it('closes the windows of a source that went silent after idle_timeout_seconds', async () => {
    const sessions: Definition = {
      id: '00000000-0000-4000-8000-0000000000c3',
      name: 'sessions per customer',
      source_event_types: ['order.placed'],
      operators: [
        {
          type: 'window',
          config: { window_type: 'session', session_timeout_seconds: 600, idle_timeout_seconds: 2 },
          aggregation: { type: 'reduce', field: 'total', function: 'sum', group_by: '$.entity_id' },
        },
      ],
      output: cluster.output('sessions'),
    };
    await cluster.putPipeline(sessions);
    await replica.waitForLog({ msg: 'pipeline created', pipeline_id: sessions.id });
    const base = day(10, 12);
    const events = [0, 60, 120, 5000, 5060].map((seconds, i) =>
      orderEvent(base + seconds * 1000, { entity: `cust-${i % 2}`, total: i + 1, id: `s-${i}` }),
    );
    await cluster.produce(events);
    // No tick follows: only the idle timeout can close these sessions.
    const expected = reference(sessions, events);
    const results = await cluster.read(sessions.output, expected.results.length, {
      timeoutMs: 30_000,
    });
    expect(canonical(results)).toEqual(canonical(expected.results));
    expect(results.length).toBeGreaterThanOrEqual(3);
  });

  it('leaves a silent source partition out of the watermark after idle_timeout_seconds', async () => {
    const hourly: Definition = {
      id: '00000000-0000-4000-8000-0000000000c4',
      name: 'hourly count per currency',
      source_event_types: ['order.placed'],
      operators: [
        {
          type: 'window',
          config: { window_type: 'tumbling', size_seconds: 3600, idle_timeout_seconds: 2 },
          aggregation: { type: 'reduce', field: 'total', function: 'count', group_by: 'currency' },
        },
      ],
      output: cluster.output('hourly'),
    };
    await cluster.putPipeline(hourly);
    await replica.waitForLog({ msg: 'pipeline created', pipeline_id: hourly.id });
    // Partitions 0 and 1 keep flowing (so the stage is never idle as a whole); partition 2 says
    // nothing. The first hour's window can only close if partition 2 is left out as idle.
    const base = day(20, 0);
    let results: unknown[] = [];
    const deadline = Date.now() + 20_000;
    for (let i = 0; results.length === 0 && Date.now() < deadline; i++) {
      const time = base + i * 5 * 60_000; // five minutes of event time per step
      for (const partition of [0, 1])
        await cluster.produceTo(partition, [
          orderEvent(time, { id: `h-${partition}-${i}`, currency: 'gbp' }),
        ]);
      await new Promise((resolve) => setTimeout(resolve, 250));
      if (i % 8 === 7)
        results = await cluster.read(hourly.output, 1, { timeoutMs: 1, settleMs: 300 });
    }
    expect(results.length).toBeGreaterThan(0);
    expect(results[0]).toMatchObject({
      value: { group: 'gbp', window: { start: new Date(base).toISOString() }, final: true },
    });
  });

  it('gives every partition a fresh idle timeout when event time resumes after all went idle', async () => {
    const hourly: Definition = {
      id: '00000000-0000-4000-8000-0000000000c5',
      name: 'hourly count after a quiet spell',
      source_event_types: ['order.placed'],
      operators: [
        {
          type: 'window',
          config: { window_type: 'tumbling', size_seconds: 3600, idle_timeout_seconds: 3 },
          aggregation: { type: 'reduce', field: 'total', function: 'count', group_by: 'currency' },
        },
      ],
      output: cluster.output('quiet'),
    };
    await cluster.putPipeline(hourly);
    await replica.waitForLog({ msg: 'pipeline created', pipeline_id: hourly.id });
    // Every partition has been silent for longer than the timeout. A burst then reaches
    // partition 0 first with a later hour, and partition 1 a second later with the first hour:
    // left out as idle, partition 1 would let partition 0 fire the first hour without it.
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    const base = day(21, 0);
    await cluster.produceTo(0, [orderEvent(base + 2 * 3_600_000, { id: 'q-0', currency: 'eur' })]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await cluster.produceTo(1, [orderEvent(base + 60_000, { id: 'q-1', currency: 'eur' })]);
    // Nothing more arrives: the idle flush closes both windows, each with its own event.
    const results = (await cluster.read(hourly.output, 2, { timeoutMs: 20_000 })).sort((a, b) =>
      JSON.stringify(a.value) < JSON.stringify(b.value) ? -1 : 1,
    );
    expect(results.map((r) => r.value as { window: { start: string }; count: number })).toEqual([
      expect.objectContaining({
        window: expect.objectContaining({ start: new Date(base).toISOString() }),
        count: 1,
      }),
      expect.objectContaining({
        window: expect.objectContaining({ start: new Date(base + 2 * 3_600_000).toISOString() }),
        count: 1,
      }),
    ]);
    expect(await cluster.read(`${hourly.output}.late`, 0, { timeoutMs: 1, settleMs: 500 })).toEqual(
      [],
    );
  });
});

describe('a pipeline created while a replica is starting', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = new TestCluster(3);
    await cluster.setup();
  });

  afterAll(async () => {
    await cluster.teardown();
  });

  // kafkajs' group leader assigns only the topics it subscribed to: a replica whose consumer
  // started with the topics of before a definition arrived, and never rejoined, left that
  // pipeline's repartition topic unread by the whole group (a chaos run stalled on it).
  it('is consumed: the replica rejoins with its repartition topic', async () => {
    const pipeline = (n: number) =>
      dailyRevenueDefinition({
        id: `00000000-0000-4000-8000-0000000000d${n}`,
        output: cluster.output(`revenue-${n}`),
      }) as Definition;
    const first = pipeline(0);
    await cluster.putPipeline(first);
    const replica = await cluster.startReplica('r0', {}, false);
    // The first definition is applied before the consumer starts; the others arrive one after
    // another while it starts and joins the group, so that some land in between.
    await replica.waitForLog({ msg: 'pipeline created', pipeline_id: first.id });
    const later = [1, 2, 3, 4, 5].map(pipeline);
    for (const definition of later) {
      await cluster.putPipeline(definition);
      await sleep(150);
    }
    for (const definition of later)
      await replica.waitForLog({ msg: 'pipeline created', pipeline_id: definition.id });
    const events = orders([23, 24], 2, 's');
    await cluster.produce(events);
    const ticks = await cluster.tickEveryPartition(day(27, 0));
    for (const definition of [first, ...later]) {
      const expected = reference(definition, [...events, ...ticks]);
      expect(expected.results.length).toBeGreaterThan(0);
      const results = await cluster.read(definition.output, expected.results.length, {
        timeoutMs: 30_000,
      });
      expect(canonical(results)).toEqual(canonical(expected.results));
    }
  });
});
