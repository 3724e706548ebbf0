import Ajv from 'ajv';
import type { ErrorObject } from 'ajv';

import type { Operator, PipelineDefinition, PipelineDefinitionInput } from './definition';
import { OPERATOR_TYPES, PipelineDefinitionSchema } from './definition';
import { formatPath, pointerSegments } from './errors';
import type { ValidationIssue } from './errors';

export type DefinitionValidation =
  | { valid: true; definition: PipelineDefinition; errors: [] }
  | { valid: false; errors: ValidationIssue[] };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const ajv = new Ajv({ allErrors: true, discriminator: true, verbose: true, strict: true });
ajv.addFormat('uuid', UUID);
ajv.addVocabulary(['x-message']);
const checkShape = ajv.compile<PipelineDefinitionInput>(PipelineDefinitionSchema);

/**
 * Validates a definition (already parsed from JSON or YAML) and fills in the defaults.
 * Every problem is reported with its JSON path; nothing stops at the first one.
 */
export function validateDefinition(input: unknown): DefinitionValidation {
  if (!checkShape(input)) return { valid: false, errors: shapeIssues(checkShape.errors ?? []) };
  const issues = semanticIssues(input);
  if (issues.length > 0) return { valid: false, errors: issues };
  return {
    valid: true,
    errors: [],
    definition: {
      id: input.id ?? globalThis.crypto.randomUUID(),
      name: input.name,
      description: input.description ?? null,
      source_event_types: input.source_event_types ?? [],
      operators: input.operators,
      enabled: input.enabled ?? true,
      output: input.output,
    },
  };
}

function shapeIssues(errors: ErrorObject[]): ValidationIssue[] {
  // A failed anyOf/oneOf reports each alternative's errors, then its own: keep only the latter.
  const unionPaths = errors
    .filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf')
    .map((e) => e.schemaPath);
  const issues = new Map<string, ValidationIssue>();
  for (const error of errors) {
    if (unionPaths.some((p) => error.schemaPath.startsWith(`${p}/`))) continue;
    const issue = describe(error);
    issues.set(`${issue.path}\0${issue.message}`, issue);
  }
  return [...issues.values()];
}

function describe(error: ErrorObject): ValidationIssue {
  const segments = pointerSegments(error.instancePath);
  const custom = (error.parentSchema as Record<string, unknown> | undefined)?.['x-message'];
  const at = (extra?: string) => formatPath(extra === undefined ? segments : [...segments, extra]);
  switch (error.keyword) {
    case 'required':
      return { path: at(error.params['missingProperty']), message: 'is required' };
    case 'additionalProperties':
      return { path: at(error.params['additionalProperty']), message: 'is not a known field' };
    case 'discriminator': {
      const tag = error.params['tag'] as string;
      if (error.params['tagValue'] === undefined) return { path: at(tag), message: 'is required' };
      return {
        path: at(tag),
        message: `must be one of ${OPERATOR_TYPES.join(', ')}`,
      };
    }
    case 'enum':
      return {
        path: at(),
        message: `must be one of ${(error.params['allowedValues'] as unknown[]).join(', ')}`,
      };
    case 'const':
      return { path: at(), message: `must be ${JSON.stringify(error.params['allowedValue'])}` };
    case 'exclusiveMinimum':
      return { path: at(), message: `must be greater than ${error.params['limit']}` };
    case 'minimum':
      return { path: at(), message: `must be at least ${error.params['limit']}` };
    case 'minItems':
      return { path: at(), message: `must have at least ${error.params['limit']} item(s)` };
    case 'minProperties':
      return { path: at(), message: `must have at least ${error.params['limit']} entry` };
    case 'minLength':
      return { path: at(), message: 'must not be empty' };
    case 'format':
      return { path: at(), message: `must be a ${error.params['format']}` };
    case 'type':
      return { path: at(), message: (custom as string) ?? `must be ${error.params['type']}` };
    default:
      return {
        path: at(),
        message: typeof custom === 'string' ? custom : (error.message ?? 'is invalid'),
      };
  }
}

function semanticIssues(input: PipelineDefinitionInput): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  input.operators.forEach((operator, index) => {
    const base = ['operators', index] as Array<string | number>;
    const issue = (path: Array<string | number>, message: string) =>
      issues.push({ path: formatPath([...base, ...path]), message });
    checkOperator(operator, issue);
    const stateful = operator.type === 'reduce' || operator.type === 'window';
    if (stateful && index !== input.operators.length - 1) {
      issue(
        ['type'],
        `a ${operator.type} must be the last operator: its output is a result, not an event`,
      );
    }
  });
  return issues;
}

type Report = (path: Array<string | number>, message: string) => void;

function checkOperator(operator: Operator, issue: Report): void {
  switch (operator.type) {
    case 'filter': {
      const { op, value } = operator;
      if (op === 'exists') {
        if (value !== undefined && typeof value !== 'boolean')
          issue(['value'], 'must be true or false for exists');
      } else if (value === undefined) {
        issue(['value'], `is required for ${op}`);
      } else if (op === 'gt' || op === 'lt' || op === 'gte' || op === 'lte') {
        if (typeof value !== 'number' || !Number.isFinite(value))
          issue(['value'], `must be a finite number for ${op}`);
      } else if (op === 'in' && !Array.isArray(value)) {
        issue(['value'], 'must be an array for in');
      }
      return;
    }
    case 'map': {
      const [, operand] = operator.transform.split(':');
      if (operand !== undefined && !Number.isFinite(Number(operand))) {
        issue(['transform'], 'must have a finite number after the colon');
      }
      return;
    }
    case 'reduce':
      checkReduce(operator, [], issue);
      return;
    case 'window': {
      const { window_type, size_seconds, slide_seconds, session_timeout_seconds } = operator.config;
      if (window_type === 'session') {
        if (session_timeout_seconds == null)
          issue(['config', 'session_timeout_seconds'], 'is required for a session window');
      } else {
        if (size_seconds === undefined)
          issue(['config', 'size_seconds'], `is required for a ${window_type} window`);
        if (window_type === 'sliding' && slide_seconds == null) {
          issue(['config', 'slide_seconds'], 'is required for a sliding window');
        }
        if (slide_seconds != null && size_seconds !== undefined && slide_seconds > size_seconds) {
          issue(
            ['config', 'slide_seconds'],
            'must not exceed size_seconds: records would fall between windows',
          );
        }
      }
      for (const key of [
        'size_seconds',
        'slide_seconds',
        'session_timeout_seconds',
        'allowed_lateness_seconds',
      ] as const) {
        const seconds = operator.config[key];
        if (typeof seconds === 'number' && !Number.isInteger(seconds * 1000)) {
          issue(['config', key], 'must be a whole number of milliseconds');
        }
      }
      checkReduce(operator.aggregation, ['aggregation'], issue);
      return;
    }
    case 'branch':
    case 'enrich':
      return;
  }
}

function checkReduce(
  reduce: Extract<Operator, { type: 'reduce' }>,
  base: Array<string | number>,
  issue: Report,
): void {
  if (reduce.function !== 'count' && reduce.field === undefined) {
    issue([...base, 'field'], `is required for ${reduce.function}`);
  }
}

export const definitionJsonSchema = PipelineDefinitionSchema;
