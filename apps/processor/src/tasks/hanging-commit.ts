// What a task does with its offset commit still pending after the fence (committed-offset.ts):
// the coordinator decided that transaction, but its marker never reached the group's offsets
// partition, and maybe not some data partitions either, while others have theirs (a single-node
// broker's controlled shutdown does this: README, Known issues). Ending it against its decision
// breaks exactly-once: aborting a committed one redoes work whose results and state readers
// already have, committing an aborted one skips input whose results nobody has. So the decision
// is read from the markers that did arrive, and the journal (transaction-journal.ts) says where
// the task's last transactions started on each partition, which is what finds those markers.
import type { TransactionOutcome } from '@sluice/kafka';

import type { TransactionJournal, TransactionWrites } from './transaction-journal';

export type HangingCommitDecision =
  /**
   * Commit the pending offset commit: it was. `offset` is what the group then holds, and
   * `producerEpoch` the epoch the transaction ran under (the pending commit's must be it).
   * `begun`: it is the transaction whose commit was not acknowledged.
   */
  | {
      kind: 'commit';
      offset: string;
      producerEpoch: number | undefined;
      begun: boolean;
      reason: string;
    }
  /** Abort it (every partition the task may have written, with it): nothing of it was read. */
  | { kind: 'abort'; reason: string }
  /** Neither is known to be right: an operator settles it (kafka-transactions). */
  | { kind: 'refuse'; reason: string };

/**
 * The decision for a pending offset commit after the fence. `outcomes` answers, for the
 * transaction whose commit was begun and not acknowledged, how it ended on each partition it
 * wrote (`transactionOutcome` at its first record there).
 */
export function decideHangingCommit(
  journal: TransactionJournal,
  outcomes: ReadonlyMap<string, TransactionOutcome>,
): HangingCommitDecision {
  const acknowledged = journal.lastAcknowledged;
  const begun = journal.unacknowledged?.committing ? journal.unacknowledged : undefined;
  if (begun === undefined) {
    if (acknowledged === undefined) {
      return {
        kind: 'refuse',
        reason:
          'this replica has no record of the transaction (it started after it), so where its markers are, and so whether it was committed, cannot be read',
      };
    }
    // Only a transaction whose commit was begun sends an offset commit: the pending one is the
    // acknowledged one's (and maybe earlier acknowledged ones'), committed by the coordinator.
    return commitAgain(acknowledged, false, 'its commit was acknowledged');
  }
  const seen = new Set<TransactionOutcome>();
  for (const key of begun.firstOffsets.keys()) seen.add(outcomes.get(key) ?? 'unknown');
  if (seen.has('unknown')) {
    return {
      kind: 'refuse',
      reason:
        'its commit was asked for, and a partition it wrote no longer holds its first record, so how it ended there cannot be read',
    };
  }
  if (seen.has('commit') && seen.has('abort')) {
    return {
      kind: 'refuse',
      reason:
        'its commit was asked for, and its markers say COMMIT on some partitions, ABORT on others',
    };
  }
  if (seen.has('abort')) {
    // The pending offsets may hold the acknowledged transaction's commit too, if its marker was
    // dropped as well: one marker cannot end that one committed and this one aborted.
    if (acknowledged !== undefined) {
      return {
        kind: 'refuse',
        reason:
          'its commit was asked for and its markers say ABORT, while the pending offset commit may also hold the acknowledged transaction before it',
      };
    }
    return { kind: 'abort', reason: 'its commit was asked for and its markers say ABORT' };
  }
  // COMMIT where a marker arrived; or none arrived anywhere, and nothing of it was ever read:
  // committing it everywhere is then as consistent as aborting, and does not redo its work.
  return commitAgain(
    begun,
    true,
    seen.has('commit')
      ? 'its commit was asked for and its markers say COMMIT'
      : 'its commit was asked for and no partition it wrote has its marker (nothing of it was read)',
  );
}

function commitAgain(
  writes: TransactionWrites,
  begun: boolean,
  reason: string,
): HangingCommitDecision {
  if (writes.offset === undefined) {
    return { kind: 'refuse', reason: `${reason}, but it committed no offset` };
  }
  const { offset, producerEpoch } = writes;
  return { kind: 'commit', offset, producerEpoch, begun, reason };
}
