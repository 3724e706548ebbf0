// The graph form of a pipeline definition (headrace's model, docs/design.md §9): sources that
// name their topics, transforms that are the operators with an `id` and an `input`, and sinks
// that write a node's output to a topic. AllSource's linear form stays beside it, unchanged.
import { Type } from '@sinclair/typebox';
import type { Static, TObject, TProperties } from '@sinclair/typebox';

import {
  BranchOperatorSchema,
  EnrichOperatorSchema,
  FIELD_PATH_PATTERN,
  FilterOperatorSchema,
  MapOperatorSchema,
  ProcessorGroupSchema,
  ReduceOperatorSchema,
  TopicNameSchema,
  WindowOperatorSchema,
} from './definition';
import type { Operator } from './definition';
import { JoinOperatorSchema } from './join-definition';
import type { JoinTransform } from './join-definition';

/** Where a new pipeline starts reading a source (an ISO-8601 time backfills from then). */
export const SOURCE_STARTS = ['earliest', 'latest'] as const;

/** A node id: no dots, since `<branch>.<route>` addresses one route of a branch. */
export const NODE_ID_PATTERN = '^[a-zA-Z0-9_-]{1,64}$';

const NodeId = Type.String({
  pattern: NODE_ID_PATTERN,
  'x-message': 'must be an id of letters, digits, `_` and `-` (at most 64, no dots)',
});

/** An input: a node's id, or `<branch id>.<route>` for one route of a branch. */
const Input = Type.String({
  minLength: 1,
  'x-message': 'must name a source, a transform, or a branch route as <branch>.<route>',
});

/** How a source is read: a stream of events, or a table of the latest row per key. */
export const SOURCE_KINDS = ['stream', 'table'] as const;

export const GraphSourceSchema = Type.Object(
  {
    id: NodeId,
    topic: TopicNameSchema,
    event_types: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    as: Type.Optional(
      Type.Unsafe<(typeof SOURCE_KINDS)[number]>({
        type: 'string',
        enum: [...SOURCE_KINDS],
        'x-message': 'must be stream or table',
      }),
    ),
    /** A table's row key: the path each row's key is read at (default `$.entity_id`). */
    key: Type.Optional(
      Type.String({
        pattern: FIELD_PATH_PATTERN,
        'x-message': 'must be a field path such as `customer_id` or `$.entity_id`',
      }),
    ),
    start: Type.Optional(
      Type.String({
        minLength: 1,
        'x-message': 'must be earliest, latest or an ISO-8601 time',
      }),
    ),
  },
  { additionalProperties: false },
);

/** An operator's own fields plus its place in the graph. */
const asTransform = <T extends TProperties>(operator: TObject<T>) =>
  Type.Object(
    { id: NodeId, input: Input, ...operator.properties },
    { additionalProperties: false },
  );

const transformSchemas = [
  asTransform(FilterOperatorSchema),
  asTransform(MapOperatorSchema),
  asTransform(ReduceOperatorSchema),
  asTransform(WindowOperatorSchema),
  asTransform(BranchOperatorSchema),
  asTransform(EnrichOperatorSchema),
  // The one fan-in: two inputs, where every other transform has one.
  Type.Object(
    {
      id: NodeId,
      inputs: Type.Array(Input, {
        minItems: 2,
        maxItems: 2,
        'x-message': 'must be two inputs, [left, right]',
      }),
      ...JoinOperatorSchema.properties,
    },
    { additionalProperties: false },
  ),
];

export interface GraphPlace {
  id: string;
  input: string;
}

/** An operator placed in the graph, or a join. */
export type GraphTransform = (Operator & GraphPlace) | JoinTransform;

export function isJoin(transform: GraphTransform): transform is JoinTransform {
  return transform.type === 'join';
}

export const GraphTransformSchema = Type.Unsafe<GraphTransform>({
  type: 'object',
  discriminator: { propertyName: 'type' },
  oneOf: transformSchemas,
});

export const GraphSinkSchema = Type.Object(
  { id: NodeId, input: Input, topic: TopicNameSchema },
  { additionalProperties: false },
);

export const GraphDefinitionSchema = Type.Object(
  {
    // headrace's format version; the only one there is.
    version: Type.Optional(Type.Literal(1)),
    id: Type.Optional(Type.String({ format: 'uuid' })),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(
      Type.Union([Type.String(), Type.Null()], { 'x-message': 'must be a string or null' }),
    ),
    enabled: Type.Optional(Type.Boolean()),
    sources: Type.Array(GraphSourceSchema, { minItems: 1 }),
    transforms: Type.Optional(Type.Array(GraphTransformSchema)),
    sinks: Type.Array(GraphSinkSchema, { minItems: 1 }),
    processor_group: Type.Optional(ProcessorGroupSchema),
  },
  { additionalProperties: false },
);

export type GraphSource = Static<typeof GraphSourceSchema>;
export type SourceKind = (typeof SOURCE_KINDS)[number];

export function isTableSource(source: Pick<GraphSource, 'as'>): boolean {
  return source.as === 'table';
}

/**
 * Where a source starts when it names no `start`: a stream at its creation, a table at the
 * topic's beginning (a table read from now would miss every row written before).
 */
export function defaultStart(source: Pick<GraphSource, 'as'>): 'earliest' | 'latest' {
  return isTableSource(source) ? 'earliest' : 'latest';
}
export type GraphSink = Static<typeof GraphSinkSchema>;
export type GraphDefinitionInput = Static<typeof GraphDefinitionSchema>;

/** A validated graph with every default filled in. */
export interface PipelineGraph {
  id: string;
  name: string;
  description: string | null;
  enabled: boolean;
  /** `as` stays as written (absent: a stream), so graphs stored before tables read back the same. */
  sources: Array<GraphSource & { event_types: string[]; start: string }>;
  transforms: GraphTransform[];
  sinks: GraphSink[];
  processor_group?: string;
}

/** The keys only the graph form has. */
export const GRAPH_KEYS = ['sources', 'transforms', 'sinks'] as const;

/**
 * A document with a graph key and neither `operators` nor `output` is read as a graph; with
 * those, it is the linear form, whose validation names a stray graph key as unknown.
 */
export function isGraphInput(input: unknown): boolean {
  return (
    input !== null &&
    typeof input === 'object' &&
    !Array.isArray(input) &&
    GRAPH_KEYS.some((key) => key in input) &&
    !('operators' in input) &&
    !('output' in input)
  );
}

/** `router.gbp` → `{ node: 'router', route: 'gbp' }`; a plain id has no route. */
export function parseInput(input: string): { node: string; route: string | undefined } {
  const dot = input.indexOf('.');
  return dot < 0
    ? { node: input, route: undefined }
    : { node: input.slice(0, dot), route: input.slice(dot + 1) };
}
