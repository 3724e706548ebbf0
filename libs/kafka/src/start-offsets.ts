// Where a reader starts in each partition of a topic, asked of the broker: the log's first
// offset (`earliest`), or the first record at or after a time (ListOffsets by timestamp, the
// broker's time index; the end when no record is that late yet).
import type { Admin } from 'kafkajs';

import { retryRetriable } from './retry';

/** `earliest`, or a time in epoch ms. */
export type StartPoint = 'earliest' | number;

/** Each partition's start offset, by partition. */
export async function startOffsets(
  admin: Admin,
  topic: string,
  from: StartPoint,
): Promise<Map<number, number>> {
  const offsets =
    from === 'earliest'
      ? (await retryRetriable(() => admin.fetchTopicOffsets(topic))).map(({ partition, low }) => ({
          partition,
          offset: low,
        }))
      : await retryRetriable(() => admin.fetchTopicOffsetsByTimestamp(topic, from));
  return new Map(offsets.map(({ partition, offset }) => [partition, Number(offset)]));
}
