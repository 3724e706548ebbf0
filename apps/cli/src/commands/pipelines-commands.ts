import { isGraph, resultTopicsOf } from '@sluice/contracts';
import type { StoredPipeline } from '@sluice/contracts';

import type { AdminClient } from '../admin-client';
import type { OutputFormat, Printer } from '../output/printer';
import { age, renderStructured, renderTable } from '../output/printer';
import { findPipeline, listPipelines } from '../pipelines';

export async function runGet(
  admin: AdminClient,
  reference: string | undefined,
  format: OutputFormat,
  out: Printer,
): Promise<void> {
  const pipelines = reference ? [await findPipeline(admin, reference)] : await listPipelines(admin);
  if (format !== 'table') {
    out.line(renderStructured(reference ? pipelines[0] : pipelines, format));
    return;
  }
  if (pipelines.length === 0) {
    out.line('No pipelines yet: sluice apply -f <file|dir> creates them.');
    return;
  }
  out.line(pipelineTable(pipelines));
}

export function pipelineTable(pipelines: readonly StoredPipeline[], now = Date.now()): string {
  return renderTable(
    ['name', 'id', 'version', 'enabled', 'events', 'operators', 'output', 'age'],
    pipelines.map((p) => [
      p.name,
      p.id,
      String(p.version),
      p.enabled ? 'yes' : 'no',
      eventsOf(p),
      (isGraph(p) ? p.transforms : p.operators).map((o) => o.type).join('→'),
      resultTopicsOf(p).join(','),
      age(p.updated_at, now),
    ]),
  );
}

/** What a pipeline reads: its event types (a graph's, per source topic). */
function eventsOf(pipeline: StoredPipeline): string {
  const types = (list: readonly string[]) => (list.length > 0 ? list.join(',') : '*');
  if (!isGraph(pipeline)) return types(pipeline.source_event_types);
  return pipeline.sources.map((s) => `${s.topic}:${types(s.event_types)}`).join(' ');
}

export async function runDelete(
  admin: AdminClient,
  reference: string,
  out: Printer,
): Promise<void> {
  const pipeline = await findPipeline(admin, reference);
  await admin.request('DELETE', `/pipelines/${pipeline.id}`);
  out.line(`pipeline/${pipeline.name} deleted`);
}

export async function runReset(admin: AdminClient, reference: string, out: Printer): Promise<void> {
  const pipeline = await findPipeline(admin, reference);
  await admin.request('PUT', `/pipelines/${pipeline.id}/reset`);
  out.line(`pipeline/${pipeline.name} reset: every processor clears its state and counters`);
}

/** `sluice replay <pipeline> --from <time|earliest>`: the pipeline alone, again, in a new epoch. */
export async function runReplay(
  admin: AdminClient,
  reference: string,
  from: string,
  out: Printer,
): Promise<void> {
  const pipeline = await findPipeline(admin, reference);
  const { body } = await admin.request<{ epoch: string }>(
    'POST',
    `/pipelines/${pipeline.id}/replay`,
    { body: { from } },
  );
  out.line(
    `pipeline/${pipeline.name} replays from ${from} in epoch ${body.epoch}: its results carry that epoch, and \`sluice stats\` shows its lag as it catches up`,
  );
}
