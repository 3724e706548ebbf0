// How a task (re)starts, decided on what the broker answers, never on a clock:
// 1. fence: a new InitProducerId for the task's transactional id settles every earlier
//    transaction of that id (aborts an open one, waits for a pending commit's markers);
// 2. read the committed offset with require_stable (retried while a commit is pending);
// 3. end what the task's own earlier transactions left open on the partitions it wrote;
// 4. rebuild the state from the committed logs (a changelog restore checks its stable end).
// The consumer then reads on from the committed offset. A task kept through a rebalance with
// nothing uncommitted, whose last acknowledged commit is what the group holds, does 3 alone.
import type { CommittedOffset } from '@sluice/kafka';

import { CommittedOffsetReader } from './committed-offset';
import type { CommittedOffsetSource } from './committed-offset';
import { endOpenTransactions } from './open-transactions';
import type { TaskTransactions } from './task-transactions';

export class TaskRecovery {
  private readonly committed: CommittedOffsetReader;

  /**
   * What the task's committed offset is read with (committed-offset.ts), and the transactions
   * it writes in (`producer` is set when they are the task's own).
   */
  constructor(private readonly parts: CommittedOffsetSource & { transactions: TaskTransactions }) {
    this.committed = new CommittedOffsetReader(parts);
  }

  /**
   * Brings the task's transactions and state to what the group committed, and returns that.
   * `kept`: the committed offset the task's in-memory state equals, with nothing uncommitted
   * (`null`: nothing committed); `undefined` when it has to be rebuilt in any case.
   */
  async recover(
    kept: string | null | undefined,
    rebuild: () => Promise<void>,
  ): Promise<CommittedOffset | undefined> {
    const { producer, logger } = this.parts;
    if (!producer) return this.recoverInReplicaTransaction(kept, rebuild);
    let committed = kept === undefined ? undefined : await this.committed.readIfSettles();
    if (kept === undefined || committed === 'unsettled' || (committed?.offset ?? null) !== kept) {
      if (kept !== undefined && committed !== 'unsettled') {
        logger.info(
          { committed: committed?.offset ?? null, had: kept },
          'the committed offset is not this task state; fencing and rebuilding',
        );
      }
      await producer.fence();
      committed = await this.committed.readAfterFence();
      await this.endOwnOpenTransactions(committed?.offset);
      await rebuild();
      return committed;
    }
    // Kept, nothing to fence: but the broker may have gone down since the last commit and
    // dropped that commit's marker on a partition this task wrote (README, Known issues), where
    // every reader would then wait for good.
    await this.endOwnOpenTransactions(committed?.offset);
    return committed;
  }

  /**
   * exactly_once_v2: the transactional id is the replica's, so no fence of the task's settles
   * what an earlier owner of the partition left open. The group does instead: that owner's
   * offset commits named a generation that has ended and are refused, and a transaction it
   * left open (a replica killed) ends at its transaction timeout, which the reads here wait
   * out on the broker's answers: the committed offset with require_stable, the changelog to
   * its stable end. The replica's own earlier transaction was aborted by the reopening of its
   * producer (`fence`) when this task had writes in it.
   */
  private async recoverInReplicaTransaction(
    kept: string | null | undefined,
    rebuild: () => Promise<void>,
  ): Promise<CommittedOffset | undefined> {
    const { transactions, logger } = this.parts;
    if (kept !== undefined) {
      const committed = await this.committed.readIfSettles();
      if (committed !== 'unsettled' && (committed?.offset ?? null) === kept) return committed;
      logger.info(
        {
          committed: committed === 'unsettled' ? 'pending' : (committed?.offset ?? null),
          had: kept,
        },
        'the committed offset is not this task state; rebuilding',
      );
    }
    await transactions.fence();
    const committed = await this.committed.read();
    await rebuild();
    return committed;
  }

  /**
   * Where the consumer reads on from: `reread`, when a rebuilt state asks to read its input
   * again from there (before `position`), else `position`. Records gone with the topic's
   * retention cannot be read again: said, and the partition is read from its start.
   */
  async readFrom(position: string, reread: string | undefined): Promise<string> {
    if (reread === undefined || BigInt(reread) >= BigInt(position)) return position;
    const start = await this.committed.earliest();
    if (BigInt(reread) >= BigInt(start)) {
      this.parts.logger.info(
        { reread_from: reread, committed: position },
        'reading the input again from the oldest record the restored state holds outside its changelog',
      );
      return reread;
    }
    this.parts.logger.error(
      { reread_from: reread, log_start: start },
      'records the restored state kept outside its changelog are past the topic’s retention: they are lost',
    );
    return start;
  }

  /** The partition's first offset: where a task with nothing committed reads from. */
  earliest(): Promise<string> {
    return this.committed.earliest();
  }

  /** Ends a transaction of this task left open on a partition it wrote, as it was decided. */
  private async endOwnOpenTransactions(committed: string | undefined): Promise<void> {
    const { memory, topic, partition, logger, admin } = this.parts;
    await endOpenTransactions({
      admin,
      journal: memory.journal,
      committed,
      taskKey: `${topic}/${partition}`,
      logger,
    });
    memory.journal.settled();
  }
}
