// What the group committed for a task's partition, read on the broker's answers (steps 2 and
// the hanging case of task.ts): with require_stable, retried while a commit is pending, never
// below this replica's own acknowledged commit, and, after the fence, a commit of the task's
// own that still hangs ended by a marker of its producer id as its transaction was decided.
import type { Admin, Message, TopicMessages } from 'kafkajs';
import type { Logger } from 'pino';

import {
  endWithMarker,
  fetchStableOffset,
  fetchTopicOffsets,
  findPendingOffsetCommits,
  isUnstableOffsetCommit,
  retryBroker,
} from '@sluice/kafka';
import type { CommittedOffset, OpenTransaction } from '@sluice/kafka';

import {
  abortedAcknowledgedWrites,
  decideHangingCommit,
  decidingTransaction,
} from './hanging-commit';
import type { SpanOutcome } from './hanging-commit';
import { HangingCommitError } from './open-transactions';
import { spanOutcomes } from './span-outcomes';
import type { TaskProducer } from './task-producer';
import type { TransactionJournal, TransactionWrites } from './transaction-journal';

/**
 * What the replica remembers of a partition across its tasks while it stays assigned: the
 * offset of the last commit a task of it had acknowledged, below which none may resume.
 */
export interface PartitionMemory {
  acknowledged: string | undefined;
  /** Its tasks' last transactions, for ending one left open after the fence. */
  journal: TransactionJournal;
}

/**
 * How long a kept task waits on a pending commit of its partition before it fences instead
 * (10 ms doubling: about 2.5 s). A commit's markers land within milliseconds; one still pending
 * then hangs (README, Known issues), and only the fence and what follows settle it. The fence
 * itself waits, on the broker's answers, for any transaction still completing, so fencing
 * sooner costs a rebuild of the state, never correctness.
 */
const KEPT_TASK_UNSTABLE_ATTEMPTS = 8;

/**
 * The task is about to commit a move of its position to `target`: a move back lowers the floor
 * first. Should the commit's answer be lost, the group then holds either the earlier commit or
 * `target`, both at or above the new floor; the old floor would hold every resume behind it
 * for good (CommitBehindError).
 */
export function lowerFloorForMove(memory: PartitionMemory, target: string): void {
  const floor = memory.acknowledged;
  if (floor !== undefined && BigInt(target) < BigInt(floor)) memory.acknowledged = target;
}

export class CommitBehindError extends Error {
  override readonly name = 'CommitBehindError';
  readonly retriable = true;
}

/** The partitions a task may have written, each as topic and partition numbers. */
export type WrittenPartitions = Array<{ topic: string; partitions: number[] }>;

/** A key no state, result or lookup uses: a restore reads it as the deletion of nothing. */
const SWEEP_KEY = '~sluice-sweep';

/** One record to each partition, for a transaction that only has to write a marker there. */
function sweepRecords(partitions: WrittenPartitions): TopicMessages[] {
  return partitions.map(({ topic, partitions: indexes }) => ({
    topic,
    messages: indexes.map((partition): Message => ({ partition, key: SWEEP_KEY, value: null })),
  }));
}

export interface CommittedOffsetSource {
  admin: Admin;
  consumerGroup: string;
  topic: string;
  partition: number;
  logger: Logger;
  memory: PartitionMemory;
  /**
   * The task's own producer (exactly_once), whose id's hanging transactions the task can end;
   * `undefined` under exactly_once_v2, where the id is the replica's.
   */
  producer: TaskProducer | undefined;
  /** Every partition the task may have written: what a hanging sweep covers. */
  writtenPartitions: () => Promise<WrittenPartitions>;
}

export class CommittedOffsetReader {
  private readonly key: string;

  constructor(private readonly source: CommittedOffsetSource) {
    this.key = `${source.topic}/${source.partition}`;
  }

