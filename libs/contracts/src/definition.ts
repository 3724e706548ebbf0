// The pipeline definition: AllSource Core's `PipelineConfig` shape, accepted verbatim, plus
// Sluice's additions (docs/design.md §2). The TypeBox schemas are the single source of both the static
// types and the JSON Schema that validation (ajv) and the admin's OpenAPI document use.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';

export const FILTER_OPS = [
  'eq',
  'ne',
  'gt',
  'lt',
  'gte',
  'lte',
  'contains',
  'in',
  'exists',
] as const;
export const REDUCE_FUNCTIONS = ['count', 'sum', 'avg', 'min', 'max'] as const;
export const WINDOW_TYPES = ['tumbling', 'sliding', 'session'] as const;
export const EMIT_MODES = ['final', 'update'] as const;
export const POLICIES = ['skip', 'error'] as const;
export const OPERATOR_TYPES = ['filter', 'map', 'reduce', 'window', 'branch', 'enrich'] as const;

/** `uppercase`, `lowercase`, `trim`, `multiply:<n>`, `add:<n>` (n a finite decimal number). */
export const TRANSFORM_PATTERN =
  '^(uppercase|lowercase|trim|(multiply|add):[-+]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][-+]?\\d+)?)$';

/** Dot-separated path inside `payload`, or `$.`-prefixed path into the whole event. */
export const FIELD_PATH_PATTERN = '^(\\$\\.)?[^.\\s]+(\\.[^.\\s]+)*$';

/** A closed set of strings as one `enum` (one clear error, not one per alternative). */
const literals = <T extends readonly string[]>(values: T) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values] });

const FieldPath = Type.String({
  pattern: FIELD_PATH_PATTERN,
  description: 'a dot-separated path inside payload, or a $.path into the whole event',
  'x-message': 'must be a field path such as `customer.tier` or `$.entity_id`',
});

/** A name Kafka takes for a topic; `topic-names.ts` says why a name is refused. */
export const TopicNameSchema = Type.String({
  minLength: 1,
  maxLength: 249,
  pattern: '^[a-zA-Z0-9._-]+$',
  'x-message': 'must be a Kafka topic name (letters, digits, `.`, `_`, `-`; at most 249)',
});

/** The processor group (CONSUMER_GROUP) a pipeline runs on when it names none. */
export const DEFAULT_PROCESSOR_GROUP = 'sluice-processor';

/** A processor group: the CONSUMER_GROUP of the replicas that run a pipeline. */
export const ProcessorGroupSchema = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^[a-zA-Z0-9._-]+$',
  'x-message': 'must be a processor group, a CONSUMER_GROUP (letters, digits, `.`, `_`, `-`)',
});

const policies = {
  on_missing: Type.Optional(literals(POLICIES)),
  on_invalid: Type.Optional(literals(POLICIES)),
};

export const FilterOperatorSchema = Type.Object(
  {
    type: Type.Literal('filter'),
    field: FieldPath,
    op: literals(FILTER_OPS),
    value: Type.Optional(Type.Unknown()),
    ...policies,
  },
  { additionalProperties: false },
);

export const MapOperatorSchema = Type.Object(
  {
    type: Type.Literal('map'),
    field: FieldPath,
    transform: Type.String({
      pattern: TRANSFORM_PATTERN,
      'x-message': 'must be uppercase, lowercase, trim, multiply:<number> or add:<number>',
    }),
    ...policies,
  },
  { additionalProperties: false },
);

export const ReduceOperatorSchema = Type.Object(
  {
    type: Type.Literal('reduce'),
    field: Type.Optional(FieldPath),
    function: literals(REDUCE_FUNCTIONS),
    // null is AllSource's `Option::None`: no grouping, as when absent.
    group_by: Type.Optional(
      Type.Union([FieldPath, Type.Array(FieldPath, { minItems: 1 }), Type.Null()], {
        'x-message': 'must be a field path, a non-empty array of field paths, or null',
      }),
    ),
    ...policies,
  },
  { additionalProperties: false },
);

const positiveOrNull = Type.Union([Type.Number({ exclusiveMinimum: 0 }), Type.Null()], {
  'x-message': 'must be a number greater than 0',
});

