// What a task does with its offset commit still pending after the fence (committed-offset.ts):
// the coordinator decided that transaction, but its marker never reached the group's offsets
// partition, and maybe not some data partitions either, while others have theirs (a single-node
// broker's controlled shutdown does this: README, Known issues). Ending it against its decision
// breaks exactly-once: aborting a committed one redoes work whose results and state readers
// already have, committing an aborted one skips input whose results nobody has. So the decision
// is read from the markers that did arrive, and the journal (transaction-journal.ts) says where
// the task's last transactions started on each partition, which is what finds those markers.
// An acknowledged transaction is read too: where its marker was dropped its span stays open,
// the task's next transaction (same producer id and epoch until the fence) writes into it, and
// the ABORT that ends the later one there ends the acknowledged one's records as well.
import type { TransactionOutcome } from '@sluice/kafka';

import type { TransactionJournal, TransactionWrites } from './transaction-journal';

export type HangingCommitDecision =
  /**
   * Commit the pending offset commit: it was. `offset` is what the group then holds (a task's
   * transaction commits one; a replica's, under exactly_once_v2, many, and the journal keeps
   * none), and `producerEpoch` the epoch the transaction ran under (the pending commit's must
   * be it). `begun`: it is the transaction whose commit was not acknowledged.
   */
  | {
      kind: 'commit';
      offset: string | undefined;
      producerEpoch: number | undefined;
      begun: boolean;
      reason: string;
    }
  /**
   * Abort it (every partition the task may have written, with it): nothing of it was read.
   * `producerEpoch` and `begun`, as for a commit.
   */
  | { kind: 'abort'; producerEpoch: number | undefined; begun: boolean; reason: string }
  /** Neither is known to be right: an operator settles it (kafka-transactions). */
  | { kind: 'refuse'; reason: string };

/**
 * How a transaction ended on a partition it wrote: the marker after its first record there
 * (`transactionOutcome`), or still open; 'joined' when the open span there began before its
 * first record, with an earlier transaction of its producer whose marker was dropped.
 */
export type SpanOutcome = TransactionOutcome | 'joined';

/** The transaction whose commit was begun and not acknowledged: its markers decide, if any. */
function begunCommit(journal: TransactionJournal): TransactionWrites | undefined {
  const open = journal.unacknowledged;
  return open?.committing ? open : undefined;
}

/**
 * The transaction whose markers decide a pending offset commit: the one whose commit was begun,
 * or else the last acknowledged one.
 */
export function decidingTransaction(journal: TransactionJournal): TransactionWrites | undefined {
  return begunCommit(journal) ?? journal.lastAcknowledged;
}

/**
 * The decision for a pending offset commit after the fence. `outcomes`: how the deciding
 * transaction (`decidingTransaction`) ended on each partition it wrote, keyed `topic/partition`.
 */
export function decideHangingCommit(
  journal: TransactionJournal,
  outcomes: ReadonlyMap<string, SpanOutcome>,
): HangingCommitDecision {
  const acknowledged = journal.lastAcknowledged;
  const begun = begunCommit(journal);
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
    return decideAcknowledged(acknowledged, journal.unacknowledged, outcomes);
  }
  const seen = new Set<TransactionOutcome>();
  for (const key of begun.firstOffsets.keys()) {
    // Joined: the acknowledged transaction's span, whose records its marker ends with its own.
    const outcome = outcomes.get(key) ?? 'unknown';
    seen.add(outcome === 'joined' ? 'open' : outcome);
  }
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
    return {
      kind: 'abort',
      producerEpoch: begun.producerEpoch,
      begun: true,
      reason: 'its commit was asked for and its markers say ABORT',
    };
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

/**
 * The acknowledged transaction was committed by its coordinator, but the ABORT of the task's
 * next transaction may have ended its records where its own marker was dropped (seen in a
 * broker restart's dump: the changelog's span of a commit the coordinator had completed,
 * closed by the next transaction's ABORT). Committing the pending offsets then publishes what
 * its state changes no longer back. When no COMMIT of it arrived anywhere, nothing of it was
 * read, and aborting all of it undoes it whole.
 */
function decideAcknowledged(
  acknowledged: TransactionWrites,
  later: TransactionWrites | undefined,
  outcomes: ReadonlyMap<string, SpanOutcome>,
): HangingCommitDecision {
  let committed = false;
  let undone = false;
  let joined = false;
  for (const key of acknowledged.firstOffsets.keys()) {
    const outcome = outcomes.get(key) ?? 'unknown';
    if (outcome === 'unknown') {
      return {
        kind: 'refuse',
        reason:
          'its commit was acknowledged, and a partition it wrote no longer holds its first record, so whether a later abort ended it there cannot be read',
      };
    }
    committed ||= outcome === 'commit';
    // Still open with the later transaction's records in the span: a COMMIT there would commit
    // those too, and the later one was never committed.
    const sharedWithLater =
      (outcome === 'open' || outcome === 'joined') && later?.firstOffsets.has(key) === true;
    undone ||= outcome === 'abort' || sharedWithLater;
    // An earlier transaction's span, wherever it is: the abort's sweep would end its records.
    joined ||= outcome === 'joined';
  }
  if (!undone) return commitAgain(acknowledged, false, 'its commit was acknowledged');
  if (committed || joined) {
    return {
      kind: 'refuse',
      reason: committed
        ? 'its commit was acknowledged, its markers say COMMIT on some partitions, and on others the transaction after it wrote into its open span (aborting it there)'
        : 'its commit was acknowledged, the transaction after it ended or shares its records on a partition, and on a partition an earlier transaction began the open span it joined, so aborting it would end that one too',
    };
  }
  return {
    kind: 'abort',
    producerEpoch: acknowledged.producerEpoch,
    begun: false,
    reason:
      'its commit was acknowledged, but none of its COMMIT markers arrived, and the transaction after it wrote into its open span on a partition (aborting it there)',
  };
}

/**
 * The partitions where an ABORT ended the acknowledged transaction's records, although its
 * offset commit did get its COMMIT (the stable offset after the fence): the marker dropped on
 * those partitions alone, and the next transaction's ABORT taking them. Its input is then
 * behind the group's offset while its state changes and results are gone, and no marker can
 * bring them back: an operator has to choose (reset the group's offset and accept the
 * duplicates of what did commit).
 */
export function abortedAcknowledgedWrites(outcomes: ReadonlyMap<string, SpanOutcome>): string[] {
  return [...outcomes].filter(([, outcome]) => outcome === 'abort').map(([key]) => key);
}

function commitAgain(
  writes: TransactionWrites,
  begun: boolean,
  reason: string,
): HangingCommitDecision {
  const { offset, producerEpoch } = writes;
  return { kind: 'commit', offset, producerEpoch, begun, reason };
}
