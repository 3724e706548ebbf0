import type { ReduceOperator } from '@sluice/contracts';

import { compileGetter } from '../paths';
import type { Getter } from '../paths';
import { describeType } from '../stateless/filter';
import { PASS, policyVerdict } from '../step';
import type { Verdict, WorkItem } from '../step';

/** The group of events that have no `group_by` (docs/design.md §3: keyed by the pipeline id). */
export const NO_GROUP = null;
/** docs/design.md §2: an event whose group field is missing joins the group "default". */
export const DEFAULT_GROUP = 'default';

/** What a reduce takes from one event: its group and (except for a bare count) its value. */
export interface AggregateInput {
  group: string | null;
  value: number;
}

export type AggregateExtractor = (item: WorkItem, out: AggregateInput) => Verdict;

/**
 * Compiles the part of a reduce that reads an event: the group key and the value. A group key
 * from one path is the value as a string (objects as JSON); from several paths, the JSON array
 * of their values, so `["gbp","uk"]` can never collide with another combination.
 */
export function compileAggregateInput(reduce: ReduceOperator, label: string): AggregateExtractor {
  const groupOf = compileGroupKey(reduce.group_by);
  if (reduce.field === undefined) {
    return (_item, out) => {
      out.group = groupOf(_item);
      out.value = 1;
      return PASS;
    };
  }
  const get = compileGetter(reduce.field);
  const counting = reduce.function === 'count';
  return (item, out) => {
    const value = get(item.envelope);
    if (value === undefined) {
      return policyVerdict(item, reduce.on_missing, `${label}: field ${reduce.field} is missing`);
    }
    if (!counting && (typeof value !== 'number' || !Number.isFinite(value))) {
      return policyVerdict(
        item,
        reduce.on_invalid,
        `${label}: field ${reduce.field} is ${describeType(value)}, ${reduce.function} needs a finite number`,
      );
    }
    out.group = groupOf(item);
    out.value = counting ? 1 : (value as number);
    return PASS;
  };
}

function compileGroupKey(
  groupBy: string | string[] | null | undefined,
): (item: WorkItem) => string | null {
  // null is AllSource's "no grouping", as when absent.
  if (groupBy === undefined || groupBy === null) return () => NO_GROUP;
  if (typeof groupBy === 'string') {
    const get = compileGetter(groupBy);
    return (item) => groupPart(get(item.envelope));
  }
  const getters: Getter[] = groupBy.map(compileGetter);
  return (item) => JSON.stringify(getters.map((get) => groupPart(get(item.envelope))));
}

function groupPart(value: unknown): string {
  if (value === undefined) return DEFAULT_GROUP;
  return typeof value === 'string' ? value : JSON.stringify(value);
}
