// The broker goes away mid-stream (a controlled shutdown) and comes back while two replicas
// process a stream: nothing is lost or duplicated. With SLUICE_BROKER_EVIDENCE=<dir>, the
// broker logs its transaction coordinator, log layer and state changes at INFO, its data
// directory is copied just before it goes down and just after it is back, and at the end the
// output, changelog and transaction-log partitions are dumped (DumpLogSegments --deep-iteration)
// and the broker is asked for hanging transactions: the post-mortem README's Known issues rests on.
// INFO logging and the copies slow a run and change its timing: SLUICE_BROKER_DUMP=<dir> only
// dumps, and only after a failure, for catching a rare one in a loop.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { OwnBroker } from '@sluice/kafka/testing';
import { dailyRevenueDefinition, generateOrders } from '@sluice/operators/testing';
import { sleep } from '@sluice/testing';

import { canonical, reference, TestCluster } from './cluster';
import type { LinearDefinition } from './cluster';

const DAY = 86_400_000;
const ROOT = resolve(__dirname, '../../..');
const EVIDENCE = process.env['SLUICE_BROKER_EVIDENCE'];
const DUMP = EVIDENCE ?? process.env['SLUICE_BROKER_DUMP'];

describe('a broker restart mid-stream', () => {
  const broker = new OwnBroker(19_492, {
    env: EVIDENCE
      ? { KAFKA_LOG4J_CONFIG: join(ROOT, 'scripts/kafka/log4j2-evidence.properties') }
      : {},
  });
  let cluster: TestCluster;
  let passed = false;
  const snapshot = (name: string) => {
    if (EVIDENCE) cpSync(broker.dataDirectory(), join(EVIDENCE, name), { recursive: true });
  };

  beforeAll(async () => {
    if (EVIDENCE) mkdirSync(EVIDENCE, { recursive: true });
    broker.up();
    cluster = new TestCluster(6, broker.address);
    await cluster.setup();
  });

  afterAll(async () => {
    await cluster.teardown();
    if (DUMP && (EVIDENCE || !passed)) {
      execFileSync('bash', [
        join(ROOT, 'scripts/kafka/dump-evidence.sh'),
        broker.dataDirectory(),
        join(DUMP, 'dumps'),
        '--bootstrap',
        broker.address,
        `^${cluster.prefix}\\.`,
        '^__transaction_state-',
      ]);
      broker.down();
      cpSync(broker.directory, join(DUMP, 'broker'), { recursive: true });
      process.stderr.write(`broker evidence in ${DUMP}\n`);
    }
    broker.destroy();
  });

  it('loses and duplicates nothing', async () => {
    const definition = dailyRevenueDefinition({
      id: '00000000-0000-4000-8000-0000000000e1',
      output: cluster.output('daily_revenue'),
    }) as LinearDefinition;
    await cluster.putPipeline(definition);
    const replicas = [await cluster.startReplica('r0'), await cluster.startReplica('r1')];
    const start = Date.UTC(2026, 10, 1);
    const orders = generateOrders({ count: 40_000, start, stepMs: (4 * DAY) / 40_000, seed: 11 });
    const chunks = 8;
    const size = orders.length / chunks;
    for (let chunk = 0; chunk < chunks; chunk++) {
      await cluster.produce(orders.slice(chunk * size, (chunk + 1) * size));
      if (chunk === 3) {
        snapshot('before-down');
        broker.down();
        await sleep(2000);
        broker.up();
        snapshot('after-up');
      }
      await sleep(300);
    }
    const ticks = await cluster.tickEveryPartition(start + 6 * DAY);
    const expected = reference(definition, [...orders, ...ticks]);
    expect(expected.late).toHaveLength(0);
    const results = await cluster.read(definition.output, expected.results.length, {
      timeoutMs: 150_000,
      settleMs: 3000,
    });
    const late = await cluster.read(`${definition.output}.late`, 0, { settleMs: 500 });
    expect(late.map((record) => record.value)).toEqual([]);
    expect(canonical(results)).toEqual(canonical(expected.results));
    for (const replica of replicas) expect(await replica.ready()).toBe(true);
    passed = true;
  });
});
