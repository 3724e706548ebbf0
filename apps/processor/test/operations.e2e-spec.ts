// What an operator sees: enrich against a live lookup table, stats on the stats topic, metrics
// and health on METRICS_PORT, and a clean stop on SIGTERM that hands over without duplicates.
import { lookupTablesFrom, runReference } from '@sluice/operators';
import { orderEvent } from '@sluice/operators/testing';
import { validateDefinition } from '@sluice/contracts';
import type { EventEnvelope, PipelineDefinitionInput, ProcessorStats } from '@sluice/contracts';
import { until } from '@sluice/testing';

import { canonical, TestCluster } from './cluster';

type Definition = PipelineDefinitionInput & { id: string; output: string };

describe('operating the processor', () => {
  let cluster: TestCluster;

  beforeEach(async () => {
    cluster = new TestCluster(3);
    await cluster.setup();
  });

  afterEach(async () => {
    await cluster.teardown();
  });

  it('enriches from a lookup table loaded before processing and kept current', async () => {
    const customers = cluster.output('customers');
    await cluster.createTopic(customers, 2, true);
    const producer = cluster.kafka.producer();
    await producer.connect();
    await producer.send({
      topic: customers,
      messages: [
        { key: 'c-1', value: JSON.stringify({ tier: 'gold', country: 'uk' }) },
        { key: 'c-2', value: JSON.stringify({ tier: 'silver', country: 'fr' }) },
      ],
    });
    const enriched: Definition = {
      id: '00000000-0000-4000-8000-0000000000d1',
      name: 'orders with tier',
      source_event_types: ['order.placed'],
      operators: [
        { type: 'enrich', source: customers, key: '$.entity_id', fields: ['tier'] },
        { type: 'filter', field: 'tier', op: 'eq', value: 'gold' },
      ],
      output: cluster.output('gold'),
    };
    await cluster.putPipeline(enriched);
    const replica = await cluster.startReplica('r0');
    await replica.waitForLog({ msg: 'lookup table loaded', table: customers, rows: 2 });

    const first = ['c-1', 'c-2', 'c-3'].map((entity, i) =>
      orderEvent(Date.UTC(2026, 10, 2, i), { entity, id: `first-${i}` }),
    );
    await cluster.produce(first);
    const definition = validateDefinition(enriched);
    if (!definition.valid) throw new Error('invalid test definition');
    const tables = { [customers]: { 'c-1': { tier: 'gold' }, 'c-2': { tier: 'silver' } } };
    const expectedFirst = runReference(definition.definition, first, {
      lookups: lookupTablesFrom(tables),
    });
    expect(expectedFirst.results).toHaveLength(1);
    expect(canonical(await cluster.read(enriched.output, 1))).toEqual(
      canonical(expectedFirst.results),
    );

    // c-2 is promoted; events after that see it.
    await producer.send({
      topic: customers,
      messages: [{ key: 'c-2', value: JSON.stringify({ tier: 'gold' }) }],
    });
    await producer.disconnect();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const second = [orderEvent(Date.UTC(2026, 10, 2, 5), { entity: 'c-2', id: 'second-0' })];
    await cluster.produce(second);
    const out = await cluster.read(enriched.output, 2);
    const byId = new Map(out.map((r) => [(r.value as EventEnvelope).id, r.value as EventEnvelope]));
    expect([...byId.keys()].sort()).toEqual(['first-0', 'second-0']);
    expect(byId.get('second-0')!.payload['tier']).toBe('gold');
  });

  it('reports stats and metrics, and stops cleanly on SIGTERM without duplicating results', async () => {
    const passThrough: Definition = {
      id: '00000000-0000-4000-8000-0000000000d2',
      name: 'paid orders',
      source_event_types: ['order.placed'],
      operators: [{ type: 'filter', field: 'status', op: 'eq', value: 'paid' }],
      output: cluster.output('paid'),
    };
    await cluster.putPipeline(passThrough);
    const first = await cluster.startReplica('first');
    const events = Array.from({ length: 3000 }, (_, i) =>
      orderEvent(Date.UTC(2026, 10, 3) + i * 1000, {
        id: `e-${i}`,
        entity: `o-${i % 50}`,
        status: i % 3 === 0 ? 'pending' : 'paid',
      }),
    );
    await cluster.produce(events.slice(0, 1500));
    await cluster.read(passThrough.output, 1000);

    // Stats on the stats topic, and the same numbers in Prometheus format.
    const statsKey = `${first.id}/${passThrough.id}`;
    let stats: ProcessorStats | undefined;
    await until(
      async () => {
        const records = await cluster.read(cluster.topics.stats, 1, { settleMs: 0 });
        stats = records.filter((r) => r.key === statsKey).pop()?.value as ProcessorStats;
        return stats?.events_processed === 1500;
      },
      { what: 'stats for 1,500 events' },
    );
    expect(stats).toMatchObject({ events_filtered: 500, results_emitted: 1000, lag: 0 });
    const metrics = await first.metrics();
    expect(metrics).toContain(`sluice_pipeline_events_in_total{pipeline="${passThrough.id}"} 1500`);
    expect(metrics).toContain('sluice_processor_transaction_commit_seconds_bucket');
    expect(await first.ready()).toBe(true);

    // SIGTERM mid-stream: the batch in hand is committed, the group is left, exit code 0.
    const rest = cluster.produce(events.slice(1500));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await first.stop()).toBe(0);
    await rest;
    expect(first.logs().some((entry) => entry['msg'] === 'processor stopped')).toBe(true);
    await cluster.startReplica('second');
    const expected = events.filter((e) => e.payload['status'] === 'paid');
    const out = await cluster.read(passThrough.output, expected.length, { settleMs: 3000 });
    expect(out.map((r) => (r.value as EventEnvelope).id).sort()).toEqual(
      expected.map((e) => e.id).sort(),
    );
  });
});
