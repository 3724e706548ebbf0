// The replica's tasks, one per assigned partition: it opens them when the group assigns their
// partitions (restoring state before records arrive), closes them when the group takes them
// away, commits every task when a rebalance starts or the consumer leaves, and replaces a task
// that fails. A failure is judged by its kind (task-errors.ts): a fenced task is handed over
// and opened again after a short pause, any other failure backs its partition off (0.25 s
// doubling to 60 s) so that one bad partition never spins and never stops the others.
import type { EachBatchPayload } from 'kafkajs';
import type { Logger } from 'pino';

import type { GroupHandler, TopicPartition } from '../group/group-consumer';
import { backoffDelay, FAILURE_BACKOFF } from '../support/backoff';
import type { PartitionMemory, Task } from './task';
import { classifyTaskError, TaskMigratedError } from './task-errors';

/** How a task manager reaches the consumer and makes tasks. */
export interface TaskManagerDependencies {
  logger: Logger;
  consumer: {
    pause(partition: TopicPartition): void;
    resume(partition: TopicPartition): void;
    seek(partition: TopicPartition, offset: string): void;
  };
  /** A task for the partition, or undefined when no pipeline reads it (any more). */
  createTask(topic: string, partition: number, memory: PartitionMemory): Task | undefined;
  /** After each batch handled: for metrics. */
  onBatchDone?(topic: string, records: number): void;
}

/** A fenced task's partition is opened again after this pause (not a growing back-off). */
const MIGRATED_PAUSE_MS = 1_000;

export class TaskManager implements GroupHandler {
  private readonly tasks = new Map<string, Task>();
  /** The latest resume of each task: batches wait for it. */
  private readonly opening = new Map<string, Promise<Task | undefined>>();
  private assigned = new Set<string>();
  private readonly memory = new Map<string, PartitionMemory>();
  private readonly failures = new Map<string, number>();
  private readonly reopenTimers = new Map<string, NodeJS.Timeout>();
  private ticking = false;

  constructor(private readonly deps: TaskManagerDependencies) {}

  get size(): number {
    return this.tasks.size;
  }

  list(): Task[] {
    return [...this.tasks.values()];
  }

  onAssignment(assigned: TopicPartition[]): void {
    const keys = new Map(assigned.map((tp) => [keyOf(tp), tp]));
    this.assigned = new Set(keys.keys());
    const revoked = [...new Set([...this.tasks.keys(), ...this.reopenTimers.keys()])].filter(
      (key) => !this.assigned.has(key),
    );
    this.deps.logger.info({ assigned: keys.size, revoked: revoked.length }, 'partitions assigned');
    for (const key of revoked) void this.revoke(key);
    for (const [key, tp] of keys) {
      if (this.reopenTimers.has(key)) continue; // backing off: its timer opens it
      const known = this.tasks.get(key);
      if (known) {
        // Still ours, but the consumer reads from the group's offset again: check, then go on.
        void known.suspend();
        this.start(key, tp, known);
      } else {
        this.open(key, tp);
      }
    }
  }

  onRebalancing(): void {
    void this.commitAll('a rebalance is starting');
  }

  async onBatch({ batch, isStale, heartbeat }: EachBatchPayload): Promise<void> {
    const tp = { topic: batch.topic, partition: batch.partition };
    const key = keyOf(tp);
    if (!this.assigned.has(key)) return;
    const task = await this.opening.get(key);
    // No task (failing, backing off: it seeks when it opens again), or a batch fetched before
    // the task's seek: kafkajs fetches again from where the task said.
    if (!task || this.tasks.get(key) !== task || isStale()) return;
    try {
      await task.processBatch(batch);
      this.failures.delete(key);
      this.deps.onBatchDone?.(batch.topic, batch.messages.length);
      await heartbeat();
    } catch (error) {
      await this.fail(key, tp, task, error);
    }
  }

  async beforeLeave(): Promise<void> {
    await this.commitAll('the consumer is leaving the group');
    await Promise.all(this.list().map((task) => task.suspend()));
  }

