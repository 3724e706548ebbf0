// The patched BrokerPool.withBroker of kafkajs (cluster/brokerPool.js, marker
// `authorization-errors`): it asks each broker in turn and, stock, drops every failure, so a
// FindCoordinator that Kafka refused for want of an ACL came out as "Failed to find group
// coordinator", a retriable error, and was retried for good. An authorization answer now comes
// out as itself; other failures still mean "try the next broker".
import { kafkajsModule } from './patched-kafkajs';

type Callback = (args: { nodeId: string }) => Promise<unknown>;
interface BrokerPool {
  brokers: Record<string, unknown>;
  findBroker(args: { nodeId: string }): Promise<{ nodeId: string }>;
  withBroker(callback: Callback): Promise<unknown>;
}
const BrokerPoolClass = kafkajsModule<{ prototype: BrokerPool }>('cluster/brokerPool.js');

function pool(nodes: string[]): BrokerPool {
  const instance = Object.create(BrokerPoolClass.prototype) as BrokerPool;
  instance.brokers = Object.fromEntries(nodes.map((node) => [node, {}]));
  instance.findBroker = async ({ nodeId }) => ({ nodeId });
  return instance;
}

const failure = (type: string) =>
  Object.assign(new Error(type), { name: 'KafkaJSProtocolError', type, retriable: false });

describe('kafkajs BrokerPool.withBroker (patched)', () => {
  it('passes on an authorization answer instead of reporting no broker', async () => {
    const asked: string[] = [];
    const answer = pool(['1', '2', '3']).withBroker(async ({ nodeId }) => {
      asked.push(nodeId);
      throw failure('TRANSACTIONAL_ID_AUTHORIZATION_FAILED');
    });
    await expect(answer).rejects.toMatchObject({ type: 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED' });
    expect(asked.sort()).toEqual(['1', '2', '3']);
  });

  it('still tries the next broker after any failure, and answers with the first that works', async () => {
    let calls = 0;
    const answer = await pool(['1', '2']).withBroker(async () => {
      calls += 1;
      if (calls === 1) throw failure('GROUP_AUTHORIZATION_FAILED');
      return 'coordinator';
    });
    expect(answer).toBe('coordinator');
  });

  it('still answers null when every broker failed otherwise (the caller retries)', async () => {
    const answer = await pool(['1', '2']).withBroker(async () => {
      throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    });
    expect(answer).toBeNull();
  });
});
