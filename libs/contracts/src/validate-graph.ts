import type { DefinitionContext } from './definition-checks';
import { checkGraph } from './graph-checks';
import { defaultStart, GraphDefinitionSchema } from './graph-definition';
import type { GraphDefinitionInput, PipelineGraph } from './graph-definition';
import type { ValidationIssue } from './errors';
import { DEFAULT_TOPIC_PREFIX } from './topics';
import { ajv, reportOf } from './validate-definition';
import type { DefinitionValidationOptions } from './validate-definition';

export type GraphValidation =
  | { valid: true; graph: PipelineGraph; errors: []; warnings: ValidationIssue[] }
  | { valid: false; errors: ValidationIssue[]; warnings: ValidationIssue[] };

const checkShape = ajv.compile<GraphDefinitionInput>(GraphDefinitionSchema);

/**
 * Validates a graph definition (docs/design.md §9) and fills in the defaults, reporting every
 * problem once with its JSON path in document order, as `validateDefinition` does for the
 * linear form. `sourceTopics` does not apply: a graph names its own sources.
 */
export function validateGraphDefinition(
  input: unknown,
  options: DefinitionValidationOptions = {},
): GraphValidation {
  const context: DefinitionContext = {
    topicPrefix: options.topicPrefix ?? DEFAULT_TOPIC_PREFIX,
    sourceTopics: [],
  };
  const shapeValid = checkShape(input);
  const { errors, warnings } = reportOf(
    input,
    shapeValid ? [] : (checkShape.errors ?? []),
    checkGraph(input, context),
  );
  if (!shapeValid || errors.length > 0) return { valid: false, errors, warnings };
  return { valid: true, errors: [], warnings, graph: withDefaults(input as GraphDefinitionInput) };
}

function withDefaults(input: GraphDefinitionInput): PipelineGraph {
  return {
    id: input.id ?? globalThis.crypto.randomUUID(),
    name: input.name,
    description: input.description ?? null,
    enabled: input.enabled ?? true,
    sources: input.sources.map((source) => ({
      ...source,
      event_types: source.event_types ?? [],
      start: source.start ?? defaultStart(source),
    })),
    transforms: input.transforms ?? [],
    sinks: input.sinks,
    ...(input.processor_group === undefined ? {} : { processor_group: input.processor_group }),
  };
}
