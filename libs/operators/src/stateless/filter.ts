import type { FilterOperator } from '@sluice/contracts';

import { jsonEqual } from '../json-equal';
import { compileGetter } from '../paths';
import { FAILED, FILTERED, PASS } from '../step';
import type { Step, Verdict, WorkItem } from '../step';

/**
 * Filter semantics (docs/design.md §2, AllSource-compatible): a missing field drops the event for every
 * op but `ne` (which keeps it) and `exists` (whose subject it is). `gt`/`lt`/`gte`/`lte` compare
 * numbers only; `contains` is substring on strings and membership on arrays. Policies only
 * change anything when they say `error`: the event then goes to the dead-letter topic instead.
 */
export function compileFilter(operator: FilterOperator, label: string): Step {
  const get = compileGetter(operator.field);
  const { op, value } = operator;
  const missingIsError = operator.on_missing === 'error';
  const invalidIsError = operator.on_invalid === 'error';
  const missing = (item: WorkItem, keep: boolean): Verdict => {
    if (missingIsError) {
      item.reason = `${label}: field ${operator.field} is missing`;
      return FAILED;
    }
    return keep ? PASS : FILTERED;
  };
  const invalid = (item: WorkItem, actual: unknown): Verdict => {
    if (invalidIsError) {
      item.reason = `${label}: field ${operator.field} is ${describeType(actual)}, ${op} needs ${needs(op)}`;
      return FAILED;
    }
    return FILTERED;
  };

  switch (op) {
    case 'eq':
    case 'ne': {
      const keepOnEqual = op === 'eq';
      const primitive = value === null || typeof value !== 'object';
      return (item) => {
        const actual = get(item.envelope);
        if (actual === undefined) return missing(item, op === 'ne');
        const equal = primitive ? actual === value : jsonEqual(actual, value);
        return equal === keepOnEqual ? PASS : FILTERED;
      };
    }
    case 'gt':
    case 'lt':
    case 'gte':
    case 'lte': {
      const bound = value as number;
      const test = comparators[op];
      return (item) => {
        const actual = get(item.envelope);
        if (actual === undefined) return missing(item, false);
        if (typeof actual !== 'number') return invalid(item, actual);
        return test(actual, bound) ? PASS : FILTERED;
      };
    }
    case 'contains':
      return (item) => {
        const actual = get(item.envelope);
        if (actual === undefined) return missing(item, false);
        if (typeof actual === 'string') {
          if (typeof value !== 'string') return invalid(item, actual);
          return actual.includes(value) ? PASS : FILTERED;
        }
        if (Array.isArray(actual))
          return actual.some((element) => jsonEqual(element, value)) ? PASS : FILTERED;
        return invalid(item, actual);
      };
    case 'in': {
      const options = value as unknown[];
      const primitives = options.every((option) => option === null || typeof option !== 'object');
      const set = primitives ? new Set(options) : undefined;
      return (item) => {
        const actual = get(item.envelope);
        if (actual === undefined) return missing(item, false);
        const found = set ? set.has(actual) : options.some((option) => jsonEqual(option, actual));
        return found ? PASS : FILTERED;
      };
    }
    case 'exists': {
      const wanted = value !== false;
      return (item) => ((get(item.envelope) !== undefined) === wanted ? PASS : FILTERED);
    }
  }
}

const comparators = {
  gt: (a: number, b: number) => a > b,
  lt: (a: number, b: number) => a < b,
  gte: (a: number, b: number) => a >= b,
  lte: (a: number, b: number) => a <= b,
};

function needs(op: string): string {
  return op === 'contains' ? 'a string or an array' : 'a number';
}

export function describeType(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
