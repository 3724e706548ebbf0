// Runs kafka:up / kafka:down against a broker of its own (other ports, its own data dir) so it
// can stop and restart that broker without disturbing the shared one the other tests use.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { ensureTopics, fetchTopicOffsets, retryRetriable } from '@sluice/kafka';
import { Kafka, logLevel } from 'kafkajs';

const root = resolve(__dirname, '../..');
const home = mkdtempSync(join(tmpdir(), 'sluice-kafka-test-'));
const port = 19092;
const env = {
  ...process.env,
  SLUICE_KAFKA_HOME: home,
  SLUICE_KAFKA_LIBS: join(root, '.local/kafka/libs'),
  KAFKA_PORT: String(port),
  KAFKA_CONTROLLER_PORT: String(port + 1),
};

function run(script: 'kafka-up.sh' | 'kafka-down.sh'): string {
  return execFileSync('bash', [join(__dirname, script)], { env, encoding: 'utf8' });
}

function brokerJavaPids(): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter(
      (line) => line.includes('kafka.Kafka') && line.includes(join(home, 'server.properties')),
    )
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

const kafka = new Kafka({
  clientId: 'kafka-scripts-test',
  brokers: [`127.0.0.1:${port}`],
  logLevel: logLevel.NOTHING,
});

describe('npm run kafka:up / kafka:down', () => {
  afterAll(() => {
    run('kafka-down.sh');
    rmSync(home, { recursive: true, force: true });
  });

  it('is idempotent, stops exactly its broker, and a restart keeps topics and committed offsets', async () => {
    expect(run('kafka-up.sh')).toContain('ready');
    const pid = Number(readFileSync(join(home, 'broker.pid'), 'utf8'));
    expect(brokerJavaPids()).toEqual([pid]);

    // A second kafka:up reuses the running broker.
    expect(run('kafka-up.sh')).toContain(`already running (pid ${pid})`);
    expect(brokerJavaPids()).toEqual([pid]);

    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      topics: [{ topic: 'durable', numPartitions: 3 }],
      waitForLeaders: true,
    });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: 'durable',
      messages: Array.from({ length: 30 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })),
    });
    await producer.disconnect();
    await admin.setOffsets({
      groupId: 'durable-group',
      topic: 'durable',
      partitions: [{ partition: 1, offset: '7' }],
    });
    await admin.disconnect();

    expect(run('kafka-down.sh')).toContain('stopped');
    expect(brokerJavaPids()).toEqual([]);
    expect(run('kafka-down.sh')).toContain('nothing to stop');

    expect(run('kafka-up.sh')).not.toContain('formatting');
    const admin2 = kafka.admin();
    await admin2.connect();
    try {
      const [topic] = (await admin2.fetchTopicMetadata({ topics: ['durable'] })).topics;
      expect(topic!.partitions).toHaveLength(3);
      const ends = await admin2.fetchTopicOffsets('durable');
      expect(ends.reduce((sum, p) => sum + Number(p.high), 0)).toBe(30);
      const [committed] = await admin2.fetchOffsets({
        groupId: 'durable-group',
        topics: ['durable'],
      });
      expect(committed!.partitions.find((p) => p.partition === 1)?.offset).toBe('7');
    } finally {
      await admin2.disconnect();
    }
  });
});

describe('KAFKA_NODES=3 npm run kafka:up, kafka:kill, kafka:down', () => {
  const clusterHome = mkdtempSync(join(tmpdir(), 'sluice-kafka-cluster-test-'));
  const clusterPort = 19192;
  const clusterEnv = {
    ...env,
    SLUICE_KAFKA_HOME: clusterHome,
    KAFKA_PORT: String(clusterPort),
    KAFKA_CONTROLLER_PORT: String(clusterPort + 1),
    KAFKA_NODES: '3',
    KAFKA_HEAP_MAX: '384m',
  };
  const script = (name: string, args: string[] = [], extra: Record<string, string> = {}) =>
    execFileSync('bash', [join(__dirname, name), ...args], {
      env: { ...clusterEnv, ...extra },
      encoding: 'utf8',
    });
  const bootstrap = [0, 1, 2].map((i) => `127.0.0.1:${clusterPort + 2 * i}`);
  const cluster = new Kafka({
    clientId: 'kafka-cluster-test',
    brokers: bootstrap,
    logLevel: logLevel.NOTHING,
  });

  afterAll(() => {
    script('kafka-down.sh');
    rmSync(clusterHome, { recursive: true, force: true });
  });

  it('runs three nodes with replicated topics, survives one SIGKILLed, and brings it back', async () => {
    const up = script('kafka-up.sh');
    expect(up).toContain(`bootstrap ${bootstrap.join(',')}`);
    expect(readFileSync(join(clusterHome, 'bootstrap'), 'utf8').trim()).toBe(bootstrap.join(','));
    const admin = cluster.admin();
    await admin.connect();
    try {
      expect((await admin.describeCluster()).brokers).toHaveLength(3);
      await ensureTopics(admin, [{ topic: 'replicated', numPartitions: 3 }]);
      // Each node learns of a new topic from the controller in its own time, and kafkajs asks
      // any of them: one that has not yet answers UNKNOWN_TOPIC_OR_PARTITION (CI, session 30).
      const [metadata] = await retryRetriable(
        async () => (await admin.fetchTopicMetadata({ topics: ['replicated'] })).topics,
      );
      expect(metadata!.partitions.map((p) => p.replicas.length)).toEqual([3, 3, 3]);
      const configs = await admin.describeConfigs({
        resources: [{ type: 2, name: 'replicated', configNames: ['min.insync.replicas'] }],
        includeSynonyms: false,
      });
      expect(configs.resources[0]!.configEntries[0]!.configValue).toBe('2');

      expect(script('kafka-kill.sh', ['--node', '2'])).toMatch(/node 2 \(pid \d+\) killed/);
      // Two of three are in sync: writes that need min ISR 2 still succeed.
      const producer = cluster.producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      await producer.send({
        topic: 'replicated',
        acks: -1,
        messages: Array.from({ length: 30 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })),
      });
      await producer.disconnect();

      // kafka:up (without KAFKA_NODES: the home remembers the size) brings back only node 2.
      const again = script('kafka-up.sh', [], { KAFKA_NODES: '' });
      expect(again).toContain('starting node 2');
      expect(again).toContain('node 1 already running');
      expect(again).toContain('node 3 already running');
      const ends = await fetchTopicOffsets(admin, 'replicated');
      expect(ends.reduce((sum, p) => sum + Number(p.high), 0)).toBe(30);
    } finally {
      await admin.disconnect();
    }
    expect(script('kafka-down.sh').match(/stopped/g)).toHaveLength(3);
  });
});
