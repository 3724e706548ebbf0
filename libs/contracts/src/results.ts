// Result records published to a pipeline's output topic (docs/design.md §3).
import type { EventEnvelope } from './event';
import type { ReduceFunction } from './definition';

/** A stateless pipeline's output: the transformed event with its pipeline and route. */
export interface EventResult extends EventEnvelope {
  pipeline_id: string;
  route?: string;
}

/** A reduce's running value for one group, emitted on every update. */
export interface ReduceResult {
  pipeline_id: string;
  group: string | null;
  function: ReduceFunction;
  value: number;
  route?: string;
}

/** A window's value for one group; `final` once the watermark passed the window's end. */
export interface WindowResult {
  pipeline_id: string;
  group: string | null;
  function: ReduceFunction;
  value: number;
  count: number;
  window: { start: string; end: string };
  final: boolean;
  route?: string;
}

/**
 * A join's output (docs/design.md §9 "Joins"): a matched pair, or an unmatched record of a left
 * or outer join (its other side null), with both payloads or the fields its `select` names.
 * Keyed by the join key; `event_time` is the later of the two records' times.
 */
export interface JoinResult {
  pipeline_id: string;
  /** The join node's id. */
  join: string;
  key: string;
  event_time: string;
  left?: Record<string, unknown> | null;
  right?: Record<string, unknown> | null;
  /** A `select`'s fields. */
  [selected: string]: unknown;
}

export type ResultRecord = EventResult | ReduceResult | WindowResult | JoinResult;

/** A record bound for a Kafka topic: the key (group key, or pipeline id) and the JSON value. */
export interface KeyedResult {
  key: string;
  value: ResultRecord;
}
