import { randomUUID } from 'node:crypto';

import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createKafka, readTopicToEnd } from '@sluice/kafka';
import { internalTopics } from '@sluice/contracts';
import type { StoredPipeline } from '@sluice/contracts';
import { logLevel } from 'kafkajs';
import pg from 'pg';

import { dailyRevenueDefinition } from '@sluice/operators/testing';

import { createAdminApp } from '../../src/admin-app';
import { loadAdminConfig } from '../../src/config/admin-config';
import type { AdminConfig } from '../../src/config/admin-config';
import { runMigrations } from '../../src/migrate';

export const TOKEN = `e2e-token-${randomUUID()}`;
const SERVER_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A database of its own for one test file: created, migrated, dropped at the end. */
export async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `sluice_e2e_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = new URL(SERVER_URL);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  await runMigrations(url.toString(), () => undefined);
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: admin.toString() });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export interface RunningAdmin {
  app: NestFastifyApplication;
  url: string;
  config: AdminConfig;
  close(): Promise<void>;
}

/** Starts the real admin app on a free port against the given database and topic prefix. */
export async function startAdmin(overrides: Record<string, string>): Promise<RunningAdmin> {
  const config = loadAdminConfig({
    SLUICE_ADMIN_TOKEN: TOKEN,
    ADMIN_PORT: '0',
    LOG_LEVEL: 'warn',
    ...overrides,
  });
  const app = await createAdminApp(config);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.getHttpServer().address() as { port: number };
  return { app, url: `http://127.0.0.1:${address.port}`, config, close: () => app.close() };
}

export function topicPrefix(): string {
  return `sluice-e2e-${randomUUID().slice(0, 8)}`;
}

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

export function client(baseUrl: string, token: string | null = TOKEN) {
  return async <T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse<T>> => {
    const init: RequestInit = { method, headers: { ...headers } };
    if (token !== null)
      (init.headers as Record<string, string>)['authorization'] = `Bearer ${token}`;
    if (body !== undefined) {
      const isText = typeof body === 'string';
      (init.headers as Record<string, string>)['content-type'] ??= isText
        ? 'application/yaml'
        : 'application/json';
      init.body = isText ? body : JSON.stringify(body);
    }
    const response = await fetch(`${baseUrl}${path}`, init);
    const text = await response.text();
    return {
      status: response.status,
      body: (text ? JSON.parse(text) : undefined) as T,
      headers: response.headers,
    };
  };
}

/** The latest value per key on the pipelines topic (null: a tombstone). */
export async function pipelinesTopic(
  prefix: string,
  brokers = ['127.0.0.1:9092'],
): Promise<Map<string, StoredPipeline | null>> {
  const kafka = createKafka({ clientId: 'e2e-reader', brokers, logLevel: logLevel.NOTHING });
  const latest = new Map<string, StoredPipeline | null>();
  await readTopicToEnd(
    kafka,
    internalTopics(prefix).pipelines,
    ({ key, value }) => {
      if (key !== null)
        latest.set(key, value === null ? null : (JSON.parse(value) as StoredPipeline));
    },
    { groupOwner: 'e2e-reader' },
  );
  return latest;
}

/** Polls until `check` stops throwing, or rethrows its last error after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T>,
  timeoutMs = 30_000,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}

/** The AllSource daily-revenue definition, without an id and with an output topic of its own. */
export function dailyRevenue(overrides: Record<string, unknown> = {}) {
  const { id: _id, description: _description, ...definition } = dailyRevenueDefinition();
  return { ...definition, output: `daily_revenue_${randomUUID().slice(0, 8)}`, ...overrides };
}
