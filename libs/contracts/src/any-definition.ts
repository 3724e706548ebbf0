// A pipeline definition in either form (docs/design.md §2, §9): AllSource's linear form, whose
// sources are the processor group's SOURCE_TOPICS and whose one sink is `output`, or headrace's
// graph. Code that stores, broadcasts or runs definitions takes either through these helpers.
import type { PipelineDefinition } from './definition';
import type { ValidationIssue } from './errors';
import { isGraphInput } from './graph-definition';
import type { PipelineGraph } from './graph-definition';
import { lateTopic } from './topics';
import { validateDefinition } from './validate-definition';
import type { DefinitionValidationOptions } from './validate-definition';
import { validateGraphDefinition } from './validate-graph';

export type AnyPipelineDefinition = PipelineDefinition | PipelineGraph;

export type AnyDefinitionValidation =
  | { valid: true; definition: AnyPipelineDefinition; errors: []; warnings: ValidationIssue[] }
  | { valid: false; errors: ValidationIssue[]; warnings: ValidationIssue[] };

export function isGraph(definition: AnyPipelineDefinition): definition is PipelineGraph {
  return 'sources' in definition;
}

/** Validates a document in whichever form it is written (see `isGraphInput`). */
export function validateAnyDefinition(
  input: unknown,
  options: DefinitionValidationOptions = {},
): AnyDefinitionValidation {
  if (!isGraphInput(input)) return validateDefinition(input, options);
  const result = validateGraphDefinition(input, options);
  if (!result.valid) return result;
  return { valid: true, definition: result.graph, errors: [], warnings: result.warnings };
}

/** The topics a pipeline publishes results to: the linear form's output, each graph sink's. */
export function resultTopicsOf(definition: AnyPipelineDefinition): string[] {
  const topics = isGraph(definition)
    ? definition.sinks.map((sink) => sink.topic)
    : [definition.output];
  return [...new Set(topics)];
}

/** Every topic a pipeline writes: its result topics and, beside each, `<topic>.late`. */
export function outputTopicsOf(definition: AnyPipelineDefinition): string[] {
  return resultTopicsOf(definition).flatMap((topic) => [topic, lateTopic(topic)]);
}

/**
 * What a pipeline's state means: its transforms and what it reads (not where it writes, nor its
 * name). Two definitions with the same meaning share state; a change of meaning starts a new
 * state epoch. Compare with `canonicalJson`, so key order never matters.
 */
export function stateMeaning(definition: AnyPipelineDefinition): unknown[] {
  if (!isGraph(definition))
    return [definition.operators, [...definition.source_event_types].sort()];
  return [
    // A table's kind and key join the meaning only when present: streams' epochs stay as they were.
    definition.sources.map(({ id, topic, event_types, as, key }) => [
      id,
      topic,
      [...event_types].sort(),
      ...(as === 'table' ? [as, key ?? null] : []),
    ]),
    definition.transforms,
  ];
}
