// The examples' expected outputs (examples/*/expected.jsonl, shown in the README) are what the
// reference run emits for their events. UPDATE_EXAMPLES=1 rewrites them after a deliberate change.
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

import { parseDefinitionText, validateDefinition } from '@sluice/contracts';
import { lookupTablesFrom, runReference } from '@sluice/operators';

export const EXAMPLES_DIR = join(__dirname, '../../../examples');

function readLines(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const examples = readdirSync(EXAMPLES_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

describe('examples', () => {
  it('has the four documented examples', () => {
    expect(examples.sort()).toEqual([
      'daily-revenue',
      'enriched-orders',
      'fraud-router',
      'sessionized-clicks',
    ]);
  });

  it.each(examples)('%s: the expected output is the reference run of its events', (name) => {
    const dir = join(EXAMPLES_DIR, name);
    const parsed = parseDefinitionText(readFileSync(join(dir, 'pipeline.yaml'), 'utf8'), 'yaml');
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const validation = validateDefinition(parsed.documents[0]);
    if (!validation.valid) throw new Error(JSON.stringify(validation.errors));
    const tablePath = join(dir, 'customers.jsonl');
    const tables: Record<string, Record<string, Record<string, unknown>>> = existsSync(tablePath)
      ? {
          customers: Object.fromEntries(
            readLines(tablePath).map((row) => [String(row['customer_id']), row]),
          ),
        }
      : {};
    const run = runReference(validation.definition, readLines(join(dir, 'events.jsonl')), {
      lookups: lookupTablesFrom(tables),
    });
    const actual = run.results.map((record) => JSON.stringify(record.value)).join('\n') + '\n';
    const expectedPath = join(dir, 'expected.jsonl');
    if (process.env['UPDATE_EXAMPLES']) writeFileSync(expectedPath, actual);
    expect(actual).toBe(readFileSync(expectedPath, 'utf8'));
    expect(run.results.length).toBeGreaterThan(0);
    expect(run.late).toEqual([]);
  });
});
