// What a partition's tasks on this replica wrote in their last transactions, from the broker's
// own answers (each produce answer's base offset), so that a transaction of theirs found still
// open after the fence (its coordinator decided it, but a marker never reached a partition:
// README, Known issues) can be told apart from another producer's and ended as it was decided.

/** The partitions of one group whose offsets a transaction's offset commit carries. */
export interface GroupOffsets {
  groupId: string;
  topics: Array<{ topic: string; partitions: number[] }>;
}

/** One transaction's writes. */
export interface TransactionWrites {
  /** The offset its commit carries, once the commit is asked for (a task's transaction). */
  offset: string | undefined;
  /** Where its offset commit goes (a replica's transaction, which commits many offsets). */
  groupOffsets: GroupOffsets[];
  /**
   * Its commit was begun (the offset commit may have been sent, then EndTxn): the coordinator
   * may have decided either way.
   */
  committing: boolean;
  /** The producer epoch it ran under: a marker found later after another epoch is not its own. */
  producerEpoch: number | undefined;
  /** Its offset commit, found hanging after the fence, was committed (hanging-commit.ts). */
  committedAfterFence: boolean;
  /**
   * Found aborted after the fence (replica-sweep.ts): its hanging offset commit ended with
   * ABORT, or its markers that arrived say ABORT.
   */
  abortedAfterFence: boolean;
  /** `topic/partition` → the offset of the transaction's first record there. */
  firstOffsets: Map<string, string>;
}

export type MarkerDecision =
  | { kind: 'commit' | 'abort'; reason: string }
  | { kind: 'unknown'; reason: string }
  /** Not a transaction of this journal's: another producer's, or one it cannot place. */
  | { kind: 'not-ours' };

export function partitionKey(topic: string, partition: number): string {
  return `${topic}/${partition}`;
}

export function splitKey(key: string): { topic: string; partition: number } {
  const cut = key.lastIndexOf('/');
  return { topic: key.slice(0, cut), partition: Number(key.slice(cut + 1)) };
}

export class TransactionJournal {
  /** The last transaction whose commit the coordinator acknowledged. */
  lastAcknowledged: TransactionWrites | undefined;
  /**
   * The transaction begun after it, not acknowledged: still open, aborted (by this producer,
   * its coordinator or a fence), or its commit unanswered. The next one begun replaces it.
   */
  unacknowledged: TransactionWrites | undefined;

  begin(producerEpoch?: number): void {
    this.unacknowledged = {
      offset: undefined,
      groupOffsets: [],
      committing: false,
      producerEpoch,
      committedAfterFence: false,
      abortedAfterFence: false,
      firstOffsets: new Map(),
    };
  }

  /** A produce answer of the current transaction: the first answer per partition is its start. */
  wrote(
    answers: ReadonlyArray<{ topicName: string; partition: number; baseOffset?: string }>,
  ): void {
    const writes = this.unacknowledged;
    if (writes === undefined) return;
    for (const { topicName, partition, baseOffset } of answers) {
      const key = partitionKey(topicName, partition);
      if (baseOffset !== undefined && !writes.firstOffsets.has(key))
        writes.firstOffsets.set(key, baseOffset);
    }
  }

  committing(offset: string | undefined, groupOffsets: GroupOffsets[] = []): void {
    if (this.unacknowledged === undefined) return;
    this.unacknowledged.offset = offset;
    this.unacknowledged.groupOffsets = groupOffsets;
    this.unacknowledged.committing = true;
  }

  /**
   * The unacknowledged transaction's offset commit, found hanging after the fence, was committed
   * (hanging-commit.ts): what it left open is ended with COMMIT (`decide`), and then it counts
   * as acknowledged (`settled`).
   */
  committedAfterFence(): void {
    if (this.unacknowledged !== undefined) this.unacknowledged.committedAfterFence = true;
  }

  /**
   * The unacknowledged transaction was found aborted after the fence (replica-sweep.ts): what
   * it left open is ended with ABORT too (`decide`).
   */
  abortedAfterFence(): void {
    if (this.unacknowledged !== undefined) this.unacknowledged.abortedAfterFence = true;
  }

