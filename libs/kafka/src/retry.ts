import retry from 'async-retry';
import type { Admin, RetryOptions } from 'kafkajs';

/**
 * The one back-off Sluice uses while it waits on a broker's answer (a coordinator loading, a
 * transaction whose markers are not written yet, a leader being elected): 10 ms doubling to
 * 2 s, 32 attempts, about 50 s in all. Bounded, so a broker that never gives the answer fails
 * the caller with the broker's last word instead of hanging it; the caller's own back-off
 * (a task's, a definition's) decides what happens next. It starts short because the commonest
 * wait is the shortest: a transaction's first write right after the previous commit meets
 * CONCURRENT_TRANSACTIONS until the coordinator has written that commit's markers, a few
 * milliseconds (Kafka's Java producer retries that one after 20 ms).
 */
export const BROKER_RETRY = { attempts: 32, firstDelayMs: 10, maxDelayMs: 2_000 } as const;

/** BROKER_RETRY as kafkajs' `retry` option (producers, and the coordinator patch under them). */
export const KAFKAJS_BROKER_RETRY: RetryOptions = {
  initialRetryTime: BROKER_RETRY.firstDelayMs,
  maxRetryTime: BROKER_RETRY.maxDelayMs,
  retries: BROKER_RETRY.attempts,
};

/** kafkajs marks errors a repeated request may get past (`retriable`), as the protocol does. */
export function isRetriable(error: unknown): boolean {
  return (error as { retriable?: boolean } | null)?.retriable === true;
}

/**
 * Runs `call` again, under BROKER_RETRY, while it fails with an error `shouldRetry` accepts
 * (the broker's retriable answers by default); `onRetry` hears of each failed attempt.
 */
export function retryBroker<T>(
  call: () => Promise<T>,
  options: {
    shouldRetry?: (error: unknown) => boolean;
    onRetry?: (error: unknown, attempt: number) => void;
    attempts?: number;
  } = {},
): Promise<T> {
  const shouldRetry = options.shouldRetry ?? isRetriable;
  return retry(
    async (bail, attempt) => {
      try {
        return await call();
      } catch (error) {
        if (!shouldRetry(error)) {
          bail(error as Error);
          return undefined as never;
        }
        options.onRetry?.(error, attempt);
        throw error;
      }
    },
    {
      retries: options.attempts ?? BROKER_RETRY.attempts,
      minTimeout: BROKER_RETRY.firstDelayMs,
      maxTimeout: BROKER_RETRY.maxDelayMs,
      factor: 2,
    },
  );
}

/**
 * Runs a Kafka call again while the broker answers with a retriable error. kafkajs retries
 * requests itself, but not every admin call: right after a topic is created, a ListOffsets can
 * answer NOT_LEADER_OR_FOLLOWER until the leader is known everywhere, and a replica must wait
 * that out rather than die.
 */
export function retryRetriable<T>(call: () => Promise<T>, attempts?: number): Promise<T> {
  return retryBroker(call, attempts === undefined ? {} : { attempts });
}

/** A topic's low and high offsets per partition, waiting out a leader election. */
export function fetchTopicOffsets(admin: Admin, topic: string) {
  return retryRetriable(() => admin.fetchTopicOffsets(topic));
}
