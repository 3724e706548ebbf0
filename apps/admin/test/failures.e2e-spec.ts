// How the admin behaves when its dependencies fail: PostgreSQL away, Kafka away, a crash between
// the PostgreSQL commit and the publish, and concurrent edits.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

import { createKafka, readTopicToEnd } from '@sluice/kafka';
import { internalTopics } from '@sluice/contracts';
import type { StoredPipeline } from '@sluice/contracts';
import { logLevel } from 'kafkajs';

import { OwnBroker } from '@sluice/kafka/testing';
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
import { TcpProxy } from './support/tcp-proxy';

describe('when PostgreSQL goes away', () => {
  it('answers 503 with a clear error, stays up, and serves again when it returns', async () => {
    const database = await freshDatabase();
    const url = new URL(database.url);
    const proxy = new TcpProxy(url.hostname, Number(url.port || 5432));
    await proxy.start();
    url.host = `127.0.0.1:${proxy.port}`;
    const admin = await startAdmin({
      DATABASE_URL: url.toString(),
      SLUICE_TOPIC_PREFIX: topicPrefix(),
    });
    const api = client(admin.url);
    try {
      expect((await api('POST', '/api/v1/pipelines', dailyRevenue())).status).toBe(201);
      await proxy.stop();
      for (const [method, path, body] of [
        ['GET', '/api/v1/pipelines', undefined],
        ['POST', '/api/v1/pipelines', dailyRevenue()],
      ] as const) {
        const response = await api(method, path, body);
        expect(response.status).toBe(503);
        expect(response.body).toEqual({
          error: 'database_unavailable',
          message: 'PostgreSQL is not reachable; try again shortly',
          details: [],
        });
      }
      expect((await api('GET', '/health/live')).status).toBe(200);
      const ready = await api('GET', '/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({
        status: 'unavailable',
        checks: { postgres: { ok: false }, kafka: { ok: true } },
      });

      await proxy.start();
      await eventually(
        async () => expect((await api('GET', '/api/v1/pipelines')).status).toBe(200),
        20_000,
      );
      expect((await api('POST', '/api/v1/pipelines', dailyRevenue())).status).toBe(201);
      expect((await api<{ total: number }>('GET', '/api/v1/pipelines')).body.total).toBe(2);
    } finally {
      await admin.close();
      await proxy.stop();
      await database.drop();
    }
  });
});

describe('when Kafka goes away', () => {
  const broker = new OwnBroker(19392);

  beforeAll(() => broker.up());
  afterAll(() => broker.destroy());

  it('keeps committing to PostgreSQL with 2xx answers, then drains the outbox in order', async () => {
    const database = await freshDatabase();
    const prefix = topicPrefix();
    const admin = await startAdmin({
      DATABASE_URL: database.url,
      SLUICE_TOPIC_PREFIX: prefix,
      KAFKA_BROKERS: broker.address,
    });
    const api = client(admin.url);
    try {
      const first = (await api('POST', '/api/v1/pipelines', dailyRevenue())).body[
        'pipeline_id'
      ] as string;
      await eventually(async () =>
        expect((await pipelinesTopic(prefix, [broker.address])).get(first)).toMatchObject({
          version: 1,
        }),
      );

      broker.down();
      const second = await api('POST', '/api/v1/pipelines', dailyRevenue());
      expect(second.status).toBe(201);
      const secondId = second.body['pipeline_id'] as string;
      for (let version = 1; version <= 3; version++) {
        expect(
          (
            await api(
              'PUT',
              `/api/v1/pipelines/${first}`,
              dailyRevenue({ name: `edit-${version}` }),
            )
          ).status,
        ).toBe(200);
      }
      expect((await api('PUT', `/api/v1/pipelines/${secondId}/reset`)).status).toBe(200);
      expect((await api('DELETE', `/api/v1/pipelines/${secondId}`)).status).toBe(200);
      expect((await api<{ total: number }>('GET', '/api/v1/pipelines')).body.total).toBe(1);

      broker.up();
      const kafka = createKafka({
        clientId: 'e2e',
        brokers: [broker.address],
        logLevel: logLevel.NOTHING,
      });
      await eventually(async () => {
        const records: Array<{ key: string; value: StoredPipeline | null }> = [];
        await readTopicToEnd(
          kafka,
          internalTopics(prefix).pipelines,
          ({ key, value }) => {
            records.push({
              key: key!,
              value: value === null ? null : (JSON.parse(value) as StoredPipeline),
            });
          },
          { groupOwner: 'e2e-reader' },
        );
        const history = (id: string) =>
          records
            .filter((r) => r.key === id)
            .map((r) =>
              r.value === null ? 'tombstone' : `v${r.value.version}g${r.value.reset_generation}`,
            );
        // Every change arrives, in the order it was committed: nothing lost, nothing reordered.
        expect(history(first)).toEqual(['v1g0', 'v2g0', 'v3g0', 'v4g0']);
        expect(history(secondId)).toEqual(['v1g0', 'v1g1', 'tombstone']);
      }, 60_000);
    } finally {
      await admin.close();
      await database.drop();
    }
  });
});

