// The replica's one transaction (exactly_once_v2) against a recording stand-in for kafkajs'
// producer: what goes into which transaction, and who is replaced when one is aborted. The
// broker's side (fencing, generations, a killed replica) is in the failures e2e.
import type { Admin, Kafka, TopicMessages } from 'kafkajs';
import pino from 'pino';

import { RecordCollector } from './record-collector';
import { classifyTaskError } from './task-errors';
import { ReplicaTransaction, TransactionAbortedError } from './replica-transaction';
import type { ReplicaTaskProducer } from './replica-transaction';
import type { OffsetToCommit } from './task-producer';

interface RecordedTransaction {
  records: string[];
  offsets: Array<{ member: unknown; partitions: string[] }>;
  ended?: 'commit' | 'abort';
}

/** kafkajs' producer as far as ReplicaTransaction uses it, recording every transaction. */
function recordingKafka(
  options: {
    failOffsets?: Error;
    /** Each commit waits for this (an EndTxn under way), after calling `onCommit`. */
    commitWaitsFor?: Promise<void>;
    onCommit?: () => void;
    /** The partition count the producer's metadata gives every topic (unset: 6). */
    partitions?: number | undefined;
  } = {},
) {
  const transactions: RecordedTransaction[] = [];
  let producers = 0;
  const sendCalls: number[] = [];
  const kafka = {
    producer: () => {
      producers += 1;
      let current: RecordedTransaction | undefined;
      const begin = () => {
        current ??= { records: [], offsets: [] };
        return current;
      };
      const transaction = {
        sendBatch: async ({ topicMessages }: { topicMessages: TopicMessages[] }) => {
          await Promise.resolve();
          sendCalls.push(topicMessages.length);
          for (const { topic, messages } of topicMessages)
            for (const message of messages)
              begin().records.push(`${topic}:${String(message.value)}`);
          return [];
        },
        sendOffsets: async ({
          consumerGroupMetadata,
          topics,
        }: {
          consumerGroupMetadata?: unknown;
          topics: Array<{
            topic: string;
            partitions: Array<{ partition: number; offset: string }>;
          }>;
        }) => {
          if (options.failOffsets) throw options.failOffsets;
          begin().offsets.push({
            member: consumerGroupMetadata,
            partitions: topics.flatMap(({ topic, partitions }) =>
              partitions.map((p) => `${topic}/${p.partition}@${p.offset}`),
            ),
          });
        },
        commit: async () => {
          options.onCommit?.();
          await options.commitWaitsFor;
          const ended = begin();
          ended.ended = 'commit';
          transactions.push(ended);
          current = undefined;
        },
        abort: async () => {
          if (current) {
            current.ended = 'abort';
            transactions.push(current);
          }
          current = undefined;
        },
        isActive: () => current !== undefined,
      };
      const epoch = producers - 1;
      return {
        connect: async () => undefined,
        disconnect: async () => undefined,
        transaction: async () => transaction,
        transactionalIdentity: () => ({ producerId: '7', producerEpoch: epoch }),
        partitionCount: () => ('partitions' in options ? options.partitions : 6),
      };
    },
  } as unknown as Kafka;
  return { kafka, transactions, sendCalls, producers: () => producers };
}

const member = { generationId: 4, memberId: 'm-1', groupInstanceId: null };

function offset(topic: string, partition: number, at: string): OffsetToCommit {
  return { groupId: 'g', topic, partition, offset: at, metadata: undefined, member };
}

function records(topic: string, ...values: string[]): RecordCollector {
  return RecordCollector.of({ topic, messages: values.map((value) => ({ value })) });
}

/** A task stand-in: what it handled since its last hand-over, handed over when asked. */
class FakeTask {
  pending: { values: string[]; at: string; buffered?: boolean } | undefined;
  committed: string[] = [];
  /** How the task answers a hand-over: as asked, not at all (a step of it threw), or throwing. */
  handsOver: 'yes' | 'no' | 'throws' = 'yes';
  readonly share: ReplicaTaskProducer;

  constructor(
    replica: ReplicaTransaction,
    readonly topic: string,
    readonly partition: number,
  ) {
    this.share = replica.forTask(`${topic}/${partition}`, () => this.handOver());
  }