  /**
   * A kept task's committed offset, or 'unsettled' when a commit of the partition stays pending
   * through KEPT_TASK_UNSTABLE_ATTEMPTS: only the fence (and what follows it) can tell why.
   */
  async readIfSettles(): Promise<CommittedOffset | undefined | 'unsettled'> {
    try {
      return await this.read(KEPT_TASK_UNSTABLE_ATTEMPTS);
    } catch (error) {
      if (!isUnstableOffsetCommit(error)) throw error;
      this.source.logger.warn(
        'a commit of this partition stays pending; fencing to settle it, and rebuilding',
      );
      return 'unsettled';
    }
  }

  /**
   * The group's committed offset once no pending transaction can change it, and never below
   * this partition's last acknowledged commit on this replica (waited for, on the broker's
   * answers, should it read behind: that would replay committed work).
   */
  read(unstableAttempts?: number): Promise<CommittedOffset | undefined> {
    const { admin, consumerGroup, topic, partition, logger, memory } = this.source;
    const ours = memory.acknowledged;
    return retryBroker(
      async () => {
        const committed = await fetchStableOffset(
          admin,
          consumerGroup,
          topic,
          partition,
          (attempt) =>
            logger.info(
              { attempt },
              'a commit of this partition is pending (UNSTABLE_OFFSET_COMMIT); waiting for its markers',
            ),
          true,
          unstableAttempts,
        );
        if (
          ours !== undefined &&
          (committed === undefined || BigInt(committed.offset) < BigInt(ours))
        ) {
          throw new CommitBehindError(
            `the group's committed offset ${committed?.offset ?? 'none'} is behind this task's own acknowledged commit ${ours}`,
          );
        }
        return committed;
      },
      {
        shouldRetry: (error) => error instanceof CommitBehindError,
        onRetry: (error, attempt) =>
          logger.warn({ err: error, attempt }, 'the committed offset reads behind; waiting'),
      },
    );
  }

  /**
   * After the fence, the coordinator holds every transaction of this id complete, and their
   * markers written: an offset commit of this partition still pending is one whose marker never
   * reached the offsets partition (a hanging transaction, as a single-node broker's controlled
   * shutdown leaves one: README, Known issues). Only a marker of this producer id ends it, as
   * that transaction was decided (hanging-commit.ts): committed, by a COMMIT marker written
   * there (WriteTxnMarkers, one request: nothing half done can abort it); aborted, by a
   * transaction of this id writing to every partition the task may have written to, the offset
   * included, and then aborting (the state is rebuilt and the work redone from the offset
   * committed before it). Undecidable: the task fails, naming kafka-transactions.
   */
  async readAfterFence(): Promise<CommittedOffset | undefined> {
    const { admin, consumerGroup, topic, partition, logger, memory, producer } = this.source;
    if (!producer)
      throw new Error(`${this.key}: only a task with its own producer reads after a fence`);
    const { journal } = memory;
    try {
      await fetchStableOffset(admin, consumerGroup, topic, partition, undefined, false);
      const committed = await this.read(); // stable: with the check against our own commits
      await this.refuseLostAcknowledged();
      return committed;
    } catch (error) {
      if (!isUnstableOffsetCommit(error)) throw error;
    }
    const decision = decideHangingCommit(
      journal,
      await this.outcomesAt(decidingTransaction(journal)),
    );
    if (decision.kind === 'refuse') {
      throw new HangingCommitError(
        `${this.key}: after the fence the offset commit is still pending, and ${decision.reason}. Settle it with kafka-transactions (find-hanging, then abort or complete)`,
      );
    }
    if (decision.kind === 'commit') {
      if (decision.offset === undefined) {
        throw new HangingCommitError(
          `${this.key}: after the fence the offset commit is still pending, and ${decision.reason}, but the transaction committed no offset of this task. Settle it with kafka-transactions (find-hanging, then abort or complete)`,
        );
      }
      const pending = await this.pendingOffsetCommit(decision.producerEpoch);
      logger.warn(
        { offset: decision.offset, reason: decision.reason, start_offset: pending.startOffset },
        'after fencing, the offset commit of a transaction of this task is still pending (its marker never came); committing it, as it was decided',
      );
      // Set first: should the group hold anything else after the marker, the read below fails
      // the task rather than let it redo committed work.
      memory.acknowledged = decision.offset;
      await endWithMarker(admin, pending, true);
      if (decision.begun) journal.committedAfterFence();
    } else {
      // The pending commit must be the decided transaction's: another owner's is not ours to
      // abort, and aborting ours then would redo work for nothing.
      const pending = await this.pendingOffsetCommit(decision.producerEpoch);
      const partitions = await this.source.writtenPartitions();
      logger.warn(
        {
          topics: partitions.map((p) => p.topic),
          reason: decision.reason,
          start_offset: pending.startOffset,
        },
        'after fencing, the offset commit of a transaction of this task is still pending (its marker never came); aborting it with a marker of its own and redoing its work',
      );
      await producer.settleHanging(sweepRecords(partitions), {
        groupId: consumerGroup,
        topic,
        partition,
        offset: '0',
        metadata: undefined,
      });
      // What this replica had acknowledged is aborted now: the offset before it is the task's.
      memory.acknowledged = undefined;
      journal.forgetAcknowledged();
    }
    try {
      return await this.read();
    } catch (error) {
      if (!isUnstableOffsetCommit(error)) throw error;
      throw new HangingCommitError(
        `${this.key}: the committed offset is still pending after this task ended its own hanging transaction: another producer id's transaction hangs there. Settle it with kafka-transactions (find-hanging, then abort)`,
      );
    }
  }

