import { setTimeout as sleep } from 'node:timers/promises';

import type { PipelineStatsView } from '@sluice/contracts';

import type { AdminClient } from '../admin-client';
import type { OutputFormat, Printer } from '../output/printer';
import { age, count, renderStructured, renderTable } from '../output/printer';
import { findPipeline, listPipelines } from '../pipelines';

export async function runStats(
  admin: AdminClient,
  reference: string | undefined,
  options: { format: OutputFormat; watchSeconds: number | undefined },
  out: Printer,
): Promise<void> {
  for (;;) {
    const text = await statsText(admin, reference, options.format);
    if (options.watchSeconds === undefined) {
      out.line(text);
      return;
    }
    // Redraw in place on a terminal; a pipe gets one block after another.
    if (process.stdout.isTTY) process.stdout.write('\x1b[2J\x1b[H');
    out.line(`Every ${options.watchSeconds}s, ${new Date().toISOString()}   (Ctrl-C to stop)\n`);
    out.line(text);
    await sleep(options.watchSeconds * 1000);
  }
}

async function statsText(
  admin: AdminClient,
  reference: string | undefined,
  format: OutputFormat,
): Promise<string> {
  const pipelines = reference ? [await findPipeline(admin, reference)] : await listPipelines(admin);
  const names = new Map(pipelines.map((p) => [p.id, p.name]));
  const stats = reference
    ? [(await admin.request<PipelineStatsView>('GET', `/pipelines/${pipelines[0]!.id}/stats`)).body]
    : (await admin.request<{ stats: PipelineStatsView[] }>('GET', '/pipelines/stats')).body.stats;
  if (format !== 'table') return renderStructured(reference ? stats[0] : stats, format);
  return statsTable(stats, names, reference !== undefined);
}

export function statsTable(
  stats: readonly PipelineStatsView[],
  names: ReadonlyMap<string, string>,
  withProcessors: boolean,
  now = Date.now(),
): string {
  if (stats.length === 0) return 'No pipelines yet.';
  const summary = renderTable(
    [
      'name',
      'processed',
      'filtered',
      'failed',
      'late',
      'results',
      'dlq',
      'lag',
      'last event',
      'processors',
    ],
    stats.map((s) => [
      names.get(s.pipeline_id) ?? s.pipeline_id,
      count(s.events_processed),
      count(s.events_filtered),
      count(s.events_failed),
      count(s.late_events),
      count(s.results_emitted),
      count(s.dead_lettered),
      count(s.lag),
      s.last_processed ?? '-',
      `${s.processors.filter((p) => !p.stale).length}/${s.processors.length}`,
    ]),
  );
  if (!withProcessors || stats[0]!.processors.length === 0) return summary;
  const processors = renderTable(
    ['processor', 'processed', 'results', 'lag', 'reported', 'state'],
    stats[0]!.processors.map((p) => [
      p.processor_id,
      count(p.events_processed),
      count(p.results_emitted),
      count(p.lag),
      `${age(p.reported_at, now)} ago`,
      p.stale ? 'stale' : 'live',
    ]),
  );
  return `${summary}\n\n${processors}`;
}