  handle(at: string, ...values: string[]): void {
    this.share.send(records('out', ...values));
    this.pending = { values, at };
  }

  /** Handles records whose output the task holds until it hands over (a task's own buffer). */
  handleBuffered(at: string, ...values: string[]): void {
    this.pending = { values, at, buffered: true };
  }

  handOver(): void {
    if (this.handsOver === 'no') return;
    if (this.handsOver === 'throws') throw new Error('beforeCommit failed');
    const pending = this.pending;
    if (!pending) return;
    this.pending = undefined;
    if (pending.buffered) this.share.send(records('out', ...pending.values));
    this.share.commit(offset(this.topic, this.partition, pending.at), () =>
      this.committed.push(pending.at),
    );
  }
}

/**
 * The broker as a commit's check asks it (replica-sweep.int-spec.ts has the real one): every
 * commit's markers written, nothing left open on any partition.
 */
const settledAdmin = {
  describeTransaction: async () => ({ transactionState: 'CompleteCommit' }),
  fetchOffsets: async () => [],
  describeProducers: async ({
    topics,
  }: {
    topics: Array<{ topic: string; partitions: number[] }>;
  }) =>
    topics.flatMap(({ topic, partitions }) =>
      partitions.map((partition) => ({ topic, partition, activeProducers: [] })),
    ),
} as unknown as Admin;

/** Two tasks, of partitions 0 and 1 of `in`, attached to the replica's transaction. */
async function fencedPair(replica: ReplicaTransaction): Promise<[FakeTask, FakeTask]> {
  const pair: [FakeTask, FakeTask] = [
    new FakeTask(replica, 'in', 0),
    new FakeTask(replica, 'in', 1),
  ];
  for (const task of pair) await task.share.fence();
  return pair;
}

function replicaOn(kafka: Kafka) {
  return new ReplicaTransaction({
    kafka,
    admin: settledAdmin,
    id: 'g.replica/r0',
    logger: pino({ level: 'silent' }),
    transactionTimeoutMs: 10_000,
  });
}

