// The patched send of kafkajs (producer/sendMessages.js) across leader moves, against brokers
// simulated in process: each partition's log is shared by the brokers (as a replicated log is)
// and takes a producer's batch only at its next sequence number, answering a repeat of its last
// batch as a duplicate, as Kafka does. Stock kafkajs 2.2.4 fails all but the part-way case.
import { kafkajsModule } from './patched-kafkajs';

type Behaviour = 'ok' | 'fail' | 'write-then-fail' | 'write-first-then-fail' | 'slow-ok';

interface PartitionEntry {
  partition: number;
  firstSequence: number;
  messages: Array<{ partition?: number; value: string }>;
}
interface ProduceRequest {
  topicData: Array<{ topic: string; partitions: PartitionEntry[] }>;
}

const TOPIC = 'orders';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class PartitionLog {
  readonly values: string[] = [];
  private next = 0;
  private last: { first: number; count: number } | undefined;

  append(entry: PartitionEntry): void {
    const count = entry.messages.length;
    if (entry.firstSequence === this.next) {
      this.values.push(...entry.messages.map((m) => m.value));
      this.last = { first: entry.firstSequence, count };
      this.next += count;
      return;
    }
    if (this.last?.first === entry.firstSequence && this.last.count === count) return; // a duplicate
    throw Object.assign(new Error('The broker received an out of order sequence number'), {
      name: 'KafkaJSProtocolError',
      type: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
      retriable: false,
    });
  }
}

/** What kafkajs' produce parser throws for the first failed partition of an answer. */
function notLeader(): Error {
  return Object.assign(new Error('This server is not the leader for that topic-partition'), {
    name: 'KafkaJSProtocolError',
    type: 'NOT_LEADER_OR_FOLLOWER',
    retriable: true,
  });
}

function connectionError(): Error {
  return Object.assign(new Error('Connection error: the broker went away'), {
    name: 'KafkaJSConnectionError',
    retriable: true,
  });
}

/**
 * Four partitions, their leaders (broker ids 1, 2, 3) changed by each metadata refresh to the
 * next map given. Messages name their partitions unless `keyless`, when kafkajs' default
 * partitioner spreads them round-robin.
 */
function world(
  leaderMaps: Array<Record<number, number>>,
  behaviours: Record<number, Behaviour[]>,
  { keyless = false } = {},
) {
  const logs = [0, 1, 2, 3].map(() => new PartitionLog());
  let leaders = leaderMaps.shift()!;
  const requests: Array<{ broker: number; partitions: number[] }> = [];
  const brokers = new Map(
    [1, 2, 3].map((nodeId) => [
      nodeId,
      {
        nodeId,
        async produce(request: ProduceRequest) {
          const behaviour = behaviours[nodeId]?.shift() ?? 'ok';
          const entries = request.topicData.flatMap((t) => t.partitions);
          requests.push({ broker: nodeId, partitions: entries.map((e) => e.partition) });
          if (behaviour === 'fail') throw connectionError();
          if (behaviour === 'slow-ok') await sleep(50);
          if (behaviour === 'write-first-then-fail') {
            logs[entries[0]!.partition]!.append(entries[0]!);
            throw notLeader();
          }
          for (const entry of entries) logs[entry.partition]!.append(entry);
          if (behaviour === 'write-then-fail') throw connectionError();
          return {
            topics: [
              {
                topicName: TOPIC,
                partitions: entries.map((e) => ({ partition: e.partition, errorCode: 0 })),
              },
            ],
          };
        },
      },
    ]),
  );
  const cluster = {
    targetTopics: new Set<string>(),
    async refreshMetadataIfNecessary() {},
    async refreshMetadata() {
      leaders = leaderMaps.shift() ?? leaders;
    },
    async addMultipleTargetTopics() {},
    isConnected: () => true,
    async connect() {},
    removeBroker() {},
    findTopicPartitionMetadata: () =>
      [0, 1, 2, 3].map((partitionId) => ({ partitionId, leader: leaders[partitionId] })),
    findLeaderForPartitions(_topic: string, partitions: string[]) {
      const result: Record<string, number[]> = {};
      for (const id of partitions.map(Number)) (result[leaders[id]!] ??= []).push(id);
      return result;
    },
    async findBroker({ nodeId }: { nodeId: string }) {
      return brokers.get(Number(nodeId))!;
    },
  };
  const sequences = new Map<number, number>();
  const locks = new Map<unknown, Promise<void>>();
  const releases = new Map<unknown, () => void>();
  const eosManager = {
    isTransactional: () => false,
    getTransactionalId: () => undefined,
    getProducerId: () => 1,
    getProducerEpoch: () => 0,
    getSequence: (_topic: string, partition: number) => sequences.get(partition) ?? 0,
    updateSequence(_topic: string, partition: number, increment: number) {
      sequences.set(partition, (sequences.get(partition) ?? 0) + increment);
    },
    async acquireBrokerLock(broker: unknown) {
      while (locks.has(broker)) await locks.get(broker);
      locks.set(broker, new Promise<void>((resolve) => releases.set(broker, resolve)));
    },
    async releaseBrokerLock(broker: unknown) {
      locks.delete(broker);
      releases.get(broker)?.();
    },
  };
  const createRetry = kafkajsModule<(options: object) => unknown>('retry');
  const sendMessages = kafkajsModule<(options: object) => (send: object) => Promise<unknown[]>>(
    'producer/sendMessages',
  )({
    logger: { debug() {}, error() {}, warn() {}, info() {} },
    cluster,
    partitioner: keyless
      ? kafkajsModule<() => unknown>('producer/partitioners/default')()
      : ({ message }: { message: { partition: number } }) => message.partition,
    eosManager,
    retrier: createRetry({ retries: 5, initialRetryTime: 1, maxRetryTime: 5 }),
  });
  const messages: Array<{ partition?: number; key?: null; value: string }> = [0, 1, 2, 3].flatMap(
    (partition) =>
      [0, 1, 2].map((i) => ({
        ...(keyless ? { key: null } : { partition }),
        value: `p${partition}-${i}`,
      })),
  );
  // Thirteen keyless messages: a rotating partitioner would then start elsewhere on a retry.
  if (keyless) messages.push({ key: null, value: 'extra' });
  const send = () =>
    sendMessages({ acks: -1, timeout: 1000, topicMessages: [{ topic: TOPIC, messages }] });
  const expected = [0, 1, 2, 3].map((p) => [0, 1, 2].map((i) => `p${p}-${i}`));
  return { send, logs: () => logs.map((log) => log.values), expected, requests };
}

