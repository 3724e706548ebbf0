import type { EventEnvelope, JoinResult, ReduceResult, WindowResult } from '@sluice/contracts';

import type { PartialAggregate } from './combiner';

/** One event's contribution to a stateful operator, after the stateless steps ran. */
export interface StageInput {
  group: string | null;
  route: string | undefined;
  value: number;
  /** Event time, epoch ms. */
  time: number;
  /** The (transformed) event: a join keeps it; an aggregate only reports it if it is late. */
  envelope: EventEnvelope;
  /** A join's input: the side it enters (`group` is then the join key). */
  side?: 'left' | 'right';
  /** A join's input: unique among its side's records (a repeat is ignored). */
  id?: string;
}

/** An event that arrived after every window it belongs to had fired (docs/design.md §3). */
export interface LateRecord {
  pipeline_id: string;
  /** A join's: the join key. */
  group: string | null;
  route?: string;
  /** A join's: the side the event came in on. */
  side?: 'left' | 'right';
  event_time: string;
  watermark: string;
  event: EventEnvelope;
}

/** Where a stage sends what it produces. Keys are the result keys of docs/design.md §3. */
export interface StageEmitter {
  result(key: string, record: ReduceResult | WindowResult | JoinResult): void;
  late(key: string, record: LateRecord): void;
  /**
   * An event a stage refuses under an `error` policy (a join's record with no table row), with
   * its key and the id it came with (the processor's: its repartition offset).
   */
  refused?(refusal: { reason: string; event: EventEnvelope; key: string; id: string }): void;
}

/** A state change to mirror to the changelog: `value: null` is a deletion (a tombstone). */
export interface StateEntry {
  key: string;
  value: unknown;
}

/**
 * A stateful operator (reduce, window or join) for the groups of one input partition. Its state is
 * plain data addressed by string keys, so it can be mirrored to a compacted changelog topic and
 * restored key by key.
 */
export interface StatefulStage {
  add(input: StageInput): void;
  /** Merges inputs a combiner folded upstream (see `combiner.ts`). */
  addPartial(partial: PartialAggregate): void;
  /**
   * The input's event time advanced (for a partition fed by several upstreams: the minimum over
   * them of the largest event time each has seen). Windows whose end the watermark (this time
   * minus the allowed lateness) reaches fire.
   */
  advanceTo(eventTime: number): void;
  /** The wall clock ticked: a stage idle past `idle_timeout_seconds` flushes its windows. */
  onWallClock(now: number): void;
  /** End of input: every open window fires (the reference run's last step). */
  flush(): void;
  /** The current watermark, epoch ms (-Infinity before any event time). */
  watermark(): number;
  /** Number of state entries (windows, sessions or groups) held. */
  size(): number;
  /** Changes since the last call (only when created with `trackChanges`). */
  drainChanges(): StateEntry[];
  /** Every state entry, for a full snapshot. */
  snapshot(): StateEntry[];
  snapshotKey(key: string): unknown;
  /** The keys `snapshot` would give, where the stage can list them without their values. */
  stateKeys?(): string[];
  /** Applies entries in order (a later entry for a key wins; `null` deletes). */
  restore(entries: Iterable<StateEntry>): void;
  /**
   * Whether a restored entry of `key` may come as a `JsonText` (json-text.ts), parsed when
   * the stage needs it; every other entry's value comes parsed. Without it, all come parsed.
   */
  restoresJsonText?(key: string): boolean;
  clear(): void;
  /**
   * With `replayInputs` (a stage that keeps inputs out of its changelog): an input read again
   * after a restore, taken if the stage held it at the commit restored, else ignored.
   */
  replay?(input: StageInput): void;
  /**
   * With `replayInputs`: the id of the oldest input the stage holds outside its changelog
   * (`undefined`: none); a restore must read the inputs again from it on.
   */
  replayFrom?(): string | undefined;
}

export const WATERMARK_KEY = '~watermark';

/** The state key of a (route, group) pair; unambiguous for any strings. */
export function groupStateKey(route: string | undefined, group: string | null): string {
  const groupPart = group === null ? 'n' : `g${group}`;
  return route === undefined ? groupPart : `r${route.length}:${route}${groupPart}`;
}

/** The inverse of `groupStateKey`. */
export function parseGroupStateKey(stateKey: string): {
  route: string | undefined;
  group: string | null;
} {
  let route: string | undefined;
  let rest = stateKey;
  if (rest[0] === 'r') {
    const colon = rest.indexOf(':');
    const length = Number(rest.slice(1, colon));
    route = rest.slice(colon + 1, colon + 1 + length);
    rest = rest.slice(colon + 1 + length);
  }
  if (rest === 'n') return { route, group: null };
  if (rest[0] !== 'g') throw new Error(`not a group state key: ${stateKey}`);
  return { route, group: rest.slice(1) };
}

/** docs/design.md §3: a result's key is its group key (null group: the pipeline id), route first if any. */
export function resultKey(
  pipelineId: string,
  route: string | undefined,
  group: string | null,
): string {
  const groupKey = group ?? pipelineId;
  return route === undefined ? groupKey : `${route}/${groupKey}`;
}

/** A result's or late record's time: as Date#toISOString writes it. */
export { iso } from './iso-time';
