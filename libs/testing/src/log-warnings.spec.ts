import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { logWarnings } from './log-warnings';

describe('logWarnings', () => {
  it('keeps the warn, error and fatal lines of every log file, nested ones too', () => {
    const directory = mkdtempSync(join(tmpdir(), 'sluice-log-warnings-'));
    mkdirSync(join(directory, 'nested'));
    writeFileSync(
      join(directory, 'r0.log'),
      ['{"level":30,"msg":"info"}', '{"level":40,"msg":"warned"}', 'plain text'].join('\n'),
    );
    writeFileSync(join(directory, 'nested', 'r1.log'), '{"level":50,"msg":"failed"}\n');
    writeFileSync(join(directory, 'notes.txt'), '{"level":60,"msg":"not a log file"}\n');

    const text = logWarnings(directory);

    expect(text).toContain('"msg":"warned"');
    expect(text).toContain('"msg":"failed"');
    expect(text).not.toContain('"msg":"info"');
    expect(text).not.toContain('not a log file');
  });

  it('keeps only the last lines of each file', () => {
    const directory = mkdtempSync(join(tmpdir(), 'sluice-log-warnings-'));
    const lines = Array.from({ length: 30 }, (_, i) => `{"level":50,"msg":"e${i}"}`);
    writeFileSync(join(directory, 'r0.log'), lines.join('\n'));

    const text = logWarnings(directory, { perFile: 3 });

    expect(text).toContain('"msg":"e29"');
    expect(text).toContain('"msg":"e27"');
    expect(text).not.toContain('"msg":"e26"');
  });

  it('says so when there is no such directory', () => {
    expect(logWarnings('/nonexistent/sluice-logs')).toContain('no logs');
  });
});
