// The examples' expected outputs (examples/*/expected.jsonl, shown in the README) are what the
// reference run emits for their events. UPDATE_EXAMPLES=1 rewrites them after a deliberate change.
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

import {
  parseDefinitionText,
  validateDefinition,
  validateGraphDefinition,
} from '@sluice/contracts';
import { lookupTablesFrom, planOfGraph, runGraphReference, runReference } from '@sluice/operators';

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
/** The examples written as graphs: events per source (`<source>.jsonl`), results per sink. */
const GRAPHS = ['revenue-by-route'];
const linear = examples.filter((name) => !GRAPHS.includes(name));

describe('examples', () => {
  it('has the five documented examples', () => {
    expect(examples.sort()).toEqual([
      'daily-revenue',
      'enriched-orders',
      'fraud-router',
      'revenue-by-route',
      'sessionized-clicks',
    ]);
  });

  it.each(GRAPHS)('%s: each sink’s expected output is the reference run of the graph', (name) => {
    const dir = join(EXAMPLES_DIR, name);
    const parsed = parseDefinitionText(readFileSync(join(dir, 'pipeline.yaml'), 'utf8'), 'yaml');
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const validation = validateGraphDefinition(parsed.documents[0]);
    if (!validation.valid) throw new Error(JSON.stringify(validation.errors));
    const { graph } = validation;
    const events = graph.sources.flatMap((source) =>
      readLines(join(dir, `${source.id}.jsonl`)).map((event) => ({ source: source.id, event })),
    );
    const run = runGraphReference(planOfGraph(graph), events);
    for (const sink of graph.sinks) {
      const { results, late } = run.sinks[sink.id]!;
      const actual = results.map((record) => JSON.stringify(record.value)).join('\n') + '\n';
      const expectedPath = join(dir, 'expected', `${sink.id}.jsonl`);
      if (process.env['UPDATE_EXAMPLES']) writeFileSync(expectedPath, actual);
      expect({ sink: sink.id, results: actual }).toEqual({
        sink: sink.id,
        results: readFileSync(expectedPath, 'utf8'),
      });
      expect(results.length).toBeGreaterThan(0);
      expect(late).toEqual([]);
    }
  });

  it.each(linear)('%s: the expected output is the reference run of its events', (name) => {
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
