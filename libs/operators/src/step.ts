// What a stateless step says about an event. Numeric codes and a reused context object keep
// the per-event path free of allocations.
import type { EventEnvelope } from '@sluice/contracts';

export const PASS = 0;
/** A filter said no: the event leaves the pipeline, counted as filtered. */
export const FILTERED = 1;
/** An `on_missing`/`on_invalid: skip` policy: the event leaves the pipeline, counted as skipped. */
export const SKIPPED = 2;
/** An `error` policy: the event goes to the dead-letter topic with `context.reason`. */
export const FAILED = 3;

export type Verdict = typeof PASS | typeof FILTERED | typeof SKIPPED | typeof FAILED;

/** The event as one pipeline sees it while it flows through the stateless steps. */
export interface WorkItem {
  envelope: EventEnvelope;
  route: string | undefined;
  /** Set by a step that returns FAILED or SKIPPED. */
  reason: string;
}

export type Step = (item: WorkItem) => Verdict;

/** A step's reaction to a missing or invalid value under its policy. */
export function policyVerdict(
  item: WorkItem,
  policy: 'skip' | 'error' | undefined,
  reason: string,
): Verdict {
  item.reason = reason;
  return policy === 'error' ? FAILED : SKIPPED;
}

/**
 * For operators that pass a missing or wrong-typed field through unchanged (map, branch): PASS,
 * unless the matching policy says `error`, in which case FAILED with the reason.
 */
export function unchangedUnlessError(
  item: WorkItem,
  actual: unknown,
  policies: { on_missing?: 'skip' | 'error'; on_invalid?: 'skip' | 'error' },
  reason: () => string,
): Verdict {
  const policy = actual === undefined ? policies.on_missing : policies.on_invalid;
  if (policy !== 'error') return PASS;
  item.reason = reason();
  return FAILED;
}
