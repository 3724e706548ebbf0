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
  let unstable = 0;
  const [answer] = await retryBroker(
    () =>
      admin.fetchOffsets({
        groupId,
        topics: [{ topic, partitions: [partition] }],
        requireStable: true,
      }),
    {
      shouldRetry: (error) => {
        if (!isRetriable(error)) return false;
        if (!isUnstableOffsetCommit(error)) return true;
        unstable += 1;
        return waitWhileUnstable && unstable <= unstableAttempts;
      },
      onRetry: (error, attempt) => {
        if (isUnstableOffsetCommit(error)) onUnstable?.(attempt);
      },
    },
  );
  const committed = answer?.partitions.find((p) => p.partition === partition);
  // -1: nothing committed; kafkajs may also have committed a reset's sentinel (-2).
  if (committed === undefined || BigInt(committed.offset) < 0n) return undefined;
  return { offset: committed.offset, metadata: committed.metadata ?? undefined };
}
