// exactly_once_v2: what the replica does about its own earlier transactions once its producer
// is opened anew (README, Known issues: a single-node broker going down drops the markers of
// partitions left without a leader). InitProducerId has answered, so the coordinator holds
// every transaction of the replica's id complete; one still open where the replica's journal
// places it lacks a marker there and is ended as it was decided (open-transactions.ts). So is
// an offset commit of the replica's still pending on a group's offsets partition: every task
// that resumes one of its partitions waits on it (require_stable), and only a marker of the
// replica's producer id ends it, which nothing else would write while those tasks wait. An
// acknowledged transaction whose records an ABORT ended (the next transaction had written into
// its open span, and the reopening aborted that one) cannot be mended by any marker: the
// replica refuses to go on, naming the partitions, rather than run on state that lacks them.
import type { Admin } from 'kafkajs';
import type { Logger } from 'pino';

import {
  endWithMarker,
  findOpenTransactions,
  findPendingOffsetCommits,
  offsetCommitPending,
  transactionOutcome,
} from '@sluice/kafka';
import type { OpenTransaction } from '@sluice/kafka';

import { decideHangingCommit, decidingTransaction } from './hanging-commit';
import { endOpenTransactions, HangingCommitError } from './open-transactions';
import { spanOutcomes, writtenBy } from './span-outcomes';
import { splitKey } from './transaction-journal';
import type { GroupOffsets, TransactionJournal } from './transaction-journal';

/** UNSTABLE_OFFSET_COMMIT answers (10 ms doubling: some 150 ms) before a pending commit is sought. */
const UNSTABLE_ASKS = 5;

export interface OwnTransactions {
  admin: Admin;
  journal: TransactionJournal;
  /** The replica's transactional id, for the messages. */
  id: string;
  /** Its producer id, as InitProducerId answered it (the same across epochs). */
  producerId: string | undefined;
  logger: Logger;
}

export async function settleOwnTransactions(options: OwnTransactions): Promise<void> {
  const { admin, journal, id, logger } = options;
  await settleOwnOffsetCommits(options);
  await decideBegunByItsMarkers(options);
  // The journal keeps no offsets of a replica's transaction to tell a begun commit's fate by:
  // unless a marker of it told, it stays undecided (the refusal names kafka-transactions).
  await endOpenTransactions({ admin, journal, committed: undefined, taskKey: id, logger });
  journal.settled();
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

/**
 * A begun commit whose offset commit is not pending (its marker arrived there) and whose span is
 * still open on a data partition: a marker of it that arrived on another partition says how its
 * coordinator decided it, as every marker of one transaction says the same. Mixed or none: left
 * undecided.
 */
async function decideBegunByItsMarkers(options: OwnTransactions): Promise<void> {
  const { admin, journal, producerId } = options;
  const begun = journal.unacknowledged;
  if (!begun?.committing || begun.committedAfterFence || begun.abortedAfterFence) return;
  if (begun.firstOffsets.size === 0) return;
  // Asked first, as a commit refused (a rebalance) reopens with nothing left open: the markers
  // of every partition it wrote are read only when something is.
  const open = await findOpenTransactions(admin, writtenBy(begun));
  if (!open.some((transaction) => transaction.producerId === producerId)) return;
  const outcomes = new Set((await spanOutcomes(admin, begun, producerId, open)).values());
  if (outcomes.has('commit') === outcomes.has('abort')) return;
  options.logger.warn(
    { marker: outcomes.has('commit') ? 'commit' : 'abort' },
    "the replica's commit that went unanswered is still open on a partition it wrote; its markers elsewhere say how it was decided",
  );
  if (outcomes.has('commit')) journal.committedAfterFence();
  else journal.abortedAfterFence();
}

/**
 * The replica's own offset commits still pending for `groups`' partitions, each once. Each
 * group answers first whether a commit of its partitions is pending (OffsetFetch with
 * require_stable, the group's own grant), asked a few times, as a group coordinator may apply a
 * marker just after the transaction's coordinator has counted it written; only while one is,
 * its offsets partition is asked whose (DescribeProducers: an optional grant on
 * `__consumer_offsets`, named when refused).
 */
export async function ownPendingOffsetCommits(
  admin: Admin,
  producerId: string,
  groups: readonly GroupOffsets[],
): Promise<Array<OpenTransaction & { groupId: string }>> {
  const pending = new Map<string, OpenTransaction & { groupId: string }>();
  for (const { groupId, topics } of groups) {
    if (!(await offsetCommitPending(admin, groupId, topics, UNSTABLE_ASKS))) continue;
    // Groups may share an offsets partition: one open transaction there, found once.
    for (const commit of await findPendingOffsetCommits(admin, producerId, [groupId]))
      pending.set(`${commit.topic}/${commit.partition}`, { ...commit, groupId });
  }
  return [...pending.values()];
}

/** The offset commits of the journal's transactions still pending, ended as decided. */
async function settleOwnOffsetCommits(options: OwnTransactions): Promise<void> {
  const { admin, journal, producerId } = options;
  if (producerId === undefined) return;
  const pending = await ownPendingOffsetCommits(admin, producerId, journal.groupOffsets());
  if (pending.length > 0) await endPending(pending, options);
}

/**
 * The replica's own pending offset commits, ended as the journal's deciding transaction was
 * decided, read from its markers on the partitions it wrote (hanging-commit.ts, the rules a
 * task's own producer follows after its fence): all the same way, as one commit wrote them.
 */
async function endPending(pending: OpenTransaction[], options: OwnTransactions): Promise<void> {
  const { admin, journal, id, producerId, logger } = options;
  const where = pending
    .map((commit) => `${commit.topic}/${commit.partition} from offset ${commit.startOffset}`)
    .join(', ');
  const refuse = (reason: string) =>
    new HangingCommitError(
      `${id}: after its producer was opened anew, an offset commit of this replica is still pending on ${where}, and ${reason}. Settle it with kafka-transactions (find-hanging, then abort or complete)`,
    );
  const decision = decideHangingCommit(
    journal,
    await spanOutcomes(admin, decidingTransaction(journal), producerId),
  );
  if (decision.kind === 'refuse') throw refuse(decision.reason);
  // Its tasks went on from the acknowledged offsets (each holds them as the floor no resume may
  // go below), which an ABORT would put the group behind. Unreachable as the commits run: the
  // check after each acknowledged commit ends its spans before the next transaction writes.
  if (decision.kind === 'abort' && !decision.begun)
    throw refuse(`${decision.reason}, and its tasks went on from its offsets`);
  // Another epoch's: a transaction the journal does not hold, whose fate it cannot read.
  const other = pending.find(
    (commit) =>
      decision.producerEpoch !== undefined && commit.producerEpoch !== decision.producerEpoch,
  );
  if (other !== undefined) {
    throw refuse(
      `it was written at producer epoch ${other.producerEpoch}, not ${decision.producerEpoch}, the epoch of the transaction the journal holds`,
    );
  }
  logger.warn(
    { pending: where, marker: decision.kind, reason: decision.reason },
    "an offset commit of this replica's is still pending after its producer was opened anew (its coordinator never wrote the marker there); ending it as its transaction was decided",
  );
  const committed = decision.kind === 'commit';
  for (const commit of pending) await endWithMarker(admin, commit, committed);
  if (!committed) journal.abortedAfterFence();
  else if (decision.begun) journal.committedAfterFence();
}
