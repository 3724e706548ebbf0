// The replica's tasks, one per assigned partition: it opens them when the group assigns their
// partitions (restoring state before records arrive), closes them when the group takes them
// away, commits and suspends every task when a rebalance starts (before the consumer joins
// again, while the ending generation's commits are still accepted) or the consumer leaves,
// resumes those still assigned under the new generation, which their commits then name, and
// replaces a task that fails. A failure is judged by its kind (task-errors.ts): a fenced task
// is handed over and opened again after a short pause, any other failure backs its partition
// off (reopen-schedule.ts) so that one bad partition never spins and never stops the others.
//
// A partition is paused while its task restores and read again from where the task resumes
// (a seek): a batch fetched before that is dropped, so the consumer never waits on a restore
// (kafkajs would stop heartbeating) and no record is processed from a stale position.
import type { ConsumerGroupMetadata, EachBatchPayload } from 'kafkajs';
import type { Logger } from 'pino';

import type { GroupHandler, TopicPartition } from '../group/group-consumer';
import type { PartitionMemory } from './committed-offset';
import { ReopenSchedule } from './reopen-schedule';
import type { Task } from './task';
import { classifyTaskError, TaskMigratedError } from './task-errors';
import { TransactionJournal } from './transaction-journal';

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
  /** A task failed for a reason other than a fence: a pipeline of it may have to be held. */
  onTaskFailed?(error: unknown): void;
}

export class TaskManager implements GroupHandler {
  private readonly tasks = new Map<string, Task>();
  /** Tasks whose resume is under way: their partitions' batches are dropped until it ends. */
  private readonly restoring = new Set<Task>();
  private assigned = new Map<string, TopicPartition>();
  /** The generation and member id of the last assignment: what tasks resumed since commit as. */
  private member: ConsumerGroupMetadata | undefined;
  private readonly memory = new Map<string, PartitionMemory>();
  private readonly reopening = new ReopenSchedule();
  private readonly ticking = new Set<Task>();
  /** Between a rebalance's start and its assignment nothing is reopened: it may not be ours. */
  private rebalancing = false;

  constructor(private readonly deps: TaskManagerDependencies) {}

  get size(): number {
    return this.tasks.size;
  }

  list(): Task[] {
    return [...this.tasks.values()];
  }

  onAssignment(assigned: TopicPartition[], member: ConsumerGroupMetadata): void {
    this.rebalancing = false;
    this.member = member;
    this.assigned = new Map(assigned.map((tp) => [keyOf(tp), tp]));
    const revoked = [...new Set([...this.tasks.keys(), ...this.reopening.keys()])].filter(
      (key) => !this.assigned.has(key),
    );
    this.deps.logger.info(
      { assigned: this.assigned.size, revoked: revoked.length },
      'partitions assigned',
    );
    for (const key of revoked) void this.revoke(key);
    for (const [key, tp] of this.assigned) {
      if (this.reopening.has(key)) continue; // backing off: its timer opens it
      const known = this.tasks.get(key);
      if (known) {
        // Still ours, but the consumer reads from the group's offset again, and the task's
        // commits must name the new generation: check, then go on.
        void known.suspend();
        this.start(key, tp, known);
      } else {
        this.open(key, tp);
      }
    }
  }

  /**
   * Commits every running task under the generation that is ending and suspends it; nothing
   * ticks until the assignment, which resumes the tasks that stay under the new generation, so
   * no commit names the ended one (the coordinator would refuse it). The consumer sends no
   * heartbeat meanwhile, so this waits for commits only: not for a task still restoring (it has
   * nothing to commit) nor for the close of one whose commit failed (a close may hang).
   */
  async beforeRejoin(): Promise<void> {
    this.rebalancing = true;
    const running = [...this.tasks].filter(([, task]) => !this.restoring.has(task));
    await Promise.all(
      running.map(([key, task]) =>
        task.commitAndSuspend().then(
          () => this.resumeIfLeftSuspended(key, task),
          (error: unknown) => {
            void this.commitFailed(key, task, error, 'a rebalance is starting');
          },
        ),
      ),
    );
  }

  /**
   * kafkajs fetches again with no assignment since the rebalance began: its join failed (a
   * coordinator moving) and it reads on as the member it was, until it hears of the next.
   */
  onFetching(): void {
    if (this.rebalancing) this.readOnWithoutRejoin();
  }

