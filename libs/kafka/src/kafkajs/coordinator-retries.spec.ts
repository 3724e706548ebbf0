// The patched eosManager of kafkajs (producer/eosManager/index.js) against a transaction
// coordinator simulated in process: a transaction's first write right after a commit meets
// CONCURRENT_TRANSACTIONS while the coordinator writes that commit's markers, and the
// coordinator request is retried on its own, under the producer's retry settings, instead of
// failing the send attempt around it (stock kafkajs 2.2.4 threw it to the send).
import { kafkajsModule } from './patched-kafkajs';

interface EosManager {
  initProducerId(): Promise<void>;
  beginTransaction(): void;
  addPartitionsToTransaction(
    topicData: Array<{ topic: string; partitions: Array<{ partition: number }> }>,
  ): Promise<void>;
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function protocolError(type: string, retriable: boolean): Error {
  return Object.assign(new Error(`the coordinator answered ${type}`), {
    name: 'KafkaJSProtocolError',
    type,
    retriable,
  });
}

/** A producer's transaction manager whose coordinator answers AddPartitionsToTxn with `answers`, then OK. */
async function transactionWith(answers: Error[]) {
  const calls: string[][] = [];
  const coordinator = {
    async initProducerId() {
      return { producerId: 7, producerEpoch: 0 };
    },
    async addPartitionsToTxn(request: { topics: Array<{ topic: string; partitions: number[] }> }) {
      calls.push(request.topics.flatMap((t) => t.partitions.map((p) => `${t.topic}/${p}`)));
      const answer = answers.shift();
      if (answer) throw answer;
    },
  };
  const createEosManager = kafkajsModule<(options: object) => EosManager>('producer/eosManager');
  const eos = createEosManager({
    logger: quiet,
    cluster: {
      refreshMetadataIfNecessary: async () => undefined,
      findGroupCoordinator: async () => coordinator,
    },
    transactional: true,
    transactionalId: 'sluice.orders.0',
    retry: { initialRetryTime: 1, maxRetryTime: 5, retries: 5 },
  });
  await eos.initProducerId();
  eos.beginTransaction();
  return { eos, calls };
}

const orders = [{ topic: 'orders', partitions: [{ partition: 0 }, { partition: 3 }] }];

describe('AddPartitionsToTxn under the coordinator retry policy', () => {
  it('waits out CONCURRENT_TRANSACTIONS (the previous commit still writing its markers)', async () => {
    const busy = () => protocolError('CONCURRENT_TRANSACTIONS', true);
    const { eos, calls } = await transactionWith([busy(), busy()]);
    await expect(eos.addPartitionsToTransaction(orders)).resolves.toBeUndefined();
    expect(calls).toEqual([
      ['orders/0', 'orders/3'],
      ['orders/0', 'orders/3'],
      ['orders/0', 'orders/3'],
    ]);
    // Added once: a later write to the same partitions asks nothing more.
    await eos.addPartitionsToTransaction(orders);
    expect(calls).toHaveLength(3);
  });

  it('fails at once on an answer that no retry changes', async () => {
    const denied = protocolError('TRANSACTIONAL_ID_AUTHORIZATION_FAILED', false);
    const { eos, calls } = await transactionWith([denied]);
    await expect(eos.addPartitionsToTransaction(orders)).rejects.toMatchObject({
      type: 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
    });
    expect(calls).toHaveLength(1);
  });

  it('gives up, bounded, when the coordinator stays busy', async () => {
    const busy = Array.from({ length: 20 }, () => protocolError('CONCURRENT_TRANSACTIONS', true));
    const { eos, calls } = await transactionWith(busy);
    await expect(eos.addPartitionsToTransaction(orders)).rejects.toThrow();
    expect(calls).toHaveLength(6); // the first attempt and the 5 retries of `retry`
  });
});
