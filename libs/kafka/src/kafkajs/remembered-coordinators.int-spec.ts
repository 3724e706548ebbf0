// On the real broker: a transactional producer that commits offsets in each transaction asks
// where its coordinators are once, not before each coordinator request (stock kafkajs 2.2.4
// sent 207 FindCoordinator requests for these 50 transactions, measured with this test).
import { logLevel } from 'kafkajs';

import { createKafka, ensureTopics } from '../index';
import { uniqueName } from '../testing';

it('finds the transaction and group coordinators once over 50 transactions', async () => {
  const kafka = createKafka({
    clientId: 'sluice-remembered-coordinators',
    logLevel: logLevel.ERROR,
  });
  const admin = kafka.admin();
  await admin.connect();
  const topic = uniqueName('remembered.out');
  const consumerGroupId = uniqueName('remembered.group');
  await ensureTopics(admin, [{ topic, numPartitions: 2 }]);
  const producer = kafka.producer({
    transactionalId: uniqueName('remembered.tx'),
    idempotent: true,
    maxInFlightRequests: 1,
  });
  const requests = new Map<string, number>();
  producer.on(producer.events.REQUEST, ({ payload }) =>
    requests.set(payload.apiName, (requests.get(payload.apiName) ?? 0) + 1),
  );
  await producer.connect();
  try {
    for (let i = 0; i < 50; i++) {
      const transaction = await producer.transaction();
      await transaction.send({ topic, messages: [{ key: String(i), value: String(i) }] });
      await transaction.sendOffsets({
        consumerGroupId,
        topics: [{ topic, partitions: [{ partition: 0, offset: String(i) }] }],
      });
      await transaction.commit();
    }
  } finally {
    await producer.disconnect();
    await admin.disconnect();
  }
  expect(requests.get('EndTxn')).toBe(50);
  // kafkajs names FindCoordinator by its old name: the transaction coordinator's and the group's,
  // and a few more when this is the cluster's first transaction (its coordinator topics are being
  // created meanwhile, and a lookup answered COORDINATOR_NOT_AVAILABLE is retried).
  expect(requests.get('GroupCoordinator')).toBeLessThanOrEqual(10);
});
