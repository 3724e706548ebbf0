import type { PipelineDefinition } from './definition';

/** A stable serialization (sorted keys, undefined members left out) for comparing by content. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const DEFINITION_FIELDS = [
  'id',
  'name',
  'description',
  'source_event_types',
  'operators',
  'enabled',
  'output',
] as const satisfies readonly (keyof PipelineDefinition)[];

/**
 * Whether two definitions say the same thing, whatever their key order (YAML vs stored JSON)
 * and whatever else rides along (a stored pipeline's version and times). The admin's idempotent
 * create and the CLI's `apply … unchanged` share this one rule.
 */
export function sameDefinition(a: PipelineDefinition, b: PipelineDefinition): boolean {
  return DEFINITION_FIELDS.every((field) => canonicalJson(a[field]) === canonicalJson(b[field]));
}
