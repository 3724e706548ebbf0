import { lateTopic, resultTopicsOf } from '@sluice/contracts';

import type { AdminClient } from '../admin-client';
import { CliError } from '../errors';
import { readAllJsonLines } from '../io/jsonl';
import type { OutputFormat, Printer } from '../output/printer';
import { count, renderStructured } from '../output/printer';
import type { ValidDocument } from './validate';

interface Outcome {
  dead_letters: { pipeline_id: string | null; reason: string; event: unknown }[];
  stats: Record<string, number>;
}

/** A linear definition's preview; a graph's answers per sink. */
export type PreviewAnswer =
  | (Outcome & { results: unknown[]; late: unknown[] })
  | (Outcome & { sinks: Record<string, { topic: string; results: unknown[]; late: unknown[] }> });

/** `--lookup customers=customers.jsonl:customer_id`: a lookup table for enrich, from a file. */
export interface LookupSpec {
  source: string;
  path: string;
  keyField: string;
}

export function parseLookupSpec(text: string): LookupSpec {
  const match = /^([^=]+)=(.+?)(?::([^:/\\]+))?$/.exec(text);
  if (!match) {
    throw new CliError(`--lookup takes <source>=<file.jsonl>[:<key field>], got "${text}"`);
  }
  return { source: match[1]!, path: match[2]!, keyField: match[3] ?? 'id' };
}

async function lookupTables(specs: readonly LookupSpec[]) {
  const tables: Record<string, Record<string, unknown>> = {};
  for (const spec of specs) {
    const rows: Record<string, unknown> = {};
    for (const row of await readAllJsonLines(spec.path)) {
      const key = (row as Record<string, unknown> | null)?.[spec.keyField];
      if (typeof key !== 'string' && typeof key !== 'number') {
        throw new CliError(`${spec.path}: a row without a string or number "${spec.keyField}"`);
      }
      rows[String(key)] = row;
    }
    tables[spec.source] = rows;
  }
  return tables;
}

/** What the admin's reference run emits for these events (docs/design.md §6 preview); nothing is stored. */
export async function runPreview(
  admin: AdminClient,
  document: ValidDocument,
  eventsPath: string,
  lookups: readonly LookupSpec[],
  format: OutputFormat,
  out: Printer,
): Promise<PreviewAnswer> {
  const events = await readAllJsonLines(eventsPath);
  const { body } = await admin.request<PreviewAnswer>('POST', '/pipelines/preview', {
    body: {
      pipeline: document.document,
      events,
      ...(lookups.length > 0 ? { tables: await lookupTables(lookups) } : {}),
    },
  });
  if (format !== 'table') {
    out.line(renderStructured(body, format));
    return body;
  }
  const sinks =
    'sinks' in body
      ? Object.entries(body.sinks).map(([id, sink]) => ({
          ...sink,
          label: ` to ${id} (${sink.topic})`,
        }))
      : [{ ...body, topic: resultTopicsOf(document.definition)[0]!, label: '' }];
  for (const { results, late, topic, label } of sinks) {
    out.line(`# ${results.length} results${label}`);
    for (const result of results) out.line(JSON.stringify(result));
    if (late.length === 0) continue;
    out.line(`# ${late.length} late (to ${lateTopic(topic)})`);
    for (const record of late) out.line(JSON.stringify(record));
  }
  if (body.dead_letters.length > 0) {
    out.line(`# ${body.dead_letters.length} dead letters`);
    for (const letter of body.dead_letters)
      out.line(`${letter.reason}: ${JSON.stringify(letter.event)}`);
  }
  out.line(
    `# ${Object.entries(body.stats)
      .filter(([, value]) => typeof value === 'number')
      .map(([name, value]) => `${name} ${count(value)}`)
      .join(', ')}`,
  );
  return body;
}
