import retry from 'async-retry';
import type { Admin } from 'kafkajs';

/**
 * Runs a Kafka call again while the broker answers with a retriable error. kafkajs retries
 * requests itself, but not every admin call: right after a topic is created, a ListOffsets can
 * answer NOT_LEADER_OR_FOLLOWER until the leader is known everywhere, and a replica must wait
 * that out rather than die.
 */
export function retryRetriable<T>(call: () => Promise<T>, retries = 10): Promise<T> {
  return retry(
    async (bail) => {
      try {
        return await call();
      } catch (error) {
        if ((error as { retriable?: boolean }).retriable === true) throw error;
        bail(error as Error);
        return undefined as never;
      }
    },
    { retries, minTimeout: 100, maxTimeout: 2_000, factor: 2 },
  );
}

/** A topic's low and high offsets per partition, waiting out a leader election. */
export function fetchTopicOffsets(admin: Admin, topic: string) {
  return retryRetriable(() => admin.fetchTopicOffsets(topic));
}