  async onBatch({ batch, isStale, heartbeat }: EachBatchPayload): Promise<void> {
    const key = keyOf(batch);
    const tp = this.assigned.get(key);
    if (!tp) return;
    const task = this.tasks.get(key);
    if (!task) {
      // Assigned, with no task and none on its way (its last one failed while it was not
      // ours to reopen): open one, which reads again from the committed offset.
      if (!this.reopening.has(key)) this.open(key, tp);
      return;
    }
    // Restoring (the partition is paused, this was fetched before), or fetched before the
    // task's seek: the consumer reads these records again from where the task resumes.
    if (this.restoring.has(task) || isStale()) return;
    try {
      if ((await task.processBatch(batch, task.generation)) === 'reposition') {
        this.reposition(key, tp, task);
        return;
      }
    } catch (error) {
      await this.fail(key, tp, task, error);
      return;
    }
    this.reopening.succeeded(key);
    this.deps.onBatchDone?.(batch.topic, batch.messages.length);
    // A rebalance heard here is not the task's failure: kafkajs calls beforeRejoin, which
    // commits what is in hand, and rejoins.
    await heartbeat();
  }

  async beforeLeave(): Promise<void> {
    await Promise.all(
      [...this.tasks].map(([key, task]) =>
        task
          .commitAndSuspend()
          .catch((error: unknown) =>
            this.commitFailed(key, task, error, 'the consumer is leaving the group'),
          ),
      ),
    );
  }

  /**
   * The wall clock for every running task: idle flushes, and commits on their interval. A task
   * still ticking from last time, or restoring, is skipped rather than waited for; during a
   * rebalance, every task is (a commit then would name the ending generation).
   */
  async tick(now: number): Promise<void> {
    if (this.rebalancing) return;
    await Promise.all(
      [...this.tasks].map(async ([key, task]) => {
        if (task.state !== 'running' || this.ticking.has(task)) return;
        this.ticking.add(task);
        try {
          if ((await task.tick(now)) === 'reposition') {
            const tp = this.assigned.get(key);
            if (tp) this.reposition(key, tp, task);
          }
        } catch (error) {
          const tp = this.assigned.get(key);
          if (tp) await this.fail(key, tp, task, error);
          else await this.closeTask(key, task);
        } finally {
          this.ticking.delete(task);
        }
      }),
    );
  }

  /** A task could not commit on hand-over: handled as its failure. */
  private async commitFailed(key: string, task: Task, error: unknown, reason: string) {
    this.deps.logger.warn({ err: error, task: key, reason }, 'commit on hand-over failed');
    const tp = this.assigned.get(key);
    if (tp) await this.fail(key, tp, task, error);
    else await this.closeTask(key, task);
  }

  /**
   * A commit before the rebalance that the consumer stopped waiting for (settledWithin in
   * group-consumer.ts) was answered after the rebalance ended. Kept by an assignment, the task
   * is resuming already; after a failed join (readOnWithoutRejoin ran while it was still
   * committing) nothing else would resume it.
   */
  private resumeIfLeftSuspended(key: string, task: Task): void {
    const tp = this.assigned.get(key);
    if (this.rebalancing || !tp || this.tasks.get(key) !== task) return;
    if (task.state === 'suspended' && !this.restoring.has(task)) this.start(key, tp, task);
  }

  /**
   * The rebalance ended without an assignment: the member kept its generation and partitions.
   * The tasks suspended for it resume (still under that generation), and a partition whose
   * task failed meanwhile, left paused for the assignment, is opened again.
   */
  private readOnWithoutRejoin(): void {
    this.rebalancing = false;
    this.deps.logger.warn('the consumer reads on without rejoining; resuming its tasks');
    for (const [key, tp] of this.assigned) {
      const task = this.tasks.get(key);
      if (task?.state === 'suspended' && !this.restoring.has(task)) this.start(key, tp, task);
      else if (!task && !this.reopening.has(key)) this.open(key, tp);
    }
  }

  async closeAll(): Promise<void> {
    this.reopening.forgetAll();
    const keys = [...this.tasks.keys()];
    this.assigned.clear();
    await Promise.all(keys.map((key) => this.revoke(key)));
  }