  /** The wall clock for every running task: idle flushes, and commits on their interval. */
  async tick(now: number): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      await Promise.all(
        [...this.tasks].map(([key, task]) =>
          task.tick(now).catch((error: unknown) => this.fail(key, parseKey(key), task, error)),
        ),
      );
    } finally {
      this.ticking = false;
    }
  }

  /** Commits every running task; one that cannot is closed (the group will reassign). */
  async commitAll(reason: string): Promise<void> {
    await Promise.all(
      [...this.tasks].map(([key, task]) =>
        task.commitNow().catch(async (error: unknown) => {
          this.deps.logger.warn({ err: error, task: key, reason }, 'commit on hand-over failed');
          if (this.tasks.get(key) === task) this.tasks.delete(key);
          await task.close();
        }),
      ),
    );
  }

  async closeAll(): Promise<void> {
    for (const timer of this.reopenTimers.values()) clearTimeout(timer);
    this.reopenTimers.clear();
    this.assigned.clear();
    await Promise.all([...this.tasks.keys()].map((key) => this.revoke(key)));
  }

  private async revoke(key: string): Promise<void> {
    const timer = this.reopenTimers.get(key);
    if (timer) clearTimeout(timer);
    this.reopenTimers.delete(key);
    this.memory.delete(key);
    this.failures.delete(key);
    const task = this.tasks.get(key);
    if (!task) return;
    this.tasks.delete(key);
    // Committing a revoked partition is safe: if its new owner already started, this producer
    // is fenced and the commit fails; otherwise the new owner sees it.
    await task.commitNow().catch(() => undefined);
    await task.close();
  }

  private open(key: string, tp: TopicPartition): void {
    let memory = this.memory.get(key);
    if (!memory) {
      memory = { acknowledged: undefined };
      this.memory.set(key, memory);
    }
    const task = this.deps.createTask(tp.topic, tp.partition, memory);
    if (!task) return;
    this.tasks.set(key, task);
    this.start(key, tp, task);
  }

  /** Resumes `task`, then points the consumer at the offset it resumes from. */
  private start(key: string, tp: TopicPartition, task: Task): void {
    const opening = task
      .resume()
      .then((position) => {
        if (this.tasks.get(key) !== task || !this.assigned.has(key))
          throw new TaskMigratedError(`${key} was revoked while its task was opening`);
        this.deps.consumer.seek(tp, position);
        this.deps.consumer.resume(tp);
        return task;
      })
      .catch(async (error: unknown) => {
        await this.fail(key, tp, task, error);
        return undefined;
      });
    this.opening.set(key, opening);
  }

  private async fail(key: string, tp: TopicPartition, task: Task, error: unknown): Promise<void> {
    if (this.tasks.get(key) !== task) {
      await task.close();
      return; // already replaced or revoked
    }
    this.tasks.delete(key);
    await task.close();
    const kind = classifyTaskError(error);
    if (!this.assigned.has(key)) {
      this.deps.logger.info({ err: error, task: key, kind }, 'a revoked task stopped');
      return;
    }
    this.deps.consumer.pause(tp);
    const attempt = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, attempt);
    const retryInMs =
      kind === 'task-migrated' ? MIGRATED_PAUSE_MS : backoffDelay(attempt, FAILURE_BACKOFF);
    const fields = { err: error, task: key, kind, attempt, retry_in_ms: retryInMs };
    if (kind === 'task-migrated')
      this.deps.logger.warn(fields, 'the task was fenced; handed over, opened again shortly');
    else
      this.deps.logger.error(
        fields,
        'the task failed; its partition restarts from its last commit',
      );
    this.reopenTimers.set(
      key,
      setTimeout(() => {
        this.reopenTimers.delete(key);
        if (this.assigned.has(key) && !this.tasks.has(key)) this.open(key, tp);
      }, retryInMs),
    );
  }
}

function keyOf({ topic, partition }: TopicPartition): string {
  return `${topic}/${partition}`;
}

function parseKey(key: string): TopicPartition {
  const at = key.lastIndexOf('/');
  return { topic: key.slice(0, at), partition: Number(key.slice(at + 1)) };
}