  /**
   * This task's offset commit pending on the offsets partition, as a transaction of its
   * producer id open there; at `producerEpoch` (the journaled transaction's) when that is known,
   * or it is not that transaction's: another owner's since, and the task refuses.
   */
  private async pendingOffsetCommit(producerEpoch: number | undefined): Promise<OpenTransaction> {
    const producerId = this.source.producer?.identity()?.producerId;
    const [pending, ...more] =
      producerId === undefined ? [] : await findPendingOffsetCommits(this.source.admin, producerId);
    const refuse = (reason: string) =>
      new HangingCommitError(
        `${this.key}: after the fence the offset commit is still pending, and ${reason}. Settle it with kafka-transactions (find-hanging, then abort or complete)`,
      );
    if (pending === undefined || more.length > 0)
      throw refuse(`this producer id has ${pending ? 'several' : 'no'} offset commits pending`);
    if (producerEpoch !== undefined && pending.producerEpoch !== producerEpoch)
      throw refuse(
        `it was written at producer epoch ${pending.producerEpoch}, not ${producerEpoch}, the epoch of the transaction this replica ran: another owner's since`,
      );
    return pending;
  }

  /**
   * After the fence with the offset settled: the acknowledged transaction's records that an
   * ABORT ended fail the task (`abortedAcknowledgedWrites`), as no marker can mend them.
   */
  private async refuseLostAcknowledged(): Promise<void> {
    const acknowledged = this.source.memory.journal.lastAcknowledged;
    const aborted = abortedAcknowledgedWrites(await this.outcomesAt(acknowledged));
    if (aborted.length === 0) return;
    throw new HangingCommitError(
      `${this.key}: the coordinator acknowledged this task's last commit (offset ${acknowledged?.offset ?? 'none'}), and its offset commit has its COMMIT, but on ${aborted.join(', ')} an ABORT of the transaction after it ended its records (their own marker was dropped): its input is behind the group's offset and its state changes and results there are gone. Reset the group's offset of ${this.key} to the offset before it to redo that input (what did commit comes out again)`,
    );
  }

  /** How a journaled transaction ended on each partition it wrote (span-outcomes.ts). */
  private outcomesAt(writes: TransactionWrites | undefined): Promise<Map<string, SpanOutcome>> {
    const { admin, producer } = this.source;
    return spanOutcomes(admin, writes, producer?.identity()?.producerId);
  }

  /** The partition's first offset: where the group starts reading it (`fromBeginning`). */
  async earliest(): Promise<string> {
    const { admin, topic, partition } = this.source;
    const offsets = await fetchTopicOffsets(admin, topic);
    const low = offsets.find((p) => p.partition === partition)?.low;
    if (low === undefined) throw new Error(`${topic} has no partition ${partition}`);
    return low;
  }
}
