// The chaos run's report: everything as JSON (chaos-report.json) and the verdict as a short
// Markdown summary (chaos-summary.md), both in the run's directory beside the process logs.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Verdict } from './verify';

export interface PipelineReport extends Verdict {
  id: string;
  name: string;
  output: string;
  late: { expected: number; received: number };
}

export interface ChaosReport {
  date: string;
  events: number;
  sourceRecords: { expected: number; inTopic: number };
  replicas: number;
  killEverySeconds: number;
  kills: Array<{ at: number; replica: string }>;
  /** Replicas frozen (SIGSTOP) past their session timeout, then resumed: zombies to fence. */
  freezes: Array<{ at: number; replica: string; seconds: number }>;
  brokers: number;
  /** Broker nodes SIGKILLed (no controlled shutdown), each started again. */
  brokerKills: Array<{ at: number; node: number; downSeconds: number }>;
  brokerRestart: { at: number; downSeconds: number } | undefined;
  /** Processes that exited with an error on their own (kills do not count). */
  crashes: number;
  produceSeconds: number;
  settleSeconds: number;
  totalSeconds: number;
  deadLetters: number;
  pipelines: PipelineReport[];
  logs: string;
  ok: boolean;
}

/** Problems that make the run fail; none means every claim held. */
export function problems(report: ChaosReport): string[] {
  const found: string[] = [];
  if (report.sourceRecords.inTopic !== report.sourceRecords.expected)
    found.push(
      `the source holds ${report.sourceRecords.inTopic} records, ${report.sourceRecords.expected} were produced`,
    );
  if (report.kills.length === 0) found.push('no replica was killed');
  if (report.brokers > 1 && report.brokerKills.length === 0)
    found.push('no broker node was killed');
  if (!report.brokerRestart) found.push('the broker was not restarted');
  if (report.crashes > 0) found.push(`${report.crashes} process crashes`);
  if (report.deadLetters > 0) found.push(`${report.deadLetters} valid events dead-lettered`);
  for (const p of report.pipelines) {
    if (p.lost + p.duplicated + p.wrong > 0)
      found.push(`${p.name}: ${p.lost} lost, ${p.duplicated} duplicated, ${p.wrong} wrong`);
    if (p.late.expected !== p.late.received)
      found.push(`${p.name}: ${p.late.received} late events, the reference has ${p.late.expected}`);
  }
  return found;
}

export function writeReport(
  report: ChaosReport | undefined,
  directory: string,
): { markdown: string; ok: boolean } {
  if (!report) return { markdown: 'chaos run did not finish; see the logs above', ok: false };
  const found = problems(report);
  report.ok = found.length === 0;
  const rows = report.pipelines.map(
    (p) =>
      `| ${p.name} | ${p.expected} | ${p.received} | ${p.lost} | ${p.duplicated} | ${p.wrong} | ${p.late.received} / ${p.late.expected} |`,
  );
  const markdown = [
    `# Chaos run, ${report.date}`,
    '',
    `- ${report.events.toLocaleString('en-GB')} orders to a 6-partition source keyed by customer (${report.sourceRecords.inTopic.toLocaleString('en-GB')} records in the topic with the end ticks)`,
    `- ${report.replicas} replicas; SIGKILL every ${report.killEverySeconds} s: ${report.kills.length} kills, each followed by a restart; ${report.crashes} crashes`,
    ...(report.freezes.length > 0
      ? [
          `- ${report.freezes.length} replicas frozen (SIGSTOP) past their session timeout, then resumed`,
        ]
      : []),
    `- ${report.brokers === 1 ? 'one broker' : `${report.brokers} broker nodes (replication ${Math.min(3, report.brokers)}, min ISR ${report.brokers < 3 ? 1 : 2})`}; ${report.brokerKills.length} broker SIGKILLs, each followed by a restart${report.brokerKills.length > 0 ? ` (down ${Math.min(...report.brokerKills.map((k) => k.downSeconds))}-${Math.max(...report.brokerKills.map((k) => k.downSeconds))} s)` : ''}`,
    `- ${report.brokers === 1 ? 'the broker' : 'the whole cluster'} restarted once (a controlled shutdown) at ${report.brokerRestart?.at ?? '—'} s (back after ${report.brokerRestart?.downSeconds ?? '—'} s)`,
    `- produced in ${report.produceSeconds.toFixed(1)} s; every record committed ${report.settleSeconds.toFixed(1)} s after the chaos stopped; ${report.totalSeconds.toFixed(0)} s in all`,
    `- dead-lettered: ${report.deadLetters}`,
    '',
    '| pipeline | expected results | received | lost | duplicated | wrong | late (received / reference) |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    report.ok
      ? '**Verdict: PASS** — the output equals the reference run.'
      : `**Verdict: FAIL** — ${found.join('; ')}`,
    '',
    `Logs and chaos-report.json: ${report.logs}`,
  ].join('\n');
  writeFileSync(join(directory, 'chaos-report.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(directory, 'chaos-summary.md'), `${markdown}\n`);
  return { markdown, ok: report.ok };
}
