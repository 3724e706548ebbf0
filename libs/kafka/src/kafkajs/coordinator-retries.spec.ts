// The patched eosManager of kafkajs (producer/eosManager/index.js) against a transaction
// coordinator simulated in process: a transaction's first write right after a commit meets
// CONCURRENT_TRANSACTIONS while the coordinator writes that commit's markers, and the
// coordinator request is retried on its own, under the producer's retry settings, instead of
// failing the send attempt around it (stock kafkajs 2.2.4 threw it to the send); and no
// coordinator request retries past the transaction timeout, though the coordinator lookup
// under it has retries of its own.
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
async function transactionWith(
  answers: Error[],
  options: { lookups?: Error[]; retries?: number; transactionTimeout?: number } = {},
) {
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
      findGroupCoordinator: async () => {
        const failure = options.lookups?.shift();
        if (failure) throw failure;
        return coordinator;
      },
    },
    transactional: true,
    transactionalId: 'sluice.orders.0',
    retry: { initialRetryTime: 1, maxRetryTime: 5, retries: options.retries ?? 5 },
    ...(options.transactionTimeout ? { transactionTimeout: options.transactionTimeout } : {}),
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

  it('stops within the transaction timeout when the coordinator lookup itself keeps giving up', async () => {
    // What kafkajs' own lookup throws once its retries are spent: a wrapper, not retriable,
    // around the retriable error that made it retry. Each attempt here would retry it again.
    const spent = () =>
      Object.assign(new Error('the lookup gave up'), {
        name: 'KafkaJSNumberOfRetriesExceeded',
        retriable: false,
        originalError: Object.assign(new Error('coordinator not available'), {
          name: 'KafkaJSProtocolError',
          type: 'GROUP_LOAD_IN_PROGRESS',
          retriable: true,
        }),
      });
    const lookups: Error[] = [];
    const timed = await transactionWith([], { lookups, retries: 1000, transactionTimeout: 150 });
    lookups.push(...Array.from({ length: 1000 }, spent));
    const started = Date.now();
    await expect(timed.eos.addPartitionsToTransaction(orders)).rejects.toMatchObject({
      name: 'KafkaJSNumberOfRetriesExceeded',
    });
    // 1,000 retries of at most 5 ms each would take seconds; the deadline ends them.
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(timed.calls).toEqual([]);
    // The same lookup failing a few times within the deadline is waited out.
    const few: Error[] = [];
    const patient = await transactionWith([], { lookups: few, retries: 100 });
    few.push(spent(), spent(), spent());
    await expect(patient.eos.addPartitionsToTransaction(orders)).resolves.toBeUndefined();
    expect(patient.calls).toHaveLength(1);
  });
});
