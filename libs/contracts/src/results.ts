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

export type ResultRecord = EventResult | ReduceResult | WindowResult;

/** A record bound for a Kafka topic: the key (group key, or pipeline id) and the JSON value. */
export interface KeyedResult {
  key: string;
  value: ResultRecord;
}
