import type { EachBatchPayload } from 'kafkajs';
import pino from 'pino';

import type { TopicPartition } from '../group/group-consumer';
import type { Task } from './task';
import { TaskManager } from './task-manager';

/** A deferred promise: the test decides when it settles. */
function deferred<T>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** The consumer as the task manager sees it: which partitions are paused, and the seeks. */
class FakeConsumer {
  readonly paused = new Set<string>();
  readonly seeks: string[] = [];
  pause({ topic, partition }: TopicPartition): void {
    this.paused.add(`${topic}/${partition}`);
  }
  resume({ topic, partition }: TopicPartition): void {
    this.paused.delete(`${topic}/${partition}`);
  }
  seek({ topic, partition }: TopicPartition, offset: string): void {
    this.seeks.push(`${topic}/${partition}@${offset}`);
  }
}

/** A task whose batch can fail and whose close the test holds open. */
class FakeTask {
  state = 'running';
  generation = 0;
  closed = false;
  failNextBatch: Error | undefined;
  failNextTick: Error | undefined;
  readonly closing = deferred<void>();
  constructor(readonly name: string) {}
  readonly resumedAs: unknown[] = [];
  /** As a task's serial queue has it: a resume runs after the commit in hand. */
  async resume(member: unknown): Promise<string> {
    await this.committing?.promise;
    this.resumedAs.push(member);
    this.state = 'running';
    return '10';
  }
  batches = 0;
  ticks = 0;
  async processBatch(): Promise<undefined> {
    this.batches += 1;
    const error = this.failNextBatch;
    this.failNextBatch = undefined;
    if (error) throw error;
    return undefined;
  }
  suspend(): Promise<void> {
    return Promise.resolve();
  }
  commitNow(): Promise<void> {
    return Promise.resolve();
  }
  /** Resolved by the test: the commit that a rebalance waits for. */
  committing: ReturnType<typeof deferred<void>> | undefined;
  async commitAndSuspend(): Promise<void> {
    await this.committing?.promise;
    this.state = 'suspended';
  }
  async tick(): Promise<undefined> {
    this.ticks += 1;
    const error = this.failNextTick;
    this.failNextTick = undefined;
    if (error) throw error;
    return undefined;
  }
  async close(): Promise<void> {
    await this.closing.promise;
    this.closed = true;
  }
}

const tp: TopicPartition = { topic: 'orders', partition: 0 };

function batchOf(): EachBatchPayload {
  return {
    batch: { topic: tp.topic, partition: tp.partition, messages: [] },
    isStale: () => false,
    heartbeat: () => Promise.resolve(),
  } as unknown as EachBatchPayload;
}

/** The member's first generation, and the one a rebalance begins. */
const generationOne = { generationId: 1, memberId: 'm-1' };
const generationTwo = { generationId: 2, memberId: 'm-1' };

