import type { ReduceFunction } from '@sluice/contracts';

import { exactSumAdd, exactSumValue } from './exact-sum';

/**
 * An accumulator: plain data, so state snapshots are JSON. `n` counts the values added; `p` are
 * the exact-sum partials (sum, avg); `v` is the running min or max.
 */
export interface Accumulator {
  n: number;
  p?: number[];
  v?: number;
}

export interface Aggregator {
  readonly fn: ReduceFunction;
  create(): Accumulator;
  add(acc: Accumulator, value: number): void;
  /** Folds `from` into `into`: merging session windows. */
  merge(into: Accumulator, from: Accumulator): void;
  result(acc: Accumulator): number;
}

const count: Aggregator = {
  fn: 'count',
  create: () => ({ n: 0 }),
  add: (acc) => {
    acc.n += 1;
  },
  merge: (into, from) => {
    into.n += from.n;
  },
  result: (acc) => acc.n,
};

const sum: Aggregator = {
  fn: 'sum',
  create: () => ({ n: 0, p: [] }),
  add: (acc, value) => {
    acc.n += 1;
    exactSumAdd(acc.p!, value);
  },
  merge: (into, from) => {
    into.n += from.n;
    for (const partial of from.p!) exactSumAdd(into.p!, partial);
  },
  result: (acc) => exactSumValue(acc.p!),
};

const avg: Aggregator = {
  ...sum,
  fn: 'avg',
  result: (acc) => exactSumValue(acc.p!) / acc.n,
};

const extreme = (fn: 'min' | 'max', better: (a: number, b: number) => boolean): Aggregator => ({
  fn,
  create: () => ({ n: 0, v: 0 }),
  add: (acc, value) => {
    if (acc.n === 0 || better(value, acc.v!)) acc.v = value;
    acc.n += 1;
  },
  merge: (into, from) => {
    if (from.n === 0) return;
    if (into.n === 0 || better(from.v!, into.v!)) into.v = from.v;
    into.n += from.n;
  },
  result: (acc) => acc.v!,
});

const aggregators: Record<ReduceFunction, Aggregator> = {
  count,
  sum,
  avg,
  min: extreme('min', (a, b) => a < b),
  max: extreme('max', (a, b) => a > b),
};

export function aggregatorFor(fn: ReduceFunction): Aggregator {
  return aggregators[fn];
}

/** Recomputes a function over all values from scratch: the oracle for incremental results. */
export function aggregateAll(fn: ReduceFunction, values: readonly number[]): number {
  const aggregator = aggregatorFor(fn);
  const acc = aggregator.create();
  for (const value of values) aggregator.add(acc, value);
  return aggregator.result(acc);
}

export function copyAcc(acc: Accumulator): Accumulator {
  const copy: Accumulator = { n: acc.n };
  if (acc.p !== undefined) copy.p = acc.p.slice();
  if (acc.v !== undefined) copy.v = acc.v;
  return copy;
}
