// AllSource Core sends its `Option` fields as JSON null, and Sluice takes its configs verbatim
// (docs/design.md §2): these are what the nulls mean, in one place for the validator (which
// warns when a default applies) and the operator library (which runs them).
import type { ReduceOperator, WindowConfig } from './definition';

/** AllSource's session gap when `session_timeout_seconds` is null. */
export const DEFAULT_SESSION_TIMEOUT_SECONDS = 300;

/** The paths a reduce groups by: none for an absent or null `group_by`. */
export function groupByPaths(reduce: Pick<ReduceOperator, 'group_by'>): string[] {
  const groupBy = reduce.group_by;
  if (groupBy === undefined || groupBy === null) return [];
  return typeof groupBy === 'string' ? [groupBy] : groupBy;
}

/** How far a sliding window moves: `slide_seconds`, or its size when that is null. */
export function slideSecondsOf(config: WindowConfig): number | undefined {
  return config.slide_seconds ?? config.size_seconds;
}

/** A session window's gap: `session_timeout_seconds`, or AllSource's 300 s when null. */
export function sessionGapSecondsOf(config: WindowConfig): number {
  return config.session_timeout_seconds ?? DEFAULT_SESSION_TIMEOUT_SECONDS;
}