const settle = (ms = 0): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('TaskManager', () => {
  let consumer: FakeConsumer;
  let created: FakeTask[];
  let manager: TaskManager;
  let failures: unknown[];

  beforeEach(async () => {
    consumer = new FakeConsumer();
    created = [];
    failures = [];
    manager = new TaskManager({
      logger: pino({ level: 'silent' }),
      consumer,
      onTaskFailed: (error) => failures.push(error),
      createTask: () => {
        const task = new FakeTask(`task-${created.length}`);
        created.push(task);
        return task as unknown as Task;
      },
    });
    manager.onAssignment([tp], generationOne);
    await settle();
  });

  afterEach(async () => {
    for (const task of created) task.closing.resolve();
    await manager.closeAll();
  });

  it('reads a freshly assigned partition once its task resumed', () => {
    expect(created).toHaveLength(1);
    expect(consumer.paused.has('orders/0')).toBe(false);
    expect(consumer.seeks).toEqual(['orders/0@10']);
  });

  it("pauses a failed task's partition once it closed, and reopens it after a back-off", async () => {
    const [first] = created;
    first.failNextBatch = new Error('boom');
    const failing = manager.onBatch(batchOf());
    await settle();
    first.closing.resolve();
    await failing;
    expect(first.closed).toBe(true);
    expect(manager.size).toBe(0);
    expect(consumer.paused.has('orders/0')).toBe(true);

    await settle(400); // the first back-off is 0.25 s
    expect(created).toHaveLength(2);
    expect(manager.size).toBe(1);
    expect(consumer.paused.has('orders/0')).toBe(false);
  });

  // kafkajs hands a partition no batch while its last one is in hand, so a failure that a batch
  // can race is one from the wall clock (a tick, or a commit on hand-over).
  it('leaves the partition read by a task a batch opened while the failed one closed', async () => {
    const [first] = created;
    first.failNextTick = new Error('boom');
    const failing = manager.tick(Date.now());
    await settle();
    expect(manager.size).toBe(0);

    // Fetched before the failure: delivered while the failed task is still closing.
    await manager.onBatch(batchOf());
    await settle();
    expect(created).toHaveLength(2);
    expect(consumer.paused.has('orders/0')).toBe(false);

    first.closing.resolve();
    await failing;
    await settle(400);
    // Before, the late pause stopped the second task's partition for good and nothing reopened it.
    expect(consumer.paused.has('orders/0')).toBe(false);
    expect(created).toHaveLength(2);
    expect(manager.size).toBe(1);
    expect(failures).toHaveLength(1);
  });

  it('backs off further from a failure whose task a batch replaced', async () => {
    const [first] = created;
    first.failNextTick = new Error('boom');
    const failing = manager.tick(Date.now());
    await settle();
    await manager.onBatch(batchOf());
    await settle();
    first.closing.resolve();
    await failing;

    // The second failure in a row waits 0.5 s, not the first failure's 0.25 s.
    const second = created[1]!;
    second.failNextTick = new Error('boom again');
    second.closing.resolve();
    await manager.tick(Date.now());
    expect(consumer.paused.has('orders/0')).toBe(true);
    await settle(350);
    expect(created).toHaveLength(2);
    await settle(300);
    expect(created).toHaveLength(3);
    expect(consumer.paused.has('orders/0')).toBe(false);
  });

  it("reads on through a new task while a failed task's close never ends", async () => {
    const [first] = created;
    first.failNextTick = new Error('boom');
    void manager.tick(Date.now());
    await settle();
    expect(consumer.paused.has('orders/0')).toBe(false);

    await manager.onBatch(batchOf());
    await settle();
    expect(created).toHaveLength(2);
    expect(manager.size).toBe(1);
    expect(consumer.paused.has('orders/0')).toBe(false);
    expect(first.closed).toBe(false);
  });

  it('leaves the partition to a task an assignment opened while the failed one closed', async () => {
    const [first] = created;
    first.failNextBatch = new Error('boom');
    const failing = manager.onBatch(batchOf());
    void manager.beforeRejoin();
    await settle();
    manager.onAssignment([tp], generationTwo);
    await settle();
    expect(created).toHaveLength(2);

    first.closing.resolve();
    await failing;
    await settle(400);
    expect(created).toHaveLength(2);
    expect(manager.size).toBe(1);
    expect(consumer.paused.has('orders/0')).toBe(false);
  });

  it('commits and suspends every task before the consumer rejoins, and resumes it as the new generation', async () => {
    const [task] = created;
    expect(task!.resumedAs).toEqual([generationOne]);
    task!.committing = deferred<void>();
    let rejoined = false;
    const rejoin = manager.beforeRejoin().then(() => (rejoined = true));
    await settle();
    // The consumer waits for the commit under the ending generation.
    expect(rejoined).toBe(false);
    task!.committing.resolve();
    await rejoin;
    expect(task!.state).toBe('suspended');

    manager.onAssignment([tp], generationTwo);
    await settle();
    expect(created).toHaveLength(1);
    expect(task!.resumedAs).toEqual([generationOne, generationTwo]);
    expect(task!.state).toBe('running');
  });

  it('ticks no task during a rebalance', async () => {
    const [task] = created;
    await manager.tick(Date.now());
    expect(task!.ticks).toBe(1);
    await manager.beforeRejoin();
    task!.state = 'running'; // even one the rebalance did not suspend
    await manager.tick(Date.now());
    expect(task!.ticks).toBe(1);
    manager.onAssignment([tp], generationTwo);
    await settle();
    await manager.tick(Date.now());
    expect(task!.ticks).toBe(2);
  });

  it('resumes its suspended tasks when kafkajs fetches without rejoining (a failed join)', async () => {
    const [task] = created;
    await manager.beforeRejoin();
    expect(task!.state).toBe('suspended');

    // A fetch with no assignment since the rebalance began: the member kept its generation.
    manager.onFetching();
    await manager.onBatch(batchOf());
    await settle();
    expect(task!.batches).toBe(0); // fetched from before the resume's seek: read again
    expect(task!.resumedAs).toEqual([generationOne, generationOne]);
    expect(task!.state).toBe('running');
    expect(consumer.seeks).toEqual(['orders/0@10', 'orders/0@10']);
    await manager.onBatch(batchOf());
    expect(task!.batches).toBe(1);
  });

  it('resumes a task whose commit was answered after kafkajs read on without rejoining', async () => {
    const [task] = created;
    task!.committing = deferred<void>();
    // The consumer stopped waiting for the commit, its join failed, and it fetches again.
    const commits = manager.beforeRejoin();
    await settle();
    manager.onFetching();
    await settle();
    expect(task!.resumedAs).toEqual([generationOne]); // still committing: not resumed yet

    task!.committing.resolve();
    await commits;
    await settle();
    expect(task!.resumedAs).toEqual([generationOne, generationOne]);
    expect(task!.state).toBe('running');
    expect(consumer.paused.has('orders/0')).toBe(false);
  });

  it('leaves a task whose commit was answered late to the assignment that keeps it', async () => {
    const [task] = created;
    task!.committing = deferred<void>();
    const commits = manager.beforeRejoin();
    await settle();
    manager.onAssignment([tp], generationTwo);
    task!.committing.resolve();
    await commits;
    await settle();
    // Resumed once, by the assignment, under the new generation.
    expect(task!.resumedAs).toEqual([generationOne, generationTwo]);
  });
});
