// `SLUICE_KAFKA_SECURE=1 npm run kafka:up`'s broker, and Sluice's clients on it: SCRAM-SHA-512
// over SASL_SSL (transactions included) and mTLS as the users its ACLs let in; a wrong password
// and an untrusted certificate are refusals (not retried), and a user without ACLs gets the
// broker's authorization error.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { logLevel } from 'kafkajs';

import { createKafka, isSecurityRefusal, kafkaSecurityFromEnv } from './index';
import type { KafkaSecurity } from './index';
import { OwnBroker, readTopic, uniqueName } from './testing';

describe('the secured local broker', () => {
  const broker = new OwnBroker(19_620, { env: { SLUICE_KAFKA_SECURE: '1' } });
  let env: Record<string, string>;
  let security: KafkaSecurity;
  const secure = (file: string) => join(broker.directory, 'secure', file);

  beforeAll(() => {
    broker.up();
    env = broker.secureEnv();
    const read = kafkaSecurityFromEnv(env);
    if (!('security' in read)) throw new Error(read.problems.join('; '));
    security = read.security;
  }, 120_000);

  afterAll(() => broker.destroy());

  const client = (
    id: string,
    override: Partial<KafkaSecurity> = {},
    brokers = [env['KAFKA_BROKERS']!],
  ) =>
    createKafka({
      clientId: id,
      brokers,
      security: { ...security, ...override },
      logLevel: logLevel.NOTHING,
      // A refusal must show on the first attempt; the others may wait out a coordinator.
      retry: { retries: id.startsWith('refused') ? 0 : 5 },
    });

  it('writes secure.env for user sluice, who may create topics and commit transactions over SASL_SSL', async () => {
    expect(env).toMatchObject({
      KAFKA_BROKERS: '127.0.0.1:19720',
      KAFKA_SSL: 'true',
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'sluice',
    });
    const kafka = client('secure-sluice');
    const admin = kafka.admin();
    await admin.connect();
    const topic = uniqueName('secure.topic');
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
    const producer = kafka.producer({
      transactionalId: uniqueName('secure.txn'),
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    const transaction = await producer.transaction();
    await transaction.send({ topic, messages: [{ value: 'over SASL_SSL' }] });
    await transaction.commit();
    await producer.disconnect();
    await admin.disconnect();
    // Read back committed, by a consumer group over SASL_SSL too.
    const records = await readTopic(client('secure-reader'), { topic, expected: 1 });
    expect(records.map((record) => record.value)).toEqual(['over SASL_SSL']);
  });

  it('lets the mTLS client in by its certificate', async () => {
    const kafka = client(
      'secure-mtls',
      {
        sasl: undefined,
        ssl: {
          ca: readFileSync(secure('ca.pem'), 'utf8'),
          cert: readFileSync(secure('client-mtls.pem'), 'utf8'),
          key: readFileSync(secure('client-mtls.key'), 'utf8'),
        },
      },
      ['127.0.0.1:19722'],
    );
    const admin = kafka.admin();
    await admin.connect();
    expect(Array.isArray(await admin.listTopics())).toBe(true);
    await admin.disconnect();
  });

  it('refuses a wrong password and an untrusted certificate at once, as refusals', async () => {
    const started = Date.now();
    const wrong = client('refused-wrong-password', {
      sasl: { mechanism: 'scram-sha-512', username: 'sluice', password: 'not-the-password' },
    }).admin();
    const failure = await wrong.connect().catch((error: unknown) => error);
    expect((failure as Error).message).toMatch(/authentication failed/i);
    expect(isSecurityRefusal(failure)).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);

    const untrusted = client('refused-untrusted', { ssl: true }).admin();
    const refused = await untrusted.connect().catch((error: unknown) => error);
    expect((refused as Error).message).toMatch(/certificate/);
    expect(isSecurityRefusal(refused)).toBe(true);
  });

  it('answers a user without ACLs with an authorization error', async () => {
    const limited = client('refused-limited', {
      sasl: {
        mechanism: 'scram-sha-512',
        username: 'limited',
        password: readFileSync(secure('limited.password'), 'utf8').trim(),
      },
    }).admin();
    await limited.connect();
    const denied = await limited
      .createTopics({ topics: [{ topic: uniqueName('secure.denied'), numPartitions: 1 }] })
      .catch((error: unknown) => error);
    expect(JSON.stringify(denied, Object.getOwnPropertyNames(denied))).toMatch(
      /AUTHORIZATION_FAILED|not authorized/i,
    );
    await limited.disconnect();
  });

  // k8s/base/topics-job.sh, the topics Job's script, with kafka-topics.sh run from the broker's
  // own jars: it reaches the secured listeners from the apps' variables alone.
  it.each([
    ['SASL_SSL with SCRAM-SHA-512', () => env],
    [
      'mTLS',
      () => ({
        KAFKA_BROKERS: '127.0.0.1:19722',
        KAFKA_SSL: 'true',
        KAFKA_SSL_CA_FILE: secure('ca.pem'),
        KAFKA_SSL_CERT_FILE: secure('client-mtls.pem'),
        KAFKA_SSL_KEY_FILE: secure('client-mtls.key'),
      }),
    ],
  ])(
    'runs the topics Job over %s',
    async (_, variables) => {
      const root = resolve(__dirname, '../../..');
      const bin = mkdtempSync(join(tmpdir(), 'sluice-kafka-bin-'));
      writeFileSync(
        join(bin, 'kafka-topics.sh'),
        `#!/bin/sh\nexec java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Dlog4j2.level=OFF -cp '${join(root, '.local/kafka/libs')}/*' org.apache.kafka.tools.TopicCommand "$@"\n`,
      );
      chmodSync(join(bin, 'kafka-topics.sh'), 0o755);
      const prefix = uniqueName('jobs');
      const sources = [uniqueName('job-events')];
      execFileSync('sh', [join(root, 'k8s/base/topics-job.sh')], {
        env: {
          PATH: process.env['PATH'],
          KAFKA_BIN: bin,
          SLUICE_TOPIC_PREFIX: prefix,
          SOURCE_TOPICS: sources.join(','),
          SOURCE_PARTITIONS: '2',
          ...variables(),
        },
        stdio: 'pipe',
      });
      const admin = client('secure-job-check').admin();
      await admin.connect();
      const { topics } = await admin.fetchTopicMetadata({
        topics: [`${prefix}.pipelines`, `${prefix}.stats`, `${prefix}.dlq`, ...sources],
      });
      await admin.disconnect();
      expect(Object.fromEntries(topics.map((t) => [t.name, t.partitions.length]))).toEqual({
        [`${prefix}.pipelines`]: 1,
        [`${prefix}.stats`]: 1,
        [`${prefix}.dlq`]: 3,
        [sources[0]!]: 2,
      });
    },
    120_000,
  );
});