describe('ReplicaTransaction', () => {
  it('commits every task with records in the transaction at once, in one offset commit', async () => {
    const broker = recordingKafka();
    const replica = replicaOn(broker.kafka);
    const [a, b, c] = [0, 1, 2].map((p) => new FakeTask(replica, 'in', p)) as [
      FakeTask,
      FakeTask,
      FakeTask,
    ];
    for (const task of [a, b, c]) await task.share.fence();
    a.handle('10', 'a1');
    b.handle('20', 'b1');
    a.handOver(); // a's commit interval passed: b hands over too as the commit begins
    c.handle('30', 'c1'); // before it begins: in it, with c's offset
    await replica.idle();
    c.handle('31', 'c2'); // after it: the next one's
    c.handOver();
    await replica.idle();

    expect(broker.transactions).toEqual([
      {
        records: ['out:a1', 'out:b1', 'out:c1'],
        offsets: [{ member, partitions: ['in/0@10', 'in/1@20', 'in/2@30'] }],
        ended: 'commit',
      },
      { records: ['out:c2'], offsets: [{ member, partitions: ['in/2@31'] }], ended: 'commit' },
    ]);
    expect([a.committed, b.committed, c.committed]).toEqual([['10'], ['20'], ['30', '31']]);
  });

  it('queues no commit behind another: the next, sealed as it begins, carries every hand-over since', async () => {
    let release!: () => void;
    const endTxnAnswered = new Promise<void>((resolve) => (release = resolve));
    let committing!: () => void;
    const firstCommitUnderWay = new Promise<void>((resolve) => (committing = resolve));
    const broker = recordingKafka({ commitWaitsFor: endTxnAnswered, onCommit: committing });
    const replica = replicaOn(broker.kafka);
    const [a, b] = await fencedPair(replica);
    a.handle('10', 'a1');
    a.handOver();
    await firstCommitUnderWay;
    // Each of these asks for a commit while the first is under way.
    b.handle('20', 'b1');
    b.handOver();
    a.handle('11', 'a2');
    a.handOver();
    b.handle('21', 'b2');
    b.handOver();
    expect(replica.backlog).toBeLessThanOrEqual(3); // the first, the next, one send
    release();
    await replica.idle();

    expect(broker.transactions).toEqual([
      { records: ['out:a1'], offsets: [{ member, partitions: ['in/0@10'] }], ended: 'commit' },
      {
        records: ['out:b1', 'out:a2', 'out:b2'],
        // One offset per partition, the last handed over.
        offsets: [{ member, partitions: ['in/1@21', 'in/0@11'] }],
        ended: 'commit',
      },
    ]);
    expect([a.committed, b.committed]).toEqual([
      ['10', '11'],
      ['20', '21'],
    ]);
  });

  it('queues no send call for the records handed over as a commit seals: the commit sends them', async () => {
    let committing!: () => void;
    const commitUnderWay = new Promise<void>((resolve) => (committing = resolve));
    let release!: () => void;
    const broker = recordingKafka({
      commitWaitsFor: new Promise<void>((resolve) => (release = resolve)),
      onCommit: committing,
    });
    const replica = replicaOn(broker.kafka);
    const [a, b] = await fencedPair(replica);
    a.handleBuffered('10', 'a1');
    b.handleBuffered('20', 'b1');
    a.handOver();
    await commitUnderWay;
    expect(replica.backlog).toBe(1); // the commit alone
    release();
    await replica.idle();
    expect(broker.transactions).toEqual([
      {
        records: ['out:a1', 'out:b1'],
        offsets: [{ member, partitions: ['in/0@10', 'in/1@20'] }],
        ended: 'commit',
      },
    ]);
  });

  it('fills its requests per partition where the producer knows the partitions', async () => {
    const sent = async (partitions: number | undefined) => {
      const broker = recordingKafka({ partitions });
      const replica = replicaOn(broker.kafka);
      const task = new FakeTask(replica, 'in', 0);
      await task.share.fence();
      // 600 keyed records of 1,000 bytes: over twice what one partition takes in a request.
      const messages = Array.from({ length: 600 }, (_, i) => ({
        key: `k${i}`,
        value: `v${i}`.padEnd(1000 - 64 - `k${i}`.length, '.'),
      }));
      task.share.send(RecordCollector.of({ topic: 'out', messages }));
      await replica.idle();
      return broker.sendCalls.length;
    };
    expect(await sent(6)).toBe(1);
    expect(await sent(undefined)).toBe(3);
  });

  it('sends the records of many tasks waiting behind one request as one', async () => {
    const broker = recordingKafka();
    const replica = replicaOn(broker.kafka);
    const tasks = [0, 1, 2, 3].map((p) => new FakeTask(replica, 'in', p));
    for (const task of tasks) await task.share.fence();
    for (const [i, task] of tasks.entries()) task.handle(String(i), `v${i}`);
    tasks[0]!.handOver();
    await replica.idle();
    expect(broker.sendCalls).toEqual([1]); // one topic, one request, four tasks
    expect(broker.transactions[0]?.records).toEqual(['out:v0', 'out:v1', 'out:v2', 'out:v3']);
  });

  it('aborts for all when a task leaves writes no commit covers, and replaces every task', async () => {
    const broker = recordingKafka();
    const replica = replicaOn(broker.kafka);
    const [a, b] = await fencedPair(replica);
    a.handle('10', 'a1');
    b.handle('20', 'b1');
    await a.share.close(); // a failed: its record a1 is in the transaction without its offset

    expect(a.share.error).toBeInstanceOf(TransactionAbortedError);
    expect(b.share.error).toBeInstanceOf(TransactionAbortedError);
    expect(String((b.share.error as Error).message)).toContain('for in/0');
    expect(classifyTaskError(b.share.error)).toBe('task-migrated');
    // What b collects meanwhile is dropped, not kept to go out with its next transaction.
    const meanwhile = records('out', 'b2');
    b.share.send(meanwhile);
    expect(meanwhile.isEmpty).toBe(true);
    b.handOver(); // refused: b's writes went with the abort
    await replica.idle();
    expect(broker.transactions).toEqual([]);
    expect(b.committed).toEqual([]);

    // b rebuilds and joins the replica's next producer (InitProducerId aborts what was open).
    await b.share.fence();
    expect(broker.producers()).toBe(2);
    expect(b.share.error).toBeUndefined();
    expect(a.share.error).toBeInstanceOf(TransactionAbortedError); // until it resumes too
    b.handle('20', 'b1 again');
    b.handOver();
    await replica.idle();
    expect(broker.transactions).toEqual([
      {
        records: ['out:b1 again'],
        offsets: [{ member, partitions: ['in/1@20'] }],
        ended: 'commit',
      },
    ]);
  });

  it('aborts for all when a task with writes in the transaction does not hand over', async () => {
    const broker = recordingKafka();
    const replica = replicaOn(broker.kafka);
    const [a, b] = await fencedPair(replica);
    b.handle('20', 'b1'); // b's next step throws before it hands over: not closed yet
    b.handsOver = 'no';
    a.handle('10', 'a1');
    a.handOver();
    await replica.idle();
    expect(broker.transactions).toEqual([]); // b1 never commits without b's offset
    expect(a.share.error).toBeInstanceOf(TransactionAbortedError);
    expect(String((a.share.error as Error).message)).toContain('in/1 has writes');
    expect(a.committed).toEqual([]);
  });

  it('aborts for all when a hand-over throws halfway through the pass', async () => {
    const broker = recordingKafka();
    const replica = replicaOn(broker.kafka);
    const [a, b] = await fencedPair(replica);
    a.handle('10', 'a1');
    b.handle('20', 'b1');
    b.handsOver = 'throws';
    a.handOver();
    await replica.idle();
    expect(broker.transactions).toEqual([]);
    expect((b.share.error as Error).message).toBe('beforeCommit failed');
    expect(a.share.error).toBeInstanceOf(TransactionAbortedError);
    // The next commit does not carry what was handed over before the throw.
    await a.share.fence();
    a.handle('11', 'a2');
    a.handOver();
    await replica.idle();
    expect(broker.transactions).toEqual([
      { records: ['out:a2'], offsets: [{ member, partitions: ['in/0@11'] }], ended: 'commit' },
    ]);
  });

  it('on reopening, asks each group its last transactions sent offsets to whether a commit is pending', async () => {
    // A pending one of the replica's own (a marker a broker dropped) would hold every task of
    // those partitions (replica-sweep.int-spec.ts ends it on the real broker).
    const asked: unknown[] = [];
    const admin = {
      ...settledAdmin,
      fetchOffsets: async (request: unknown) => {
        asked.push(request);
        return [];
      },
    } as unknown as Admin;
    const broker = recordingKafka();
    const replica = new ReplicaTransaction({
      kafka: broker.kafka,
      admin,
      id: 'g.replica/r0',
      logger: pino({ level: 'silent' }),
      transactionTimeoutMs: 10_000,
    });
    const [a, b] = await fencedPair(replica);
    a.handle('10', 'a1');
    b.handle('20', 'b1');
    a.handOver();
    await replica.idle();
    const afterCommit = asked.length; // the check after the commit asks too
    a.handle('11', 'a2');
    await a.share.close(); // writes no commit covers: the transaction is aborted

    await b.share.fence(); // the producer is opened anew
    expect(broker.producers()).toBe(2);
    expect(asked.slice(afterCommit)).toEqual([
      { groupId: 'g', topics: [{ topic: 'in', partitions: [0, 1] }], requireStable: true },
    ]);
  });

  it("fails every task with the broker's refusal of the offset commit", async () => {
    const refusal = Object.assign(new Error('The generation is not valid'), {
      type: 'ILLEGAL_GENERATION',
    });
    const broker = recordingKafka({ failOffsets: refusal });
    const replica = replicaOn(broker.kafka);
    const [a, b] = await fencedPair(replica);
    a.handle('10', 'a1');
    b.handle('20', 'b1');
    a.handOver();
    await replica.idle();
    expect(a.share.error).toBe(refusal);
    expect(b.share.error).toBe(refusal);
    expect(classifyTaskError(a.share.error)).toBe('task-migrated');
    expect(broker.transactions.filter((t) => t.ended === 'commit')).toEqual([]);
    expect([a.committed, b.committed]).toEqual([[], []]);
  });
});
