// A join in a graph definition (issue 17, docs/design.md §9 "Joins"): the graph's one fan-in.
// Two streams make an interval join (Flink's interval join, Kafka Streams' KStream-KStream join);
// a stream and a source read `as: table` make a stream-table join, the row current at the stream
// record's event time (Flink's temporal join). Either way the output is results, read by sinks.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';

import { FIELD_PATH_PATTERN } from './definition';

export const JOIN_KINDS = ['inner', 'left', 'outer'] as const;
export const ON_MISSING_ROW = ['skip', 'error', 'emit'] as const;
/** What a join's `select` may name: a field path inside one side's payload. */
export const SELECT_PATTERN = '^(left|right)\\.[^.\\s]+(\\.[^.\\s]+)*$';
/** The fields every join result has; a `select` may not name its own fields so. */
export const JOIN_RESULT_FIELDS = ['pipeline_id', 'join', 'key', 'event_time', 'epoch'] as const;

const literals = <T extends readonly string[]>(values: T) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values] });

const FieldPath = Type.String({
  pattern: FIELD_PATH_PATTERN,
  'x-message': 'must be a field path such as `customer.tier` or `$.entity_id`',
});

const Seconds = (minimum: 'positive' | 'zero') =>
  Type.Number(
    minimum === 'positive'
      ? { exclusiveMinimum: 0, 'x-message': 'must be a number of seconds greater than 0' }
      : { minimum: 0, 'x-message': 'must be a number of seconds, 0 or more' },
  );

/** A join's own fields; the graph places it with an `id` and its `inputs`, `[left, right]`. */
export const JoinOperatorSchema = Type.Object(
  {
    type: Type.Literal('join'),
    /** The join key: one path for both sides, or one each. */
    on: Type.Union([FieldPath, Type.Object({ left: FieldPath, right: FieldPath })], {
      'x-message': 'must be a field path, or { left: <path>, right: <path> }',
    }),
    within_seconds: Type.Optional(Seconds('positive')),
    before_seconds: Type.Optional(Seconds('zero')),
    after_seconds: Type.Optional(Seconds('zero')),
    kind: Type.Optional(literals(JOIN_KINDS)),
    on_missing: Type.Optional(literals(ON_MISSING_ROW)),
    select: Type.Optional(
      Type.Record(
        Type.String({ pattern: '^[a-zA-Z_][a-zA-Z0-9_]{0,63}$' }),
        Type.String({
          pattern: SELECT_PATTERN,
          'x-message': 'must be left.<path> or right.<path>, a field of that side’s payload',
        }),
        { minProperties: 1 },
      ),
    ),
    allowed_lateness_seconds: Type.Optional(Seconds('zero')),
    /**
     * After this long without records an input stops holding the join's watermark back (a
     * table that rarely changes, say); absent, the join waits for both inputs' event time.
     */
    idle_timeout_seconds: Type.Optional(Seconds('positive')),
  },
  { additionalProperties: false },
);

export type JoinKind = (typeof JOIN_KINDS)[number];
export type OnMissingRow = (typeof ON_MISSING_ROW)[number];
export type JoinOperator = Static<typeof JoinOperatorSchema>;

/** A join placed in the graph: a right input that is a table source makes a stream-table join. */
export interface JoinTransform extends JoinOperator {
  id: string;
  inputs: [string, string];
}

/** The join key's path on each side. */
export function joinPaths(join: Pick<JoinOperator, 'on'>): { left: string; right: string } {
  return typeof join.on === 'string' ? { left: join.on, right: join.on } : join.on;
}

/** An interval join's bounds in ms: how far before and after a left record a right one may lie. */
export function joinInterval(
  join: Pick<JoinOperator, 'within_seconds' | 'before_seconds' | 'after_seconds'>,
): { beforeMs: number; afterMs: number } {
  const within = join.within_seconds;
  return {
    beforeMs: (join.before_seconds ?? within ?? 0) * 1000,
    afterMs: (join.after_seconds ?? within ?? 0) * 1000,
  };
}