describe('a crash between the PostgreSQL commit and the publish', () => {
  it('still brings the definition to the topic after a restart', async () => {
    const database = await freshDatabase();
    const prefix = topicPrefix();
    // A real admin process that can reach PostgreSQL but no broker, killed with SIGKILL.
    const child = spawn(process.execPath, [resolve(__dirname, '../dist/main.js')], {
      env: {
        ...process.env,
        SLUICE_ADMIN_TOKEN: TOKEN,
        ADMIN_PORT: '39177',
        DATABASE_URL: database.url,
        KAFKA_BROKERS: '127.0.0.1:1',
        SLUICE_TOPIC_PREFIX: prefix,
        LOG_LEVEL: 'error',
      },
      stdio: 'ignore',
    });
    try {
      const api = client('http://127.0.0.1:39177');
      const created = await eventually(
        () =>
          api('POST', '/api/v1/pipelines', dailyRevenue()).then((r) =>
            r.status === 201 ? r : Promise.reject(new Error(`status ${r.status}`)),
          ),
        20_000,
      );
      const id = created.body['pipeline_id'] as string;
      child.kill('SIGKILL');
      await new Promise((done) => child.once('exit', done));

      const admin = await startAdmin({ DATABASE_URL: database.url, SLUICE_TOPIC_PREFIX: prefix });
      try {
        await eventually(async () =>
          expect((await pipelinesTopic(prefix)).get(id)).toMatchObject({
            id,
            version: 1,
            name: 'daily-revenue',
          }),
        );
      } finally {
        await admin.close();
      }
    } finally {
      child.kill('SIGKILL');
      await database.drop();
    }
  });
});

describe('concurrent replacements', () => {
  it('let exactly one If-Match writer win, answer 412 to the rest, and keep versions gapless', async () => {
    const database = await freshDatabase();
    const admin = await startAdmin({
      DATABASE_URL: database.url,
      SLUICE_TOPIC_PREFIX: topicPrefix(),
    });
    const api = client(admin.url);
    try {
      const id = (await api('POST', '/api/v1/pipelines', dailyRevenue())).body[
        'pipeline_id'
      ] as string;
      const racers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          api('PUT', `/api/v1/pipelines/${id}`, dailyRevenue({ name: `racer-${i}` }), {
            'if-match': '1',
          }),
        ),
      );
      expect(racers.map((r) => r.status).sort()).toEqual([200, 412, 412, 412, 412, 412, 412, 412]);

      const unconditional = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          api('PUT', `/api/v1/pipelines/${id}`, dailyRevenue({ name: `free-${i}` })),
        ),
      );
      expect(unconditional.every((r) => r.status === 200)).toBe(true);
      expect(
        unconditional.map((r) => r.body['version']).sort((a, b) => Number(a) - Number(b)),
      ).toEqual([3, 4, 5, 6, 7, 8, 9, 10]);

      const versions = await api<{ versions: Array<{ version: number }> }>(
        'GET',
        `/api/v1/pipelines/${id}/versions`,
      );
      expect(versions.body.versions.map((v) => v.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    } finally {
      await admin.close();
      await database.drop();
    }
  });
});
