import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** A pino JSON line at warn (40), error (50) or fatal (60). */
const WARNING_OR_WORSE = /"level":(4|5|6)0[,}]/;
/** kafkajs says it as every transactional producer is created: no evidence of anything. */
const NOISE = /Limiting retries for the idempotent producer/;

/**
 * The warnings and errors of the `*.log` files under `directory` (the newest files first, at
 * most `perFile` lines each, each cut to 600 characters): what a failed run's post-mortem reads
 * first, printed beside the failure instead of left in files CI throws away.
 */
export function logWarnings(directory: string, { files = 8, perFile = 15 } = {}): string {
  let names: string[];
  try {
    names = readdirSync(directory, { recursive: true, encoding: 'utf8' });
  } catch {
    return `(no logs in ${directory})`;
  }
  const logs = names
    .filter((name) => name.endsWith('.log'))
    .map((name) => join(directory, name))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)
    .slice(0, files);
  return logs
    .map((file) => {
      const lines = readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => WARNING_OR_WORSE.test(line) && !NOISE.test(line))
        .slice(-perFile)
        .map((line) => line.slice(0, 600));
      return `--- ${file}: ${lines.length === 0 ? 'no warnings' : `last ${lines.length} warnings and errors`}\n${lines.join('\n')}`;
    })
    .join('\n');
}
