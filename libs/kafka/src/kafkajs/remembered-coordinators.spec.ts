// The patched eosManager of kafkajs remembers where its coordinators are, as the Java producer
// does: stock kafkajs 2.2.4 sent a FindCoordinator request before every AddPartitionsToTxn,
// AddOffsetsToTxn, TxnOffsetCommit and EndTxn, four of them in each transaction that commits
// offsets (bench/e2e.bench.ts: most of the broker's requests with ten pipelines). A coordinator
// that fails a request is asked for again, unless it answered as the coordinator (busy with the
// previous commit's markers, or still loading).
import { kafkajsModule } from './patched-kafkajs';

interface EosManager {
  initProducerId(): Promise<void>;
  beginTransaction(): void;
  addPartitionsToTransaction(
    topicData: Array<{ topic: string; partitions: Array<{ partition: number }> }>,
  ): Promise<void>;
  sendOffsets(request: {
    consumerGroupId: string;
    topics: Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>;
  }): Promise<void>;
  commit(): Promise<void>;
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function protocolError(type: string): Error {
  return Object.assign(new Error(`the coordinator answered ${type}`), {
    name: 'KafkaJSProtocolError',
    type,
    retriable: true,
  });
}

/** A broker whose coordinator requests fail with `failures` (in order), then succeed. */
function broker(nodeId: number, requests: string[], failures: Error[] = []) {
  const answer = async (what: string) => {
    requests.push(`${what}@${nodeId}`);
    const failure = failures.shift();
    if (failure) throw failure;
  };
  return {
    nodeId,
    initProducerId: async () => ({ producerId: 7, producerEpoch: 0 }),
    addPartitionsToTxn: () => answer('AddPartitionsToTxn'),
    addOffsetsToTxn: () => answer('AddOffsetsToTxn'),
    txnOffsetCommit: () => answer('TxnOffsetCommit'),
    endTxn: () => answer('EndTxn'),
  };
}

type Broker = ReturnType<typeof broker>;

/** A transaction manager over a cluster whose coordinator lookups answer `where(type, id)`. */
async function producerOver(
  where: (coordinatorType: number, id: string) => Broker,
  options: { findBrokerFailures?: Error[] } = {},
) {
  const lookups: string[] = [];
  const brokers = new Map<number, Broker>();
  const createEosManager = kafkajsModule<(options: object) => EosManager>('producer/eosManager');
  const eos = createEosManager({
    logger: quiet,
    cluster: {
      refreshMetadataIfNecessary: async () => undefined,
      findGroupCoordinator: async ({
        groupId,
        coordinatorType,
      }: {
        groupId: string;
        coordinatorType: number;
      }) => {
        lookups.push(groupId);
        const found = where(coordinatorType, groupId);
        brokers.set(found.nodeId, found);
        return found;
      },
      findBroker: async ({ nodeId }: { nodeId: number }) => {
        const failure = options.findBrokerFailures?.shift();
        if (failure) throw failure;
        return brokers.get(nodeId);
      },
    },
    transactional: true,
    transactionalId: 'sluice.orders.0',
    retry: { initialRetryTime: 1, maxRetryTime: 5, retries: 5 },
  });
  // InitProducerId finds the transaction coordinator: it is remembered from there on.
  await eos.initProducerId();
  return { eos, lookups };
}

const orders = [{ topic: 'orders', partitions: [{ partition: 0 }] }];

async function transaction(eos: EosManager, group = 'sluice-processor'): Promise<void> {
  eos.beginTransaction();
  await eos.addPartitionsToTransaction(orders);
  await eos.sendOffsets({
    consumerGroupId: group,
    topics: [{ topic: 'events', partitions: [{ partition: 0, offset: '1' }] }],
  });
  await eos.commit();
}

describe('a transactional producer remembers its coordinators', () => {
  it('looks each coordinator up once over many transactions, not before every request', async () => {
    const requests: string[] = [];
    const coordinator = broker(1, requests);
    const { eos, lookups } = await producerOver(() => coordinator);
    for (let i = 0; i < 5; i++) await transaction(eos);
    // Stock kafkajs: 4 lookups a transaction, 20 in all.
    expect(lookups).toEqual(['sluice.orders.0', 'sluice-processor']);
    expect(requests).toHaveLength(20);
  });

  it('keeps the coordinator that answered CONCURRENT_TRANSACTIONS or a load in progress', async () => {
    const requests: string[] = [];
    const coordinator = broker(1, requests, [
      protocolError('CONCURRENT_TRANSACTIONS'),
      protocolError('GROUP_LOAD_IN_PROGRESS'),
    ]);
    const { eos, lookups } = await producerOver(() => coordinator);
    await transaction(eos);
    expect(requests.slice(0, 3)).toEqual([
      'AddPartitionsToTxn@1',
      'AddPartitionsToTxn@1',
      'AddPartitionsToTxn@1',
    ]);
    expect(lookups).toEqual(['sluice.orders.0', 'sluice-processor']);
  });

  it('asks again where the coordinator is once it answers that it is not (any more)', async () => {
    const requests: string[] = [];
    const moved = broker(1, requests, [protocolError('NOT_COORDINATOR_FOR_GROUP')]);
    const next = broker(2, requests);
    let lookupsSoFar = 0;
    const { eos, lookups } = await producerOver((type) =>
      type === 1 && lookupsSoFar++ === 0 ? moved : next,
    );
    await transaction(eos);
    await transaction(eos);
    expect(requests.slice(0, 2)).toEqual(['AddPartitionsToTxn@1', 'AddPartitionsToTxn@2']);
    expect(requests.slice(2).every((request) => request.endsWith('@2'))).toBe(true);
    // The transaction coordinator twice (before and after the move), the group's once.
    expect(lookups).toEqual(['sluice.orders.0', 'sluice.orders.0', 'sluice-processor']);
  });

  it('asks again after a lost connection, and remembers each group coordinator on its own', async () => {
    const requests: string[] = [];
    const lost = Object.assign(new Error('Connection closed'), {
      name: 'KafkaJSConnectionClosedError',
      retriable: true,
    });
    const coordinator = broker(1, requests, [lost]);
    const { eos, lookups } = await producerOver(() => coordinator);
    await transaction(eos, 'group-a');
    await transaction(eos, 'group-b');
    await transaction(eos, 'group-a');
    expect(lookups).toEqual(['sluice.orders.0', 'sluice.orders.0', 'group-a', 'group-b']);
  });

  it('asks again when the remembered node is no longer in the metadata', async () => {
    const requests: string[] = [];
    const coordinator = broker(1, requests);
    const gone = Object.assign(new Error('Broker 1 not found in the cached metadata'), {
      name: 'KafkaJSBrokerNotFound',
      retriable: true,
    });
    const findBrokerFailures: Error[] = [];
    const { eos, lookups } = await producerOver(() => coordinator, { findBrokerFailures });
    findBrokerFailures.push(gone);
    await transaction(eos);
    expect(lookups).toEqual(['sluice.orders.0', 'sluice.orders.0', 'sluice-processor']);
    expect(requests).toHaveLength(4);
  });
});
