// Definitions as AllSource writes them and as Kafka will take them (issue 14), against the
// running admin: real HTTP, a fresh PostgreSQL database, the real broker.
import { randomUUID } from 'node:crypto';

import { createKafka, ensureTopics } from '@sluice/kafka';
import { logLevel } from 'kafkajs';
import { stringify } from 'yaml';

import {
  client,
  dailyRevenue,
  eventually,
  freshDatabase,
  pipelinesTopic,
  startAdmin,
  topicPrefix,
} from './support/admin-harness';
import type { RunningAdmin } from './support/admin-harness';

/** AllSource Core's own PipelineConfig for daily revenue: every Option sent, as null. */
function allSourceConfig(output: string) {
  return {
    name: 'daily-revenue',
    description: null,
    source_event_types: ['order.placed'],
    operators: [
      { type: 'filter', field: 'status', op: 'eq', value: 'paid' },
      {
        type: 'window',
        config: {
          window_type: 'sliding',
          size_seconds: 86400,
          slide_seconds: null,
          session_timeout_seconds: null,
        },
        aggregation: { type: 'reduce', field: 'total', function: 'sum', group_by: null },
      },
    ],
    enabled: true,
    output,
  };
}

describe('definitions', () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let admin: RunningAdmin;
  let api: ReturnType<typeof client>;
  const prefix = topicPrefix();

  beforeAll(async () => {
    database = await freshDatabase();
    admin = await startAdmin({
      DATABASE_URL: database.url,
      SLUICE_TOPIC_PREFIX: prefix,
      SOURCE_TOPICS: `${prefix}-orders,${prefix}-refunds`,
    });
    api = client(admin.url);
  });

  afterAll(async () => {
    await admin?.close();
    await database?.drop();
  });

  it("accepts AllSource's nulls, and says which defaults applied", async () => {
    const config = allSourceConfig(`revenue_${randomUUID().slice(0, 8)}`);
    const validated = await api('POST', '/api/v1/pipelines/validate', config);
    expect(validated.body).toEqual({
      valid: true,
      errors: [],
      warnings: [
        {
          path: 'operators[1].config.slide_seconds',
          message: "is null: the window slides by its size_seconds (86400 s), AllSource's default",
        },
      ],
    });
    const created = await api('POST', '/api/v1/pipelines', config);
    expect(created.status).toBe(201);
    expect(created.body['warnings']).toEqual(validated.body['warnings']);
    const session = allSourceConfig(`sessions_${randomUUID().slice(0, 8)}`);
    (session.operators[1]!.config as Record<string, unknown>)['window_type'] = 'session';
    expect((await api('POST', '/api/v1/pipelines/validate', session)).body).toMatchObject({
      valid: true,
      warnings: [
        {
          path: 'operators[1].config.session_timeout_seconds',
          message: "is null: the session gap is AllSource's default, 300 s",
        },
      ],
    });
  });

  it('gives a definition back as written, key order included, and takes it back unchanged', async () => {
    // Keys in an order of their own (jsonb would sort them by length, then bytes).
    const written = {
      output: `ordered_${randomUUID().slice(0, 8)}`,
      operators: [
        { value: 'paid', op: 'eq', field: 'status', type: 'filter' },
        {
          aggregation: { group_by: 'currency', function: 'sum', field: 'total', type: 'reduce' },
          config: { size_seconds: 86400, window_type: 'tumbling' },
          type: 'window',
        },
      ],
      source_event_types: ['order.placed'],
      name: 'as written',
    };
    const created = await api('POST', '/api/v1/pipelines', written);
    const id = created.body['pipeline_id'] as string;
    const read = await api('GET', `/api/v1/pipelines/${id}`);
    const keys = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(keys)
        : value !== null && typeof value === 'object'
          ? Object.entries(value).map(([key, inner]) => [key, keys(inner)])
          : null;
    const body = read.body as Record<string, unknown>;
    expect(keys(body['operators'])).toEqual(keys(written.operators));
    expect(Object.keys(body).slice(0, 4)).toEqual(Object.keys(written));
    // On the topic too: what processors and `sluice get` see.
    await eventually(async () => {
      const record = (await pipelinesTopic(prefix)).get(id);
      expect(keys(record && 'operators' in record ? record.operators : undefined)).toEqual(
        keys(written.operators),
      );
    });

    // The GET body, sent back unchanged (JSON, and YAML as `sluice get -o yaml` prints it).
    const again = await api('PUT', `/api/v1/pipelines/${id}`, body);
    expect(again.status).toBe(200);
    expect(again.body['version']).toBe(2);
    const reread = (await api('GET', `/api/v1/pipelines/${id}`)).body;
    const yaml = await api('PUT', `/api/v1/pipelines/${id}`, stringify(reread));
    expect(yaml.status).toBe(200);

    // A stale version is a lost update; another read-only field that differs is named.
    const stale = await api('PUT', `/api/v1/pipelines/${id}`, body);
    expect(stale.status).toBe(412);
    expect(stale.body['details']).toEqual([
      { path: 'version', message: 'must be 3 (the stored version) or absent' },
    ]);
    const current = (await api('GET', `/api/v1/pipelines/${id}`)).body;
    const moved = await api('PUT', `/api/v1/pipelines/${id}`, {
      ...current,
      created_at: '2020-01-01T00:00:00.000Z',
      reset_generation: 7,
    });
    expect(moved.status).toBe(400);
    expect(moved.body['details']).toEqual([
      { path: 'reset_generation', message: 'is read-only: must be 0 (the stored value) or absent' },
      {
        path: 'created_at',
        message: `is read-only: must be "${String(current['created_at'])}" (the stored value) or absent`,
      },
    ]);
  });

  it('reports every problem at once, in document order, with topic names checked as Kafka will', async () => {
    const answer = await api('POST', '/api/v1/pipelines', {
      name: 'many problems',
      operators: [
        {
          type: 'window',
          config: { window_type: 'sliding', size_seconds: 60, slide_seconds: 120, sise: 1 },
          aggregation: { type: 'reduce', function: 'avg' },
        },
        { type: 'enrich', source: 'customer table', fields: ['tier'] },
      ],
      output: `${prefix}-orders`,
    });
    expect(answer.status).toBe(400);
    expect(answer.body['details']).toEqual([
      { path: 'operators[0].type', message: expect.stringContaining('must be the last operator') },
      {
        path: 'operators[0].config.slide_seconds',
        message: 'must not exceed size_seconds: records would fall between windows',
      },
      { path: 'operators[0].config.sise', message: 'is not a known field' },
      { path: 'operators[0].aggregation.field', message: 'is required for avg' },
      {
        path: 'operators[1].source',
        message: 'must be a Kafka topic name: letters, digits, `.`, `_` and `-` only',
      },
      {
        path: 'output',
        message: expect.stringContaining('is a source topic of the processors'),
      },
    ]);
    for (const output of [
      `${prefix}.dlq`,
      `${prefix}.${randomUUID()}.changelog`,
      'x'.repeat(246),
    ]) {
      const refused = await api('POST', '/api/v1/pipelines', dailyRevenue({ output }));
      expect(refused.status).toBe(400);
      expect(refused.body['details']).toEqual([{ path: 'output', message: expect.any(String) }]);
    }
  });

  it('passes over an outbox record Kafka refuses for good, and says so in /health/ready', async () => {
    // Kafka refuses a topic whose name collides with an existing one ('.' against '_').
    const kafka = createKafka({ clientId: 'e2e', logLevel: logLevel.NOTHING });
    const kafkaAdmin = kafka.admin();
    await kafkaAdmin.connect();
    const base = `collide_${randomUUID().slice(0, 8)}`;
    await ensureTopics(kafkaAdmin, [{ topic: `${base}_out`, numPartitions: 1 }]);
    await kafkaAdmin.disconnect();

    const refused = await api('POST', '/api/v1/pipelines', dailyRevenue({ output: `${base}.out` }));
    expect(refused.status).toBe(201);
    const refusedId = refused.body['pipeline_id'] as string;
    const after = await api('POST', '/api/v1/pipelines', dailyRevenue());
    const afterId = after.body['pipeline_id'] as string;
    await eventually(async () => {
      const topic = await pipelinesTopic(prefix);
      expect(topic.get(afterId)).toMatchObject({ version: 1 });
      expect(topic.has(refusedId)).toBe(false);
    });
    const ready = await api('GET', '/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body['outbox']).toEqual({
      refused: [
        {
          id: expect.any(String),
          pipeline_id: refusedId,
          error: expect.stringContaining('INVALID_TOPIC_EXCEPTION'),
          refused_at: expect.any(String),
        },
      ],
    });
    const metrics = await (await fetch(`${admin.url}/metrics`)).text();
    expect(metrics).toMatch(/^sluice_admin_outbox_refused 1$/m);

    // Mended through the API: the newer record is sent, and the refusal is no longer listed.
    const mended = await api(
      'PUT',
      `/api/v1/pipelines/${refusedId}`,
      dailyRevenue({ output: `${base}.mended` }),
    );
    expect(mended.status).toBe(200);
    await eventually(async () =>
      expect((await pipelinesTopic(prefix)).get(refusedId)).toMatchObject({ version: 2 }),
    );
    expect((await api('GET', '/health/ready')).body['outbox']).toEqual({ refused: [] });
  });

  it('keeps a pipeline on its processor group: an update naming another is a 400 at the path', async () => {
    const created = await api(
      'POST',
      '/api/v1/pipelines',
      dailyRevenue({ processor_group: 'bars' }),
    );
    expect(created.status).toBe(201);
    const id = created.body['pipeline_id'] as string;
    const same = await api(
      'PUT',
      `/api/v1/pipelines/${id}`,
      dailyRevenue({ processor_group: 'bars', name: 'v2' }),
    );
    expect(same.status).toBe(200);
    for (const moved of [dailyRevenue({ processor_group: 'demo' }), dailyRevenue()]) {
      const refused = await api('PUT', `/api/v1/pipelines/${id}`, moved);
      expect(refused.status).toBe(400);
      expect(refused.body['details']).toEqual([
        {
          path: 'processor_group',
          message: expect.stringContaining('must stay bars'),
        },
      ]);
    }
    expect((await api('GET', `/api/v1/pipelines/${id}`)).body).toMatchObject({
      version: 2,
      processor_group: 'bars',
    });
  });

  it('validates, previews and stores a graph definition', async () => {
    const graph = {
      version: 1,
      name: 'revenue-by-route',
      sources: [
        { id: 'orders', topic: `${prefix}-orders`, event_types: ['order.placed'] },
        { id: 'refunds', topic: `${prefix}-refunds`, event_types: ['order.refunded'] },
      ],
      transforms: [
        {
          id: 'router',
          type: 'branch',
          input: 'orders',
          field: 'region',
          branches: { uk: 'gbp', us: 'usd' },
        },
        {
          id: 'daily',
          type: 'window',
          input: 'router.gbp',
          config: { window_type: 'tumbling', size_seconds: 86400 },
          aggregation: { type: 'reduce', field: 'total', function: 'sum' },
        },
      ],
      sinks: [
        { id: 'out', input: 'daily', topic: `${prefix}-daily-gbp` },
        { id: 'us', input: 'router.usd', topic: `${prefix}-us` },
        { id: 'refunds_out', input: 'refunds', topic: `${prefix}-refunds-copy` },
      ],
    };
    const validated = await api('POST', '/api/v1/pipelines/validate', graph);
    expect(validated.status).toBe(200);
    expect(validated.body).toMatchObject({ valid: true, errors: [] });
    expect(validated.body['warnings']).toEqual([]);

    const broken = {
      ...graph,
      sinks: [...graph.sinks, { id: 'loop', input: 'daily', topic: `${prefix}-orders` }],
    };
    const invalid = await api('POST', '/api/v1/pipelines/validate', broken);
    expect(invalid.body['errors']).toEqual([
      {
        path: 'sinks[3].input',
        message: expect.stringContaining('reads daily, which sinks[0] reads already'),
      },
      { path: 'sinks[3].topic', message: expect.stringContaining('feedback loop') },
    ]);

    const order = (day: string, region: string, total: number) => ({
      id: randomUUID(),
      event_type: 'order.placed',
      entity_id: 'c1',
      timestamp: `2026-11-${day}T10:00:00Z`,
      payload: { region, total },
    });
    const preview = await api('POST', '/api/v1/pipelines/preview', {
      pipeline: graph,
      events: [
        { source: 'orders', event: order('28', 'uk', 10) },
        { source: 'orders', event: order('28', 'us', 3) },
        { source: 'orders', event: order('28', 'uk', 5) },
        { source: 'refunds', event: { ...order('28', 'uk', 2), event_type: 'order.refunded' } },
      ],
    });
    expect(preview.status).toBe(200);
    const sinks = preview.body['sinks'] as Record<
      string,
      { topic: string; results: Array<Record<string, unknown>> }
    >;
    expect(sinks['out']!.results.map((r) => [r['value'], r['route']])).toEqual([[15, 'gbp']]);
    expect(
      sinks['us']!.results.map((r) => (r['payload'] as Record<string, unknown>)['total']),
    ).toEqual([3]);
    expect(sinks['refunds_out']).toMatchObject({ topic: `${prefix}-refunds-copy` });
    expect(sinks['refunds_out']!.results).toHaveLength(1);

    const untagged = await api('POST', '/api/v1/pipelines/preview', {
      pipeline: graph,
      events: [order('28', 'uk', 1)],
    });
    expect(untagged.status).toBe(400);
    expect(JSON.stringify(untagged.body)).toContain('events[0]');

    // Stored as written, broadcast to the processors, its sink topics made.
    const created = await api('POST', '/api/v1/pipelines', graph);
    expect(created.status).toBe(201);
    const id = created.body['pipeline_id'] as string;
    const read = await api('GET', `/api/v1/pipelines/${id}`);
    expect(read.body).toMatchObject({
      id,
      sources: graph.sources,
      transforms: graph.transforms,
      sinks: graph.sinks,
      version: 1,
    });
    expect((await api('POST', '/api/v1/pipelines', { ...graph, id })).status).toBe(200);
    await eventually(async () => {
      expect((await pipelinesTopic(prefix)).get(id)).toMatchObject({ sinks: graph.sinks });
    });
    const kafkaAdmin = createKafka({ clientId: 'e2e-graph', logLevel: logLevel.NOTHING }).admin();
    await kafkaAdmin.connect();
    try {
      expect(await kafkaAdmin.listTopics()).toEqual(
        expect.arrayContaining(graph.sinks.flatMap((sink) => [sink.topic, `${sink.topic}.late`])),
      );
    } finally {
      await kafkaAdmin.disconnect();
    }
  });

  it('previews a join of two streams, and names the path of a join it refuses', async () => {
    const graph = {
      name: 'orders-paid',
      sources: [
        { id: 'orders', topic: `${prefix}-orders`, event_types: ['order.placed'] },
        { id: 'payments', topic: `${prefix}-payments` },
      ],
      transforms: [
        {
          id: 'paid',
          type: 'join',
          inputs: ['orders', 'payments'],
          on: { left: '$.entity_id', right: 'order_id' },
          within_seconds: 3600,
          kind: 'left',
          select: { total: 'left.total', amount: 'right.amount' },
        },
      ],
      sinks: [{ id: 'out', input: 'paid', topic: `${prefix}-orders-paid` }],
    };
    const event = (type: string, minute: number, entity: string, payload: object) => ({
      event_type: type,
      entity_id: entity,
      timestamp: Date.UTC(2026, 10, 28, 10, minute),
      payload,
    });
    const preview = await api('POST', '/api/v1/pipelines/preview', {
      pipeline: graph,
      events: [
        { source: 'orders', event: event('order.placed', 0, 'o1', { total: 10 }) },
        { source: 'orders', event: event('order.placed', 1, 'o2', { total: 20 }) },
        { source: 'payments', event: event('payment', 30, 'p1', { order_id: 'o1', amount: 10 }) },
      ],
    });
    expect(preview.status).toBe(200);
    const sinks = preview.body['sinks'] as Record<
      string,
      { results: Array<Record<string, unknown>> }
    >;
    expect(sinks['out']!.results.map((r) => [r['key'], r['total'], r['amount']])).toEqual([
      ['o1', 10, 10],
      ['o2', 20, null],
    ]);

    const refused = await api('POST', '/api/v1/pipelines', {
      ...graph,
      transforms: [{ ...graph.transforms[0], inputs: ['orders', 'refunds'] }],
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('transforms[0].inputs[1]');
  });
});
