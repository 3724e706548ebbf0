// What a consumer group has committed, asked so that the answer is final: OffsetFetch with
// `require_stable` (v7, added to kafkajs by patches/kafkajs+2.2.4.patch). While a transaction
// that commits offsets for a partition has not had its markers written, the coordinator
// answers UNSTABLE_OFFSET_COMMIT instead of an offset that the transaction may still move.
import type { Admin } from 'kafkajs';

import { isRetriable, retryBroker } from './retry';

export interface CommittedOffset {
  /** The next offset to read. */
  offset: string;
  /** What was committed with it (`undefined`: nothing). */
  metadata: string | undefined;
}

export function isUnstableOffsetCommit(error: unknown): boolean {
  return (error as { type?: string } | null)?.type === 'UNSTABLE_OFFSET_COMMIT';
}

/**
 * The group's committed offset of `topic`'s `partition` (undefined: nothing committed), once
 * no pending transaction can change it. Only that partition is asked about: another partition's
 * pending commit must not hold this one up. Retried, under BROKER_RETRY, while the broker
 * answers UNSTABLE_OFFSET_COMMIT or another retriable error; `onUnstable` hears of each wait.
 */
export async function fetchStableOffset(
  admin: Admin,
  groupId: string,
  topic: string,
  partition: number,
  onUnstable?: (attempt: number) => void,
  /** false: UNSTABLE_OFFSET_COMMIT is thrown at once instead of waited out. */
  waitWhileUnstable = true,
  /** How many UNSTABLE_OFFSET_COMMIT answers to wait out (any, within BROKER_RETRY, by default). */
  unstableAttempts = Infinity,
): Promise<CommittedOffset | undefined> {
  const [answer] = await fetchStableOffsets(admin, groupId, [{ topic, partitions: [partition] }], {
    onUnstable,
    unstableAttempts: waitWhileUnstable ? unstableAttempts : 0,
  });
  const committed = answer?.partitions.find((p) => p.partition === partition);
  // -1: nothing committed; kafkajs may also have committed a reset's sentinel (-2).
  if (committed === undefined || BigInt(committed.offset) < 0n) return undefined;
  return { offset: committed.offset, metadata: committed.metadata ?? undefined };
}

/**
 * Whether the group still holds a commit of `topics`' partitions pending: the broker answered
 * UNSTABLE_OFFSET_COMMIT `asks` times in a row (as a group coordinator may apply a marker a
 * moment after the transaction's coordinator counted it written).
 */
export async function offsetCommitPending(
  admin: Admin,
  groupId: string,
  topics: Array<{ topic: string; partitions: number[] }>,
  asks: number,
): Promise<boolean> {
  return fetchStableOffsets(admin, groupId, topics, { unstableAttempts: asks - 1 }).then(
    () => false,
    (error: unknown) => {
      if (isUnstableOffsetCommit(error)) return true;
      throw error;
    },
  );
}

/**
 * OffsetFetch with require_stable, retried under BROKER_RETRY on retriable answers, and on
 * UNSTABLE_OFFSET_COMMIT up to `unstableAttempts` times; past that, UNSTABLE_OFFSET_COMMIT is
 * thrown.
 */
function fetchStableOffsets(
  admin: Admin,
  groupId: string,
  topics: Array<{ topic: string; partitions: number[] }>,
  options: { onUnstable?: (attempt: number) => void; unstableAttempts: number },
) {
  let unstable = 0;
  return retryBroker(() => admin.fetchOffsets({ groupId, topics, requireStable: true }), {
    shouldRetry: (error) => {
      if (!isRetriable(error)) return false;
      if (!isUnstableOffsetCommit(error)) return true;
      unstable += 1;
      return unstable <= options.unstableAttempts;
    },
    onRetry: (error, attempt) => {
      if (isUnstableOffsetCommit(error)) options.onUnstable?.(attempt);
    },
  });
}
