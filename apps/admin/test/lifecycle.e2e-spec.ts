// The admin API end to end: real HTTP, a fresh PostgreSQL database, the real broker.
import { randomUUID } from 'node:crypto';

import { createKafka } from '@sluice/kafka';
import { logLevel } from 'kafkajs';

import {
  client,
  dailyRevenue,
  eventually,
  freshDatabase,
  pipelinesTopic,
  startAdmin,
  topicPrefix,
  TOKEN,
} from './support/admin-harness';
import type { RunningAdmin } from './support/admin-harness';

describe('admin API lifecycle', () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let admin: RunningAdmin;
  let api: ReturnType<typeof client>;
  const prefix = topicPrefix();

  beforeAll(async () => {
    database = await freshDatabase();
    admin = await startAdmin({ DATABASE_URL: database.url, SLUICE_TOPIC_PREFIX: prefix });
    api = client(admin.url);
  });

  afterAll(async () => {
    await admin?.close();
    await database?.drop();
  });

  it('creates, reads, lists, replaces, versions and deletes a pipeline, mirrored on the compacted topic', async () => {
    const definition = dailyRevenue();
    const created = await api('POST', '/api/v1/pipelines', definition);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      pipeline_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'daily-revenue',
      enabled: true,
      version: 1,
      epoch: expect.stringMatching(/^0\.[\w-]{12}$/),
      warnings: [],
    });
    const id = created.body['pipeline_id'] as string;

    const read = await api('GET', `/api/v1/pipelines/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      ...definition,
      id,
      version: 1,
      reset_generation: 0,
      description: null,
    });
    expect(read.body['created_at']).toEqual(read.body['updated_at']);
    expect(read.headers.get('etag')).toBe('"1"');

    const list = await api('GET', '/api/v1/pipelines');
    expect(list.body).toEqual({ pipelines: [read.body], total: 1 });

    const replaced = await api(
      'PUT',
      `/api/v1/pipelines/${id}`,
      { ...definition, name: 'daily-revenue-v2' },
      { 'x-sluice-actor': 'alice' },
    );
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({
      pipeline_id: id,
      name: 'daily-revenue-v2',
      enabled: true,
      version: 2,
      // A new name: the processors keep the state, in the same epoch.
      epoch: created.body['epoch'],
      state: 'kept',
      warnings: [],
    });

    await eventually(async () => {
      const topic = await pipelinesTopic(prefix);
      expect(topic.get(id)).toMatchObject({
        id,
        name: 'daily-revenue-v2',
        version: 2,
        reset_generation: 0,
      });
    });
    // Creating the pipeline created its output topic and the late-events topic beside it.
    const kafkaAdmin = createKafka({ clientId: 'e2e-topics', logLevel: logLevel.NOTHING }).admin();
    await kafkaAdmin.connect();
    try {
      const topics = await kafkaAdmin.listTopics();
      expect(topics).toEqual(
        expect.arrayContaining([
          definition.output,
          `${definition.output}.late`,
          `${prefix}.pipelines`,
          `${prefix}.stats`,
          `${prefix}.dlq`,
        ]),
      );
      const config = await kafkaAdmin.describeConfigs({
        resources: [{ type: 2, name: `${prefix}.pipelines`, configNames: ['cleanup.policy'] }],
        includeSynonyms: false,
      });
      expect(config.resources[0]!.configEntries[0]!.configValue).toBe('compact');
    } finally {
      await kafkaAdmin.disconnect();
    }

    const reset = await api('PUT', `/api/v1/pipelines/${id}/reset`);
    expect(reset.body).toEqual({ pipeline_id: id, reset: true });
    expect((await api('GET', `/api/v1/pipelines/${id}`)).body).toMatchObject({
      version: 2,
      reset_generation: 1,
    });

    const removed = await api('DELETE', `/api/v1/pipelines/${id}`);
    expect(removed.body).toEqual({ pipeline_id: id, removed: true });
    expect((await api('GET', `/api/v1/pipelines/${id}`)).status).toBe(404);
    expect((await api('DELETE', `/api/v1/pipelines/${id}`)).status).toBe(404);
    expect((await api('GET', '/api/v1/pipelines')).body).toEqual({ pipelines: [], total: 0 });

    const versions = await api<{ versions: Array<Record<string, unknown>> }>(
      'GET',
      `/api/v1/pipelines/${id}/versions`,
    );
    // The actor is the token's name; what the client says of itself is only a note.
    expect(
      versions.body.versions.map((v) => [v['version'], v['change'], v['changed_by'], v['note']]),
    ).toEqual([
      [1, 'created', 'admin', null],
      [2, 'updated', 'admin', 'alice'],
      [3, 'deleted', 'admin', null],
    ]);

    await eventually(async () => expect((await pipelinesTopic(prefix)).get(id)).toBeNull());

    // The id can be created again; its history goes on without a gap.
    const again = await api('POST', '/api/v1/pipelines', { ...definition, id });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ pipeline_id: id, version: 4 });
    const history = await api<{ versions: Array<{ change: string }> }>(
      'GET',
      `/api/v1/pipelines/${id}/versions`,
    );
    expect(history.body.versions.map((v) => v.change)).toEqual([
      'created',
      'updated',
      'deleted',
      'created',
    ]);
    await eventually(async () =>
      expect((await pipelinesTopic(prefix)).get(id)).toMatchObject({
        version: 4,
        reset_generation: 1,
      }),
    );
    await api('DELETE', `/api/v1/pipelines/${id}`);
  });

  it('creates idempotently: the same id and content is a 200, different content a 409', async () => {
    const definition = { ...dailyRevenue(), id: randomUUID() };
    expect((await api('POST', '/api/v1/pipelines', definition)).status).toBe(201);
    const again = await api('POST', '/api/v1/pipelines', definition);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ pipeline_id: definition.id, version: 1 });
    const different = await api('POST', '/api/v1/pipelines', { ...definition, enabled: false });
    expect(different.status).toBe(409);
    expect(different.body).toEqual({
      error: 'conflict',
      message: expect.stringContaining('use PUT'.slice(0, 0) + 'PUT /api/v1/pipelines/'),
      details: [],
    });
  });

  it('accepts YAML bodies with the same shape', async () => {
    const output = `yaml_out_${randomUUID().slice(0, 6)}`;
    const yaml = `name: from-yaml\nsource_event_types: [click]\noperators:\n  - { type: map, field: page, transform: lowercase }\noutput: ${output}\n`;
    const created = await api('POST', '/api/v1/pipelines', yaml, {
      'content-type': 'application/yaml',
    });
    expect(created.status).toBe(201);
    const read = await api('GET', `/api/v1/pipelines/${created.body['pipeline_id']}`);
    expect(read.body).toMatchObject({
      name: 'from-yaml',
      output,
      operators: [{ type: 'map', field: 'page', transform: 'lowercase' }],
    });
    const bad = await api('POST', '/api/v1/pipelines', 'name: [unclosed', {
      'content-type': 'text/yaml',
    });
    expect(bad.status).toBe(400);
    expect(bad.body['error']).toBe('invalid_body');
  });

  it('rejects invalid definitions with a 400 naming each JSON path, and stores nothing', async () => {
    const before = (await api('GET', '/api/v1/pipelines')).body['total'];
    const response = await api('POST', '/api/v1/pipelines', {
      name: 'bad',
      output: 'o',
      operators: [
        { type: 'filter', field: 'a', op: 'eq', value: 1 },
        {
          type: 'window',
          config: { window_type: 'tumbling', size_seconds: -5 },
          aggregation: { type: 'reduce', function: 'sum' },
        },
      ],
      extra: 1,
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: 'validation_failed',
      message: expect.stringContaining('invalid pipeline definition'),
      details: expect.arrayContaining([
        { path: 'operators[1].config.size_seconds', message: 'must be greater than 0' },
        { path: 'extra', message: 'is not a known field' },
      ]),
    });
    expect((await api('GET', '/api/v1/pipelines')).body['total']).toBe(before);
  });

  it('replays a pipeline from a time in a new epoch, and says when an update drops state', async () => {
    const definition = dailyRevenue({ name: 'replayed' });
    const created = await api('POST', '/api/v1/pipelines', definition);
    const id = created.body['pipeline_id'] as string;
    const epochs = [created.body['epoch']];

    const changed = await api('PUT', `/api/v1/pipelines/${id}`, {
      ...definition,
      operators: definition.operators.slice(1),
    });
    expect(changed.body).toMatchObject({ version: 2, state: 'reset' });
    epochs.push(changed.body['epoch']);

    const replayed = await api('POST', `/api/v1/pipelines/${id}/replay`, {
      from: '2026-11-01T00:00:00Z',
    });
    expect(replayed.status).toBe(200);
    expect(replayed.body).toMatchObject({
      pipeline_id: id,
      version: 3,
      replay: { from: '2026-11-01T00:00:00Z', generation: 1 },
    });
    epochs.push(replayed.body['epoch']);
    const read = await api('GET', `/api/v1/pipelines/${id}`);
    expect(read.body).toMatchObject({ replay_generation: 1, replay_from: '2026-11-01T00:00:00Z' });
    // The GET body goes back unchanged; an update may replay too (?replay_from=).
    const again = await api('PUT', `/api/v1/pipelines/${id}?replay_from=earliest`, read.body);
    expect(again.body).toMatchObject({ version: 4, state: 'reset' });
    epochs.push(again.body['epoch']);
    expect(new Set(epochs).size).toBe(4);
    await eventually(async () => {
      expect((await pipelinesTopic(prefix)).get(id)).toMatchObject({
        version: 4,
        replay_generation: 2,
        replay_from: 'earliest',
      });
    });
    const versions = await api('GET', `/api/v1/pipelines/${id}/versions`);
    expect((versions.body['versions'] as Array<{ change: string }>).map((v) => v.change)).toEqual([
      'created',
      'updated',
      'replayed',
      'updated',
    ]);

    // Bad input: a 400 naming the field, nothing changed.
    for (const [body, path] of [
      [{ from: 'yesterday' }, 'from'],
      [{}, 'from'],
      [{ from: 'earliest', to: 'now' }, 'to'],
    ] as const) {
      const refused = await api('POST', `/api/v1/pipelines/${id}/replay`, body);
      expect(refused.status).toBe(400);
      expect(refused.body['details']).toEqual([{ path, message: expect.any(String) }]);
    }
    const badQuery = await api('PUT', `/api/v1/pipelines/${id}?replay_from=soon`, definition);
    expect(badQuery.status).toBe(400);
    expect(badQuery.body['details']).toEqual([
      { path: 'replay_from', message: expect.stringContaining('earliest or an ISO-8601 time') },
    ]);
    expect((await api('GET', `/api/v1/pipelines/${id}`)).body['version']).toBe(4);
  });

  it('validates without storing', async () => {
    expect((await api('POST', '/api/v1/pipelines/validate', dailyRevenue())).body).toEqual({
      valid: true,
      errors: [],
      warnings: [],
    });
    const invalid = await api('POST', '/api/v1/pipelines/validate', {
      name: 'x',
      operators: [{ type: 'nope' }],
      output: 'o',
    });
    expect(invalid.status).toBe(200);
    expect(invalid.body).toEqual({
      valid: false,
      errors: [{ path: 'operators[0].type', message: expect.stringContaining('must be one of') }],
      warnings: [],
    });
  });

  it('previews the daily-revenue example with the reference run', async () => {
    const order = (timestamp: string, total: number, currency: string, status = 'paid') => ({
      event_type: 'order.placed',
      entity_id: 'o',
      timestamp,
      payload: { status, total, currency },
    });
    const response = await api('POST', '/api/v1/pipelines/preview', {
      pipeline: dailyRevenue(),
      events: [
        order('2026-11-28T09:00:00Z', 12.5, 'gbp'),
        order('2026-11-28T10:00:00Z', 99, 'gbp', 'refunded'),
        order('2026-11-28T11:00:00Z', 7.5, 'gbp'),
        order('2026-11-29T11:00:00Z', 3, 'usd'),
        { event_type: 'order.placed' },
      ],
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      results: [
        {
          group: 'gbp',
          function: 'sum',
          value: 20,
          count: 2,
          window: { start: '2026-11-28T00:00:00.000Z', end: '2026-11-29T00:00:00.000Z' },
          final: true,
        },
        { group: 'usd', value: 3, count: 1, final: true },
      ],
      late: [],
      dead_letters: [
        {
          pipeline_id: null,
          reason: 'payload is missing or not a JSON object',
          event: { event_type: 'order.placed' },
        },
      ],
      stats: { processed: 4, filtered: 1, emitted: 2 },
    });
    const bad = await api('POST', '/api/v1/pipelines/preview', {
      pipeline: { name: 'x' },
      events: 'no',
    });
    expect(bad.status).toBe(400);
    expect(bad.body['details']).toEqual(
      expect.arrayContaining([
        { path: 'events', message: 'must be an array of events' },
        { path: 'pipeline.output', message: 'is required' },
      ]),
    );
  });

  it('answers 404 for unknown and malformed ids, 412 for a stale If-Match, 413 past 1 MiB', async () => {
    expect((await api('GET', `/api/v1/pipelines/${randomUUID()}`)).body).toEqual({
      error: 'not_found',
      message: expect.any(String),
      details: [],
    });
    expect((await api('GET', '/api/v1/pipelines/not-a-uuid')).status).toBe(404);
    expect((await api('PUT', `/api/v1/pipelines/${randomUUID()}`, dailyRevenue())).status).toBe(
      404,
    );
    expect((await api('GET', `/api/v1/pipelines/${randomUUID()}/versions`)).status).toBe(404);

    const id = (await api('POST', '/api/v1/pipelines', dailyRevenue())).body[
      'pipeline_id'
    ] as string;
    expect(
      (await api('PUT', `/api/v1/pipelines/${id}`, dailyRevenue(), { 'if-match': '1' })).status,
    ).toBe(200);
    const stale = await api('PUT', `/api/v1/pipelines/${id}`, dailyRevenue(), {
      'if-match': '"1"',
    });
    expect(stale.status).toBe(412);
    expect(stale.body['error']).toBe('precondition_failed');
    expect(
      (await api('PUT', `/api/v1/pipelines/${id}`, { ...dailyRevenue(), id: randomUUID() })).status,
    ).toBe(400);

    const huge = { ...dailyRevenue(), description: 'x'.repeat(1024 * 1024 + 1) };
    const tooLarge = await api('POST', '/api/v1/pipelines', huge);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toEqual({
      error: 'payload_too_large',
      message: 'the request body is larger than 1 MiB',
      details: [],
    });
  });

  it('requires the bearer token on every /api route: missing, wrong and old tokens get a JSON 401', async () => {
    const routes: Array<[string, string]> = [
      ['GET', '/api/v1/pipelines'],
      ['POST', '/api/v1/pipelines'],
      ['GET', `/api/v1/pipelines/${randomUUID()}`],
      ['PUT', `/api/v1/pipelines/${randomUUID()}`],
      ['DELETE', `/api/v1/pipelines/${randomUUID()}`],
      ['PUT', `/api/v1/pipelines/${randomUUID()}/reset`],
      ['GET', '/api/v1/pipelines/stats'],
      ['GET', `/api/v1/pipelines/${randomUUID()}/stats`],
      ['GET', `/api/v1/pipelines/${randomUUID()}/versions`],
      ['POST', '/api/v1/pipelines/validate'],
      ['POST', '/api/v1/pipelines/preview'],
    ];
    for (const token of [null, 'wrong-token-0000000000', `${TOKEN}x`, TOKEN.slice(0, -1)]) {
      for (const [method, path] of routes) {
        const response = await client(admin.url, token)(
          method,
          path,
          method === 'GET' || method === 'DELETE' ? undefined : dailyRevenue(),
        );
        expect([method, path, response.status]).toEqual([method, path, 401]);
        expect(response.body).toEqual({
          error: 'unauthorized',
          message: expect.any(String),
          details: [],
        });
      }
    }
    const raw = await fetch(`${admin.url}/api/v1/pipelines`, {
      headers: { authorization: `Basic ${TOKEN}` },
    });
    expect(raw.status).toBe(401);
  });

  it('serves health, metrics and the OpenAPI document without a token', async () => {
    const open = client(admin.url, null);
    expect((await open('GET', '/health/live')).body).toEqual({ status: 'ok' });
    expect((await open('GET', '/health/ready')).body).toEqual({
      status: 'ok',
      checks: { postgres: { ok: true }, kafka: { ok: true } },
      outbox: { refused: [] },
    });
    const metrics = await (await fetch(`${admin.url}/metrics`)).text();
    expect(metrics).toContain(
      'sluice_admin_http_requests_total{method="POST",route="/api/v1/pipelines",status="201"}',
    );
    const docs = await open<{
      paths: Record<string, unknown>;
      components: { schemas: Record<string, unknown> };
    }>('GET', '/docs/json');
    expect(Object.keys(docs.body.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/pipelines',
        '/api/v1/pipelines/{id}',
        '/api/v1/pipelines/preview',
      ]),
    );
    // Either form: AllSource's linear definition, or a graph.
    expect(docs.body.components.schemas['PipelineDefinition']).toMatchObject({
      oneOf: [
        { type: 'object', required: ['name', 'operators', 'output'] },
        { type: 'object', required: ['name', 'sources', 'sinks'] },
      ],
    });
    expect(Object.keys(docs.body.paths)).toContain('/api/v1/pipelines/{id}/replay');
    type Operation = {
      requestBody: { content: Record<string, { examples: Record<string, { value: unknown }> }> };
    };
    const create = (docs.body.paths['/api/v1/pipelines'] as { post: Operation }).post;
    const example =
      create.requestBody.content['application/json']!.examples['daily revenue']!.value;
    // The documented example is itself a valid definition.
    expect((await api('POST', '/api/v1/pipelines/validate', example)).body).toEqual({
      valid: true,
      warnings: [],
      errors: [],
    });
  });

  it('reconciles the topic with the table after a restart', async () => {
    const kept = (await api('POST', '/api/v1/pipelines', dailyRevenue())).body[
      'pipeline_id'
    ] as string;
    const gone = (await api('POST', '/api/v1/pipelines', dailyRevenue())).body[
      'pipeline_id'
    ] as string;
    await api('DELETE', `/api/v1/pipelines/${gone}`);
    await admin.close();
    admin = await startAdmin({ DATABASE_URL: database.url, SLUICE_TOPIC_PREFIX: prefix });
    api = client(admin.url);
    const table = (
      await api<{ pipelines: Array<{ id: string; version: number }> }>('GET', '/api/v1/pipelines')
    ).body.pipelines;
    await eventually(async () => {
      const topic = await pipelinesTopic(prefix);
      for (const pipeline of table)
        expect(topic.get(pipeline.id)).toMatchObject({
          id: pipeline.id,
          version: pipeline.version,
        });
      const live = [...topic]
        .filter(([, value]) => value !== null)
        .map(([id]) => id)
        .sort();
      expect(live).toEqual(table.map((p) => p.id).sort());
      expect(topic.get(gone)).toBeNull();
      expect(topic.get(kept)).not.toBeNull();
    });
  });
});
