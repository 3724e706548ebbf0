import type { AnyPipelineDefinition } from './any-definition';

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

/** Every field of either form that says what a pipeline does (not where the admin keeps it). */
const DEFINITION_FIELDS = [
  'id',
  'name',
  'description',
  'source_event_types',
  'operators',
  'enabled',
  'output',
  'sources',
  'transforms',
  'sinks',
] as const;

/**
 * Whether two definitions say the same thing, whatever their key order (YAML vs stored JSON)
 * and whatever else rides along (a stored pipeline's version and times). The admin's idempotent
 * create and the CLI's `apply … unchanged` share this one rule. A linear and a graph definition
 * are never the same.
 */
export function sameDefinition(a: AnyPipelineDefinition, b: AnyPipelineDefinition): boolean {
  const field = (definition: AnyPipelineDefinition, name: string): unknown =>
    (definition as unknown as Record<string, unknown>)[name];
  return DEFINITION_FIELDS.every(
    (name) => canonicalJson(field(a, name)) === canonicalJson(field(b, name)),
  );
}
