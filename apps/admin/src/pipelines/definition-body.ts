import { parseDefinitionText, splitStoredFields, validateAnyDefinition } from '@sluice/contracts';
import type {
  AnyPipelineDefinition,
  DefinitionValidationOptions,
  StoredField,
  ValidationIssue,
} from '@sluice/contracts';

import { DomainError } from '../errors/domain-error';

/**
 * The request body as a definition document: JSON bodies arrive parsed, YAML bodies as text
 * (the YAML content-type parser registered in main.ts keeps them as strings).
 */
export function bodyDocument(body: unknown): unknown {
  if (body === undefined || body === null || body === '') {
    throw new DomainError(
      'invalid_body',
      'the request has no body; send a pipeline definition as JSON or YAML',
    );
  }
  if (typeof body !== 'string') return body;
  const parsed = parseDefinitionText(body, 'yaml');
  if (!parsed.ok)
    throw new DomainError('invalid_body', 'the body is not valid YAML', parsed.errors);
  if (parsed.documents.length !== 1) {
    throw new DomainError(
      'invalid_body',
      `expected one definition, found ${parsed.documents.length} YAML documents`,
    );
  }
  return parsed.documents[0];
}

export interface DefinitionBody {
  /** In either form: AllSource's linear one or a graph (docs/design.md §9). */
  definition: AnyPipelineDefinition;
  /** Defaults applied and fields ignored, each with its path. */
  warnings: ValidationIssue[];
  /** The read-only fields the body carried (a GET body sent back), to compare with the store. */
  stored: Partial<Record<StoredField, unknown>>;
}

/** Validates a definition document; a bad one is a 400 naming every problem's JSON path. */
export function definitionFromDocument(
  document: unknown,
  rules: DefinitionValidationOptions,
): DefinitionBody {
  const { definition, stored } = splitStoredFields(document);
  const result = validateAnyDefinition(definition, rules);
  if (!result.valid)
    throw new DomainError('validation_failed', describeIssues(result.errors), result.errors);
  return { definition: result.definition, warnings: result.warnings, stored };
}

export function prefixIssues(issues: ValidationIssue[], prefix: string): ValidationIssue[] {
  if (!prefix) return issues;
  return issues.map((issue) => ({
    ...issue,
    path: issue.path === '$' ? prefix : `${prefix}.${issue.path}`,
  }));
}

function describeIssues(issues: ValidationIssue[]): string {
  const first = issues[0]!;
  const more =
    issues.length > 1
      ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})`
      : '';
  return `invalid pipeline definition: ${first.path} ${first.message}${more}`;
}
