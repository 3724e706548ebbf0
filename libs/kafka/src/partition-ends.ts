// Where a partition ends, asked both ways: the high watermark (every record written) and the
// last stable offset (below it, no transaction is still open). A reader that must see every
// committed record, such as a changelog restore, checks that the two meet before it trusts the
// end, instead of silently reading a prefix that stops at an open transaction.
import type { Admin } from 'kafkajs';

import { retryBroker, retryRetriable } from './retry';

/** ListOffsets' isolation levels (kafkajs does not export its enum). */
const READ_UNCOMMITTED = 0;
const READ_COMMITTED = 1;

export interface PartitionEnd {
  partition: number;
  /** The high watermark: the offset after the last record written. */
  high: string;
  /** The last stable offset: no transaction below it is still open. */
  stable: string;
}

/** Each partition's high watermark and last stable offset (ListOffsets both ways). */
export async function fetchPartitionEnds(admin: Admin, topic: string): Promise<PartitionEnd[]> {
  const [uncommitted, committed] = await Promise.all([
    retryRetriable(() => admin.fetchTopicOffsets(topic, { isolationLevel: READ_UNCOMMITTED })),
    retryRetriable(() => admin.fetchTopicOffsets(topic, { isolationLevel: READ_COMMITTED })),
  ]);
  return uncommitted.map(({ partition, high }) => ({
    partition,
    high,
    stable: committed.find((p) => p.partition === partition)?.high ?? '-1',
  }));
}

export class OpenTransactionError extends Error {
  override readonly name = 'OpenTransactionError';
  readonly retriable = true;
  constructor(
    readonly topic: string,
    readonly end: PartitionEnd,
  ) {
    super(
      `${topic}/${end.partition}: its last stable offset ${end.stable} is behind its high ` +
        `watermark ${end.high}; a transaction there is still open`,
    );
  }
}

/**
 * The end of `topic`'s `partition` once its last stable offset has reached its high watermark:
 * retried under BROKER_RETRY while a transaction is open there (`onOpen` hears why it waits).
 * For a partition only the caller's transactional id writes, after the caller fenced it, the
 * two meet as soon as the fenced transaction's markers are written.
 */
export function untilStableEnd(
  admin: Admin,
  topic: string,
  partition: number,
  onOpen?: (error: OpenTransactionError, attempt: number) => void,
): Promise<bigint> {
  return retryBroker(
    async () => {
      const end = (await fetchPartitionEnds(admin, topic)).find((e) => e.partition === partition);
      if (!end) throw new Error(`${topic} has no partition ${partition}`);
      if (BigInt(end.stable) < BigInt(end.high)) throw new OpenTransactionError(topic, end);
      return BigInt(end.high);
    },
    {
      shouldRetry: (error) => error instanceof OpenTransactionError,
      onRetry: (error, attempt) => onOpen?.(error as OpenTransactionError, attempt),
    },
  );
}