const [A, B, C] = [1, 2, 3];
const split = { 0: A, 1: A, 2: B, 3: B };
const all = (broker: number) => ({ 0: broker, 1: broker, 2: broker, 3: broker });

describe("kafkajs' send across leader moves (patched)", () => {
  it('sends the partitions that moved to a broker that had answered already', async () => {
    const run = world([split, all(A)], { [B]: ['fail'] });
    const answers = await run.send();
    expect(run.logs()).toEqual(run.expected);
    expect(answers).toHaveLength(4);
  });

  it('does not send again what was written through a broker that then went away', async () => {
    const run = world([split, all(C)], { [B]: ['fail'] });
    await run.send();
    expect(run.logs()).toEqual(run.expected);
    expect(run.requests.filter((r) => r.broker === C)).toEqual([{ broker: C, partitions: [2, 3] }]);
  });

  it('retries only once every request of the attempt has settled', async () => {
    const run = world([split, split], { [A]: ['fail'], [B]: ['slow-ok'] });
    await run.send();
    expect(run.logs()).toEqual(run.expected);
    expect(run.requests).toEqual([
      { broker: A, partitions: [0, 1] },
      { broker: B, partitions: [2, 3] },
      { broker: A, partitions: [0, 1] },
    ]);
  });

  it('sends a batch whose answer was lost again with its sequence numbers: a duplicate', async () => {
    const run = world([split, all(C)], { [B]: ['write-then-fail'] });
    await run.send();
    expect(run.logs()).toEqual(run.expected);
  });

  it('sends again the partitions of an answer that failed part-way, the written one as a duplicate', async () => {
    const run = world([split, split], { [B]: ['write-first-then-fail'] });
    await run.send();
    expect(run.logs()).toEqual(run.expected);
  });

  it('keeps keyless messages in the partitions their first attempt chose (round-robin)', async () => {
    const run = world([split, all(A)], { [B]: ['fail'] }, { keyless: true });
    const answers = await run.send();
    const written = run.logs().flat().sort();
    expect(written).toEqual([...run.expected.flat(), 'extra'].sort());
    expect(answers.length).toBe(run.logs().filter((log) => log.length > 0).length);
  });
});
