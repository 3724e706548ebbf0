// What a consumer group has committed, asked so that the answer is final: OffsetFetch with
// `require_stable` (v7, added to kafkajs by patches/kafkajs+2.2.4.patch). While a transaction
// that commits offsets for a partition has not had its markers written, the coordinator
// answers UNSTABLE_OFFSET_COMMIT instead of an offset that the transaction may still move.
import type { Admin } from 'kafkajs';

import { retryBroker } from './retry';

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
 * The group's committed offset of each of `topic`'s partitions (absent: nothing committed),
 * once no pending transaction can change it. Retried, under BROKER_RETRY, while the broker
 * answers UNSTABLE_OFFSET_COMMIT or another retriable error; `onUnstable` hears of each wait.
 */
export async function fetchStableOffsets(
  admin: Admin,
  groupId: string,
  topic: string,
  onUnstable?: (attempt: number) => void,
): Promise<Map<number, CommittedOffset>> {
  const [answer] = await retryBroker(
    () => admin.fetchOffsets({ groupId, topics: [topic], requireStable: true }),
    {
      onRetry: (error, attempt) => {
        if (isUnstableOffsetCommit(error)) onUnstable?.(attempt);
      },
    },
  );
  const offsets = new Map<number, CommittedOffset>();
  for (const { partition, offset, metadata } of answer?.partitions ?? []) {
    if (offset === '-1') continue;
    offsets.set(partition, { offset, metadata: metadata ?? undefined });
  }
  return offsets;
}