  private async revoke(key: string): Promise<void> {
    this.reopening.forget(key);
    this.memory.delete(key);
    const task = this.tasks.get(key);
    if (!task) return;
    // A task revoked by a rebalance was suspended before it (nothing left to commit). One still
    // running (kafkajs replaced a crashed consumer, the replica stops) commits what it has:
    // safe, as a commit under a generation that has ended is refused, and one whose new owner
    // has started is fenced; otherwise the new owner sees it.
    await task.commitNow().catch(() => undefined);
    await this.closeTask(key, task);
  }

  private async closeTask(key: string, task: Task): Promise<void> {
    if (this.tasks.get(key) === task) this.tasks.delete(key);
    this.restoring.delete(task);
    await task.close().catch(() => undefined);
  }

  private open(key: string, tp: TopicPartition): void {
    let memory = this.memory.get(key);
    if (!memory) {
      memory = { acknowledged: undefined, journal: new TransactionJournal() };
      this.memory.set(key, memory);
    }
    const task = this.deps.createTask(tp.topic, tp.partition, memory);
    if (!task) return;
    this.tasks.set(key, task);
    this.start(key, tp, task);
  }

  /** The task committed a move of its position: it is resumed to read on from there. */
  private reposition(key: string, tp: TopicPartition, task: Task): void {
    // Paused and marked at once: a batch delivered meanwhile is dropped, not processed.
    this.deps.consumer.pause(tp);
    this.restoring.add(task);
    void task.suspend().then(() => {
      if (this.tasks.get(key) === task && this.assigned.has(key)) this.start(key, tp, task);
      else this.restoring.delete(task);
    });
  }

  /** Resumes `task` with its partition paused, then reads on from where it resumed. */
  private start(key: string, tp: TopicPartition, task: Task): void {
    this.deps.consumer.pause(tp);
    this.restoring.add(task);
    void task
      .resume(this.member)
      .then((position) => {
        if (this.tasks.get(key) !== task || !this.assigned.has(key))
          throw new TaskMigratedError(`${key} was revoked while its task was opening`);
        this.deps.consumer.seek(tp, position);
        this.restoring.delete(task);
        this.deps.consumer.resume(tp);
      })
      .catch((error: unknown) => this.fail(key, tp, task, error));
  }

  /** Closes a failed task and, while its partition is ours, opens another after a pause. */
  private async fail(key: string, tp: TopicPartition, task: Task, error: unknown): Promise<void> {
    const current = this.tasks.get(key) === task;
    await this.closeTask(key, task);
    if (!current) return; // already replaced or revoked
    const kind = classifyTaskError(error);
    if (!this.assigned.has(key)) {
      this.deps.logger.info({ err: error, task: key, kind }, 'a revoked task stopped');
      return;
    }
    if (kind !== 'task-migrated') this.deps.onTaskFailed?.(error);
    // A batch or an assignment that came while the task closed has opened another already:
    // that task owns the partition's pause and resume, and pausing here would stop it for good.
    // The partition is not paused before the close: a close may hang (a broker restart, the
    // likely cause of the reverted 76af4e7's failure) and must not hold the partition meanwhile.
    if (this.tasks.has(key)) {
      const attempt = kind === 'task-migrated' ? undefined : this.reopening.count(key);
      this.deps.logger.info({ err: error, task: key, kind, attempt }, 'a failed task was replaced');
      return;
    }
    this.deps.consumer.pause(tp);
    // The assignment that ends the rebalance opens it, if it is still ours.
    if (this.rebalancing) return;
    const { attempt, retryInMs } = this.reopening.schedule(key, kind, () => {
      const assigned = this.assigned.get(key);
      if (assigned && !this.rebalancing && !this.tasks.has(key)) this.open(key, assigned);
    });
    const fields = { err: error, task: key, kind, attempt, retry_in_ms: retryInMs };
    if (kind === 'task-migrated')
      this.deps.logger.warn(fields, 'the task was fenced; handed over, opened again shortly');
    else
      this.deps.logger.error(
        fields,
        'the task failed; its partition restarts from its last commit',
      );
  }
}

function keyOf({ topic, partition }: TopicPartition): string {
  return `${topic}/${partition}`;
}
