// What a task does, after its fence, about a transaction of its own still open on a partition
// it wrote: every transaction of its id is decided by then, yet one may lack a marker there
// (its coordinator dropped it: a single-node broker going down drops the markers of partitions
// left without a leader; README, Known issues), and that partition's last stable offset then
// stays before it for good, holding up a restore or any reader there.
import type { Admin } from 'kafkajs';
import type { Logger } from 'pino';

import { endWithMarker, findOpenTransactions } from '@sluice/kafka';

import { partitionKey } from './transaction-journal';
import type { TransactionJournal } from './transaction-journal';

/** A transaction of this task's id hangs, and settling it needs an operator. */
export class HangingCommitError extends Error {
  override readonly name = 'HangingCommitError';
}

/**
 * Ends each transaction open on the partitions the journal's transactions wrote that the
 * journal places (by where it starts) with the marker it was decided with. One it places but
 * cannot decide fails the task, saying so; one it cannot place (another producer's, or from
 * before this replica) is left to its own coordinator.
 */
export async function endOpenTransactions(options: {
  admin: Admin;
  journal: TransactionJournal;
  /** The group's committed offset of the task's partition, read stable after the fence. */
  committed: string | undefined;
  taskKey: string;
  logger: Logger;
  /** When the partitions are asked: after the fence (the default), or after a commit. */
  checked?: 'after the fence' | 'after its commit';
}): Promise<void> {
  const { admin, journal, committed, taskKey, logger, checked = 'after the fence' } = options;
  const written = journal.writtenPartitions();
  if (written.length === 0) return;
  const often = checked === 'after its commit';
  for (const transaction of await findOpenTransactions(admin, written, { often })) {
    const key = partitionKey(transaction.topic, transaction.partition);
    const decision = journal.decide(key, transaction.startOffset, committed);
    if (decision.kind === 'not-ours') continue;
    if (decision.kind === 'unknown') {
      throw new HangingCommitError(
        `${taskKey}: a transaction of this task is open on ${key} from offset ${transaction.startOffset} ${checked}, and ${decision.reason}. Settle it with kafka-transactions (find-hanging, then abort) once its outcome is known`,
      );
    }
    logger.warn(
      {
        partition_key: key,
        start_offset: transaction.startOffset,
        marker: decision.kind,
        reason: decision.reason,
        checked,
      },
      'a transaction of this task is still open on a partition it wrote (its coordinator never wrote the marker there); ending it as it was decided',
    );
    await endWithMarker(admin, transaction, decision.kind === 'commit');
  }
}
