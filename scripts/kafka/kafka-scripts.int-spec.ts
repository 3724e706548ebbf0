// Runs kafka:up / kafka:down against a broker of its own (other ports, its own data dir) so it
// can stop and restart that broker without disturbing the shared one the other tests use.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

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
