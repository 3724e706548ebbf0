import { closeSync, createReadStream, existsSync, openSync, readSync } from 'node:fs';
import { createInterface } from 'node:readline';

import { CliError } from '../errors';

/** A line of a JSONL file, parsed, with its line number for messages. */
export interface JsonLine {
  line: number;
  value: unknown;
}

/** Streams a JSONL file (`-` is standard input); blank lines are skipped, a bad line is an error. */
export async function* readJsonLines(path: string): AsyncGenerator<JsonLine> {
  const input = path === '-' ? process.stdin : openFile(path);
  const lines = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  for await (const text of lines) {
    line += 1;
    if (text.trim().length === 0) continue;
    try {
      yield { line, value: JSON.parse(text) };
    } catch (error) {
      throw new CliError(`${path}:${line} is not JSON: ${(error as Error).message}`);
    }
  }
}

export async function readAllJsonLines(path: string): Promise<unknown[]> {
  const values: unknown[] = [];
  for await (const { value } of readJsonLines(path)) values.push(value);
  return values;
}

/** Counts the lines without holding the file, for a progress bar's total (0: unknown). */
export function countLines(path: string): number {
  if (path === '-') return 0;
  const fd = openSync(path, 'r');
  try {
    const chunk = Buffer.allocUnsafe(1 << 20);
    let lines = 0;
    let last = 0x0a;
    for (let read: number; (read = readSync(fd, chunk, 0, chunk.length, null)) > 0;) {
      for (let i = 0; i < read; i += 1) if (chunk[i] === 0x0a) lines += 1;
      last = chunk[read - 1]!;
    }
    return last === 0x0a ? lines : lines + 1;
  } finally {
    closeSync(fd);
  }
}

function openFile(path: string) {
  if (!existsSync(path)) throw new CliError(`${path}: no such file`);
  return createReadStream(path);
}