  /** Once its open partitions are ended, a transaction committed after the fence is acknowledged. */
  settled(): void {
    if (this.unacknowledged?.committedAfterFence) this.acknowledged();
  }

  acknowledged(): void {
    if (this.unacknowledged !== undefined) this.lastAcknowledged = this.unacknowledged;
    this.unacknowledged = undefined;
  }

  /** The acknowledged transaction was aborted by this task (its offset commit hung). */
  forgetAcknowledged(): void {
    this.lastAcknowledged = undefined;
  }

  /** Where either transaction's offset commit went (where one may still be pending), by group. */
  groupOffsets(): GroupOffsets[] {
    const byGroup = new Map<string, Map<string, Set<number>>>();
    for (const writes of [this.lastAcknowledged, this.unacknowledged]) {
      for (const { groupId, topics } of writes?.groupOffsets ?? []) {
        if (!byGroup.has(groupId)) byGroup.set(groupId, new Map());
        const group = byGroup.get(groupId)!;
        for (const { topic, partitions } of topics) {
          if (!group.has(topic)) group.set(topic, new Set());
          for (const partition of partitions) group.get(topic)!.add(partition);
        }
      }
    }
    return [...byGroup].map(([groupId, topics]) => ({
      groupId,
      topics: [...topics].map(([topic, partitions]) => ({ topic, partitions: [...partitions] })),
    }));
  }

  /** Every partition either transaction wrote, by topic. */
  writtenPartitions(): Array<{ topic: string; partitions: number[] }> {
    const byTopic = new Map<string, Set<number>>();
    for (const writes of [this.lastAcknowledged, this.unacknowledged]) {
      for (const key of writes?.firstOffsets.keys() ?? []) {
        const { topic, partition } = splitKey(key);
        if (!byTopic.has(topic)) byTopic.set(topic, new Set());
        byTopic.get(topic)!.add(partition);
      }
    }
    return [...byTopic].map(([topic, partitions]) => ({ topic, partitions: [...partitions] }));
  }

  /**
   * How a transaction open at `startOffset` of `key` after the fence was decided, given the
   * group's committed offset now (stable: read after the fence with require_stable).
   * - the acknowledged transaction: the coordinator had decided COMMIT when it answered;
   * - the one after it, whose commit was never asked for: ABORT;
   * - the one after it whose commit was asked for: the committed offset tells, when the two
   *   transactions commit different offsets (its own: COMMIT; the one before: ABORT, since its
   *   offset commit would otherwise be there or still pending);
   * - anything else cannot be told here.
   */
  decide(key: string, startOffset: string, committed: string | undefined): MarkerDecision {
    const acknowledged = this.lastAcknowledged;
    const open = this.unacknowledged;
    if (acknowledged?.firstOffsets.get(key) === startOffset) {
      // A later transaction that wrote here joined the open span (the partition sees one open
      // transaction per producer): a COMMIT would commit its records too, whatever its fate.
      if (open?.firstOffsets.has(key) && !open.committedAfterFence)
        return {
          kind: 'unknown',
          reason:
            'the transaction after the acknowledged one wrote there too, into the same open span',
        };
      return { kind: 'commit', reason: 'the coordinator had acknowledged its commit' };
    }
    if (open?.firstOffsets.get(key) !== startOffset) return { kind: 'not-ours' };
    if (open.committedAfterFence)
      return { kind: 'commit', reason: 'its offset commit was committed after the fence' };
    if (open.abortedAfterFence)
      return { kind: 'abort', reason: 'its offset commit was aborted after the fence' };
    if (!open.committing) return { kind: 'abort', reason: 'its commit was never asked for' };
    if (open.offset !== undefined && open.offset !== acknowledged?.offset) {
      if (committed === open.offset)
        return { kind: 'commit', reason: `the group holds its offset commit (${open.offset})` };
      if (committed === acknowledged?.offset)
        return {
          kind: 'abort',
          reason: `the group holds the offset before it (${committed ?? 'none'}), not its own (${open.offset})`,
        };
    }
    return {
      kind: 'unknown',
      reason: `its commit was asked for and the committed offset ${committed ?? 'none'} does not tell whether it happened`,
    };
  }
}
