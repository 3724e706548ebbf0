// The README's small chaos run: `npm run chaos` itself at 100K events, one kill at least and
// one broker restart, exactly as a user runs it, judged by its own report.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { logWarnings } from '@sluice/testing';

import type { ChaosReport } from './report';

const ROOT = join(__dirname, '..', '..');

describe('a small chaos run', () => {
  it('kills a replica and restarts the broker, and loses, duplicates and changes nothing', async () => {
    const out = mkdtempSync(join(tmpdir(), 'sluice-chaos-'));
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(ROOT, 'bench/chaos.ts'),
        '--events',
        '100000',
        '--min-kills',
        '1',
        // A run that does not settle fails on its own, with its account, within jest's timeout.
        '--settle-minutes',
        '4',
        '--out',
        out,
      ],
      {
        cwd: ROOT,
        env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'bench/tsconfig.json') },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    if (code !== 0)
      throw new Error(
        `npm run chaos exited with ${code}:\n${output.slice(-4000)}\n${logWarnings(out)}`,
      );

    const report = JSON.parse(readFileSync(join(out, 'chaos-report.json'), 'utf8')) as ChaosReport;
    // A failed verdict is read beside the processes' own account of the run.
    if (!report.ok) process.stderr.write(`chaos run failed; its logs:\n${logWarnings(out)}\n`);
    expect(report.ok).toBe(true);
    expect(report.kills.length).toBeGreaterThanOrEqual(1);
    expect(report.brokerRestart).toBeDefined();
    expect(report.crashes).toBe(0);
    expect(report.sourceRecords.inTopic).toBe(report.sourceRecords.expected);
    for (const pipeline of report.pipelines) {
      expect(pipeline.received).toBe(pipeline.expected);
      expect(pipeline).toMatchObject({ lost: 0, duplicated: 0, wrong: 0 });
    }
    expect(report.pipelines.map((p) => p.name)).toEqual([
      'daily-revenue',
      'hourly-average-by-region',
      'customer-sessions',
    ]);
    expect(readFileSync(join(out, 'chaos-summary.md'), 'utf8')).toContain('Verdict: PASS');
  });
});
