// Sluice on a secured cluster (`SLUICE_KAFKA_SECURE=1 npm run kafka:up`'s broker): replicas and
// the test's own clients reach it over SASL_SSL with SCRAM-SHA-512 as its secure.env says, and
// the daily revenue comes out equal to the reference; a replica and an admin given a wrong
// password stop within 10 s with one line that says so, instead of retrying.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';

import { OwnBroker } from '@sluice/kafka/testing';
import { dailyRevenueDefinition, generateOrders } from '@sluice/operators/testing';

import { canonical, reference, Replica, TestCluster } from './cluster';

const DAY = 86_400_000;
const ROOT = resolve(__dirname, '../../..');
const ADMIN_MAIN = join(ROOT, 'apps/admin/dist/main.js');
const SERVER_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

describe('a secured cluster (SASL_SSL, SCRAM-SHA-512)', () => {
  const broker = new OwnBroker(19_640, { env: { SLUICE_KAFKA_SECURE: '1' } });
  const saved = { ...process.env };
  let secureEnv: Record<string, string>;
  let cluster: TestCluster;

  beforeAll(async () => {
    broker.up();
    secureEnv = broker.secureEnv();
    // The test's clients and every process it starts read the security settings from here.
    Object.assign(process.env, secureEnv);
    cluster = new TestCluster(6, secureEnv['KAFKA_BROKERS']);
    await cluster.setup();
  }, 120_000);

  afterAll(async () => {
    await cluster?.teardown();
    for (const key of Object.keys(secureEnv ?? {})) delete process.env[key];
    Object.assign(process.env, saved);
    broker.destroy();
  });

  it('runs the daily revenue over SASL_SSL, equal to the reference', async () => {
    const definition = dailyRevenueDefinition({
      id: '00000000-0000-4000-8000-0000000000c1',
      output: cluster.output('daily_revenue'),
    }) as Parameters<TestCluster['putPipeline']>[0];
    await cluster.putPipeline(definition);
    const start = Date.UTC(2026, 10, 1);
    const orders = generateOrders({ count: 6000, start, stepMs: (3 * DAY) / 6000, seed: 31 });
    await cluster.produce(orders);
    await cluster.startReplica('secure-0');
    const ticks = await cluster.tickEveryPartition(start + 5 * DAY);
    const expected = reference(definition, [...orders, ...ticks]);
    const results = await cluster.read(definition.output, expected.results.length);
    expect(canonical(results)).toEqual(canonical(expected.results));
  });

  it('stops a replica given a wrong password within 10 s, with a line naming the authentication', async () => {
    const started = Date.now();
    const replica = await Replica.start(
      'secure-wrong',
      { ...cluster.env(), KAFKA_SASL_PASSWORD_FILE: '', KAFKA_SASL_PASSWORD: 'not-the-password' },
      false,
    );
    const code = await replica.exited;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(code).not.toBe(0);
    expect(replica.output.join('\n')).toMatch(/authentication failed/i);
    expect(replica.output.join('\n')).not.toContain('not-the-password');
  });

  it('stops an admin given a wrong password within 10 s (exit 77), saying why', async () => {
    // A database of its own, made and migrated as `npm run db:migrate` does.
    const database = new URL(SERVER_URL);
    database.pathname = `/sluice_secured_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const migrate = spawnSync(process.execPath, [join(ROOT, 'scripts/db/migrate.mjs')], {
      env: { ...process.env, DATABASE_URL: database.toString() },
      encoding: 'utf8',
    });
    expect(migrate.stderr).toBe('');
    const started = Date.now();
    const admin = spawn(process.execPath, [ADMIN_MAIN], {
      env: {
        ...process.env,
        DATABASE_URL: database.toString(),
        KAFKA_SASL_PASSWORD_FILE: '',
        KAFKA_SASL_PASSWORD: 'not-the-password',
        SLUICE_ADMIN_TOKEN: 'secured-cluster-admin-token',
        SLUICE_TOPIC_PREFIX: cluster.prefix,
        ADMIN_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    admin.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    admin.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((done) => admin.once('exit', done));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(code).toBe(77);
    expect(output).toMatch(
      /refused the admin's credentials or certificate.*authentication failed/is,
    );
    expect(output).not.toContain('not-the-password');
  });
});