export const WindowConfigSchema = Type.Object(
  {
    window_type: literals(WINDOW_TYPES),
    size_seconds: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    slide_seconds: Type.Optional(positiveOrNull),
    session_timeout_seconds: Type.Optional(positiveOrNull),
    allowed_lateness_seconds: Type.Optional(Type.Number({ minimum: 0 })),
    idle_timeout_seconds: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
  },
  { additionalProperties: false },
);

export const WindowOperatorSchema = Type.Object(
  {
    type: Type.Literal('window'),
    config: WindowConfigSchema,
    aggregation: ReduceOperatorSchema,
    emit: Type.Optional(literals(EMIT_MODES)),
    ...policies,
  },
  { additionalProperties: false },
);

export const BranchOperatorSchema = Type.Object(
  {
    type: Type.Literal('branch'),
    field: FieldPath,
    branches: Type.Record(Type.String(), Type.String({ minLength: 1 }), { minProperties: 1 }),
    ...policies,
  },
  { additionalProperties: false },
);

export const EnrichOperatorSchema = Type.Object(
  {
    type: Type.Literal('enrich'),
    source: Type.String({ minLength: 1 }),
    /** The event field whose value is looked up; AllSource configs omit it: `$.entity_id`. */
    key: Type.Optional(FieldPath),
    fields: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
    ...policies,
  },
  { additionalProperties: false },
);

const operatorSchemas = [
  FilterOperatorSchema,
  MapOperatorSchema,
  ReduceOperatorSchema,
  WindowOperatorSchema,
  BranchOperatorSchema,
  EnrichOperatorSchema,
];

/** One of the six operators, told apart by `type` (an ajv discriminator: one branch's errors). */
export const OperatorSchema = Type.Unsafe<
  | Static<typeof FilterOperatorSchema>
  | Static<typeof MapOperatorSchema>
  | Static<typeof ReduceOperatorSchema>
  | Static<typeof WindowOperatorSchema>
  | Static<typeof BranchOperatorSchema>
  | Static<typeof EnrichOperatorSchema>
>({
  type: 'object',
  discriminator: { propertyName: 'type' },
  oneOf: operatorSchemas,
});

export const PipelineDefinitionSchema = Type.Object(
  {
    id: Type.Optional(Type.String({ format: 'uuid' })),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(
      Type.Union([Type.String(), Type.Null()], { 'x-message': 'must be a string or null' }),
    ),
    source_event_types: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    operators: Type.Array(OperatorSchema),
    enabled: Type.Optional(Type.Boolean()),
    output: TopicNameSchema,
    processor_group: Type.Optional(ProcessorGroupSchema),
  },
  { additionalProperties: false },
);

export type FilterOp = (typeof FILTER_OPS)[number];
export type ReduceFunction = (typeof REDUCE_FUNCTIONS)[number];
export type WindowType = (typeof WINDOW_TYPES)[number];
export type EmitMode = (typeof EMIT_MODES)[number];
export type Policy = (typeof POLICIES)[number];

export type FilterOperator = Static<typeof FilterOperatorSchema>;
export type MapOperator = Static<typeof MapOperatorSchema>;
export type ReduceOperator = Static<typeof ReduceOperatorSchema>;
export type WindowConfig = Static<typeof WindowConfigSchema>;
export type WindowOperator = Static<typeof WindowOperatorSchema>;
export type BranchOperator = Static<typeof BranchOperatorSchema>;
export type EnrichOperator = Static<typeof EnrichOperatorSchema>;
export type Operator = Static<typeof OperatorSchema>;

/** A definition as a user writes it: optional fields may be absent. */
export type PipelineDefinitionInput = Static<typeof PipelineDefinitionSchema>;

/** A validated definition with every default filled in. */
export interface PipelineDefinition {
  id: string;
  name: string;
  description: string | null;
  source_event_types: string[];
  operators: Operator[];
  enabled: boolean;
  output: string;
  /** Absent: DEFAULT_PROCESSOR_GROUP (kept as written, so a definition reads back unchanged). */
  processor_group?: string;
}

/** The processor group whose replicas run `definition`. */
export function processorGroupOf(definition: { processor_group?: string }): string {
  return definition.processor_group ?? DEFAULT_PROCESSOR_GROUP;
}
