import type { EnrichOperator } from '@sluice/contracts';

import { compileGetter, compileSetter } from '../paths';
import { PASS, policyVerdict } from '../step';
import type { Step } from '../step';

/**
 * The lookup tables enrich reads. The operator library only reads; the processor backs this
 * with compacted topics held in memory, tests and the reference run with plain objects.
 */
export interface LookupTables {
  /** The record stored under `key` in table `source`, if any. */
  get(source: string, key: string): Readonly<Record<string, unknown>> | undefined;
}

/** Lookup tables from plain objects: `{ customers: { 'c-1': { tier: 'gold' } } }`. */
export function lookupTablesFrom(
  tables: Record<string, Record<string, Record<string, unknown>>>,
): LookupTables {
  const maps = new Map(
    Object.entries(tables).map(([name, rows]) => [name, new Map(Object.entries(rows))]),
  );
  return { get: (source, key) => maps.get(source)?.get(key) };
}

export const NO_LOOKUPS: LookupTables = { get: () => undefined };

/** AllSource's enrich has no `key`; it looks up the event's entity. */
export const DEFAULT_ENRICH_KEY = '$.entity_id';

/**
 * Enrich (docs/design.md §2): looks the `key` field's value up in table `source` and copies `fields`
 * from the match into the payload. A missing key field or no match follows `on_missing`
 * (default: the event leaves the pipeline, counted as skipped); a key that is neither a string
 * nor a number follows `on_invalid`. A field the match lacks is not copied.
 */
export function compileEnrich(operator: EnrichOperator, label: string, tables: LookupTables): Step {
  const keyPath = operator.key ?? DEFAULT_ENRICH_KEY;
  const getKey = compileGetter(keyPath);
  const fields = operator.fields.map((field) => ({ field, set: compileSetter(field) }));
  return (item) => {
    const key = getKey(item.envelope);
    if (key === undefined) {
      return policyVerdict(item, operator.on_missing, `${label}: key field ${keyPath} is missing`);
    }
    if (typeof key !== 'string' && typeof key !== 'number') {
      return policyVerdict(
        item,
        operator.on_invalid,
        `${label}: key field ${keyPath} must be a string or a number`,
      );
    }
    const match = tables.get(operator.source, String(key));
    if (match === undefined) {
      return policyVerdict(
        item,
        operator.on_missing,
        `${label}: no ${JSON.stringify(String(key))} in lookup table ${operator.source}`,
      );
    }
    for (const { field, set } of fields) {
      const value = match[field];
      if (value !== undefined) set(item.envelope, value);
    }
    return PASS;
  };
}
