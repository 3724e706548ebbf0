import Ajv from 'ajv';
import type { ErrorObject } from 'ajv';

import { checkDefinition } from './definition-checks';
import type { Finding, Findings } from './definition-checks';
import type { PipelineDefinition, PipelineDefinitionInput } from './definition';
import { OPERATOR_TYPES, PipelineDefinitionSchema } from './definition';
import { inDocumentOrder } from './document-order';
import { formatPath, pointerSegments } from './errors';
import type { ValidationIssue } from './errors';
import { DEFAULT_TOPIC_PREFIX } from './topics';

export interface DefinitionValidationOptions {
  /** SLUICE_TOPIC_PREFIX of the installation (default `sluice`). */
  topicPrefix?: string;
  /** The processors' source topics (default `events`): a pipeline may not write to them. */
  sourceTopics?: readonly string[];
}

export type DefinitionValidation =
  | { valid: true; definition: PipelineDefinition; errors: []; warnings: ValidationIssue[] }
  | { valid: false; errors: ValidationIssue[]; warnings: ValidationIssue[] };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const ajv = new Ajv({ allErrors: true, discriminator: true, verbose: true, strict: true });
ajv.addFormat('uuid', UUID);
ajv.addVocabulary(['x-message']);
const checkShape = ajv.compile<PipelineDefinitionInput>(PipelineDefinitionSchema);

/** The fields a definition gets when it does not write them, in this order after its own. */
const DEFAULTED_FIELDS = ['id', 'description', 'source_event_types', 'enabled'] as const;

/**
 * Validates a definition (already parsed from JSON or YAML) and fills in the defaults.
 * Every problem is reported once, with its JSON path, in document order: the shape's and the
 * rules' together. Warnings say where a default was applied or a field is ignored.
 */
export function validateDefinition(
  input: unknown,
  options: DefinitionValidationOptions = {},
): DefinitionValidation {
  const context = {
    topicPrefix: options.topicPrefix ?? DEFAULT_TOPIC_PREFIX,
    sourceTopics: options.sourceTopics ?? ['events'],
  };
  const shapeValid = checkShape(input);
  const { errors, warnings } = reportOf(
    input,
    shapeValid ? [] : (checkShape.errors ?? []),
    checkDefinition(input, context),
  );
  if (!shapeValid || errors.length > 0) return { valid: false, errors, warnings };
  return {
    valid: true,
    errors: [],
    warnings,
    definition: withDefaults(input as PipelineDefinitionInput),
  };
}

/** The shape's problems and the rules' together, each once, in document order. */
export function reportOf(
  input: unknown,
  shapeErrors: ErrorObject[],
  rules: Findings,
): { errors: ValidationIssue[]; warnings: ValidationIssue[] } {
  const shape = shapeFindings(shapeErrors);
  // Where the shape already names a field, a rule about it would say the same thing twice.
  const named = new Set(shape.map((finding) => JSON.stringify(finding.segments)));
  const findings = [
    ...shape,
    ...rules.errors.filter((f) => !named.has(JSON.stringify(f.segments))),
  ];
  return {
    errors: issuesOf(inDocumentOrder(input, findings)),
    warnings: issuesOf(inDocumentOrder(input, rules.warnings)),
  };
}

/** The definition as written (its keys in its order), then the defaults it did not write. */
function withDefaults(input: PipelineDefinitionInput): PipelineDefinition {
  const defaults: Pick<PipelineDefinition, (typeof DEFAULTED_FIELDS)[number]> = {
    id: input.id ?? globalThis.crypto.randomUUID(),
    description: input.description ?? null,
    source_event_types: input.source_event_types ?? [],
    enabled: input.enabled ?? true,
  };
  const definition = { ...input } as Record<string, unknown>;
  for (const field of DEFAULTED_FIELDS)
    if (definition[field] === undefined) definition[field] = defaults[field];
  return definition as unknown as PipelineDefinition;
}

/** Findings, each once, as the issues users read. */
function issuesOf(findings: Finding[]): ValidationIssue[] {
  const seen = new Set<string>();
  const issues: ValidationIssue[] = [];
  for (const { segments, message } of findings) {
    const path = formatPath(segments);
    const key = `${path}\0${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push({ path, message });
  }
  return issues;
}

function shapeFindings(errors: ErrorObject[]): Finding[] {
  // A failed anyOf/oneOf reports each alternative's errors, then its own: keep only the latter.
  const unionPaths = errors
    .filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf')
    .map((e) => e.schemaPath);
  return errors
    .filter((error) => !unionPaths.some((p) => error.schemaPath.startsWith(`${p}/`)))
    .map(describe);
}

function describe(error: ErrorObject): Finding {
  const segments = pointerSegments(error.instancePath);
  const custom = (error.parentSchema as Record<string, unknown> | undefined)?.['x-message'];
  const at = (extra?: string) => (extra === undefined ? segments : [...segments, extra]);
  switch (error.keyword) {
    case 'required':
      return { segments: at(error.params['missingProperty']), message: 'is required' };
    case 'additionalProperties':
      return { segments: at(error.params['additionalProperty']), message: 'is not a known field' };
    case 'discriminator': {
      const tag = error.params['tag'] as string;
      if (error.params['tagValue'] === undefined)
        return { segments: at(tag), message: 'is required' };
      return { segments: at(tag), message: `must be one of ${typesOf(error).join(', ')}` };
    }
    case 'enum':
      return {
        segments: at(),
        message: `must be one of ${(error.params['allowedValues'] as unknown[]).join(', ')}`,
      };
    case 'const':
      return { segments: at(), message: `must be ${JSON.stringify(error.params['allowedValue'])}` };
    case 'exclusiveMinimum':
      return { segments: at(), message: `must be greater than ${error.params['limit']}` };
    case 'minimum':
      return { segments: at(), message: `must be at least ${error.params['limit']}` };
    case 'minItems':
    case 'maxItems':
      return {
        segments: at(),
        message:
          typeof custom === 'string'
            ? custom
            : `must have ${error.keyword === 'minItems' ? 'at least' : 'at most'} ${error.params['limit']} item(s)`,
      };
    case 'minProperties':
      return { segments: at(), message: `must have at least ${error.params['limit']} entry` };
    case 'minLength':
      return { segments: at(), message: 'must not be empty' };
    case 'format':
      return { segments: at(), message: `must be a ${error.params['format']}` };
    case 'type':
      return { segments: at(), message: (custom as string) ?? `must be ${error.params['type']}` };
    default:
      return {
        segments: at(),
        message: typeof custom === 'string' ? custom : (error.message ?? 'is invalid'),
      };
  }
}

/** The `type`s a discriminated `oneOf` takes (the graph's transforms add `join` to the operators). */
function typesOf(error: ErrorObject): readonly string[] {
  const oneOf = (error.parentSchema as { oneOf?: Array<{ properties?: Record<string, unknown> }> })
    ?.oneOf;
  const types = (oneOf ?? []).map(
    (branch) => (branch.properties?.['type'] as { const?: unknown } | undefined)?.const,
  );
  return types.every((type) => typeof type === 'string') && types.length > 0
    ? (types as string[])
    : OPERATOR_TYPES;
}

export const definitionJsonSchema = PipelineDefinitionSchema;
