// exactly_once_v2: what the replica does about its own earlier transactions once its producer
// is opened anew (README, Known issues: a single-node broker going down drops the markers of
// partitions left without a leader). InitProducerId has answered, so the coordinator holds
// every transaction of the replica's id complete; one still open where the replica's journal
// places it lacks a marker there and is ended as it was decided (open-transactions.ts). An
// acknowledged transaction whose records an ABORT ended (the next transaction had written into
// its open span, and the reopening aborted that one) cannot be mended by any marker: the
// replica refuses to go on, naming the partitions, rather than run on state that lacks them.
import type { Admin } from 'kafkajs';
import type { Logger } from 'pino';

import { transactionOutcome } from '@sluice/kafka';

import { endOpenTransactions, HangingCommitError } from './open-transactions';
import { splitKey } from './transaction-journal';
import type { TransactionJournal } from './transaction-journal';

export async function settleOwnTransactions(options: {
  admin: Admin;
  journal: TransactionJournal;
  /** The replica's transactional id, for the messages. */
  id: string;
  logger: Logger;
}): Promise<void> {
  const { admin, journal, id, logger } = options;
  // The offset commits of a replica's transaction are many: none tells the committing one's
  // fate, which the journal then leaves undecided (the refusal names kafka-transactions).
  await endOpenTransactions({ admin, journal, committed: undefined, taskKey: id, logger });
  const acknowledged = journal.lastAcknowledged;
  const aborted: string[] = [];
  for (const [key, startOffset] of acknowledged?.firstOffsets ?? []) {
    const outcome = await transactionOutcome(admin, { ...splitKey(key), startOffset });
    if (outcome === 'abort') aborted.push(key);
  }
  if (aborted.length > 0) {
    throw new HangingCommitError(
      `${id}: the coordinator acknowledged this replica's last commit, but on ${aborted.join(', ')} an ABORT of the transaction after it ended its records (their own marker was dropped): the state changes and results there are gone. Reset the group's offsets of the partitions whose tasks wrote there to before that commit to redo their input (what did commit comes out again)`,
    );
  }
}
