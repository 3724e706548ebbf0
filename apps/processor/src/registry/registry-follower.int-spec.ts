// The registry against the real broker: definitions written to a compacted topic directly, as
// the admin's relay writes them.
import { randomUUID } from 'node:crypto';

import { createKafka, ensureTopics } from '@sluice/kafka';
import { uniqueName } from '@sluice/kafka/testing';
import { dailyRevenueDefinition } from '@sluice/operators/testing';
import { until } from '@sluice/testing';
import { logLevel } from 'kafkajs';
import type { Producer } from 'kafkajs';

import { DefinitionRegistry } from './definition-registry';
import type { RegistryChange } from './definition-registry';
import { RegistryFollower } from './registry-follower';

const kafka = createKafka({ clientId: 'registry-test', logLevel: logLevel.NOTHING });

function stored(id: string, version: number, overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    ...dailyRevenueDefinition({ id }),
    version,
    reset_generation: 0,
    created_at: '',
    updated_at: '',
    ...overrides,
  });
}

describe('RegistryFollower', () => {
  let producer: Producer;
  const topic = `sluice-registry-test-${randomUUID().slice(0, 8)}.pipelines`;

  beforeAll(async () => {
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [{ topic, numPartitions: 1, compacted: true }]);
    await admin.disconnect();
    producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
  });

  afterAll(async () => {
    await producer.disconnect();
  });

  it('loads every definition before start resolves, then applies changes live', async () => {
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    await producer.send({
      topic,
      messages: [
        { key: a, value: stored(a, 1) },
        { key: b, value: stored(b, 1) },
        { key: b, value: stored(b, 2, { name: 'b-renamed' }) },
        { key: a, value: null },
        { key: c, value: '{"broken": ' },
      ],
    });

    const registry = new DefinitionRegistry();
    const changes: RegistryChange[] = [];
    const follower = new RegistryFollower(
      kafka,
      topic,
      registry,
      uniqueName('follower'),
      (change) => changes.push(change),
    );
    await follower.start();
    try {
      expect(registry.all().map((p) => [p.stored.id, p.stored.version, p.stored.name])).toEqual([
        [b, 2, 'b-renamed'],
      ]);
      expect(changes.map((change) => change.kind)).toEqual([
        'created',
        'created',
        'updated',
        'deleted',
        'ignored',
      ]);

      await producer.send({
        topic,
        messages: [
          { key: b, value: stored(b, 2, { reset_generation: 1 }) },
          { key: b, value: stored(b, 1) },
        ],
      });
      await until(() => changes.length === 7, { what: 'seven changes', timeoutMs: 15_000 });
      expect(changes.slice(5).map((change) => change.kind)).toEqual(['reset', 'ignored']);
      expect(registry.get(b)?.stored.reset_generation).toBe(1);
    } finally {
      await follower.stop();
    }
  });

  it('starts at once on an empty topic', async () => {
    const empty = `sluice-registry-test-${randomUUID().slice(0, 8)}.pipelines`;
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [{ topic: empty, numPartitions: 1, compacted: true }]);
    await admin.disconnect();
    const follower = new RegistryFollower(
      kafka,
      empty,
      new DefinitionRegistry(),
      uniqueName('follower'),
    );
    const started = Date.now();
    await follower.start();
    expect(Date.now() - started).toBeLessThan(10_000);
    await follower.stop();
  });
});
