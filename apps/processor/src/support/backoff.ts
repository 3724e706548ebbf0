// The processor's one back-off: for a partition whose task keeps failing, a definition that
// cannot be applied yet, a consumer that cannot join, a broker that is away. async-retry does
// the retrying; this module only fixes the schedule and the stop condition.
import retry from 'async-retry';

export interface Backoff {
  firstMs: number;
  maxMs: number;
}

/** 0.25 s doubling to 60 s: a failing partition or definition never spins, nor waits long. */
export const FAILURE_BACKOFF: Backoff = { firstMs: 250, maxMs: 60_000 };
/** 0.5 s doubling to 10 s: waiting for the broker or the group to come back. */
export const RECONNECT_BACKOFF: Backoff = { firstMs: 500, maxMs: 10_000 };

/** The delay before retry number `attempt` (1-based). */
export function backoffDelay(attempt: number, backoff: Backoff): number {
  return Math.min(backoff.maxMs, backoff.firstMs * 2 ** Math.max(0, attempt - 1));
}

export class Stopped extends Error {
  override readonly name = 'Stopped';
}

/**
 * Runs `work` until it succeeds, waiting `backoff` between attempts, for as long as
 * `stopped()` is false (then it rejects with Stopped) and no error is `fatal` (then it rejects
 * with that error). `onError` hears of each failure with the
 * attempt and the delay before the next.
 */
export function untilSucceeds<T>(
  work: () => Promise<T>,
  options: {
    backoff: Backoff;
    stopped: () => boolean;
    onError: (error: unknown, attempt: number, retryInMs: number) => void;
    /** An error no wait can mend (a refused password): it ends the retries and is thrown. */
    fatal?: (error: unknown) => boolean;
  },
): Promise<T> {
  return retry(
    async (bail, attempt) => {
      if (options.stopped()) {
        bail(new Stopped('stopped before it succeeded'));
        return undefined as never;
      }
      try {
        return await work();
      } catch (error) {
        // Before `stopped`: a refused password is the answer, even to a replica told to stop.
        if (options.fatal?.(error)) {
          bail(error as Error);
          return undefined as never;
        }
        if (options.stopped()) {
          bail(new Stopped('stopped before it succeeded'));
          return undefined as never;
        }
        options.onError(error, attempt, backoffDelay(attempt, options.backoff));
        throw error;
      }
    },
    {
      forever: true,
      minTimeout: options.backoff.firstMs,
      maxTimeout: options.backoff.maxMs,
      factor: 2,
      randomize: false,
    },
  );
}
