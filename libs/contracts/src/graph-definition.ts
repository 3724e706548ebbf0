// The graph form of a pipeline definition (headrace's model, docs/design.md §9): sources that
// name their topics, transforms that are the operators with an `id` and an `input`, and sinks
// that write a node's output to a topic. AllSource's linear form stays beside it, unchanged.
import { Type } from '@sinclair/typebox';
import type { Static, TObject, TProperties } from '@sinclair/typebox';

import {
  BranchOperatorSchema,
  EnrichOperatorSchema,
  FilterOperatorSchema,
  MapOperatorSchema,
  ProcessorGroupSchema,
  ReduceOperatorSchema,
  TopicNameSchema,
  WindowOperatorSchema,
} from './definition';
import type { Operator } from './definition';

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

export const GraphSourceSchema = Type.Object(
  {
    id: NodeId,
    topic: TopicNameSchema,
    event_types: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
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
];

export interface GraphPlace {
  id: string;
  input: string;
}

/** An operator placed in the graph. */
export type GraphTransform = Operator & GraphPlace;

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
export type GraphSink = Static<typeof GraphSinkSchema>;
export type GraphDefinitionInput = Static<typeof GraphDefinitionSchema>;

/** A validated graph with every default filled in. */
export interface PipelineGraph {
  id: string;
  name: string;
  description: string | null;
  enabled: boolean;
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
