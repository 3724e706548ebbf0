import Table from 'cli-table3';
import { stringify } from 'yaml';

import { CliError } from '../errors';

export type OutputFormat = 'table' | 'json' | 'yaml';

export function outputFormat(value: string | undefined): OutputFormat {
  const format = value ?? 'table';
  if (format === 'table' || format === 'json' || format === 'yaml') return format;
  throw new CliError(`unknown output format "${format}": use json or yaml (or leave -o out)`);
}

/** Where commands write: standard output by default, a buffer in unit tests. */
export interface Printer {
  line(text?: string): void;
}

export const stdoutPrinter: Printer = { line: (text = '') => process.stdout.write(`${text}\n`) };

/** A kubectl-style table: no borders, upper-case headers, columns padded to their widest cell. */
export function renderTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const table = new Table({
    head: headers.map((h) => h.toUpperCase()),
    chars: {
      top: '',
      'top-mid': '',
      'top-left': '',
      'top-right': '',
      bottom: '',
      'bottom-mid': '',
      'bottom-left': '',
      'bottom-right': '',
      left: '',
      'left-mid': '',
      mid: '',
      'mid-mid': '',
      right: '',
      'right-mid': '',
      middle: '   ',
    },
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0, compact: true },
  });
  table.push(...rows.map((row) => [...row]));
  return table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n');
}

export function renderStructured(value: unknown, format: 'json' | 'yaml'): string {
  return format === 'json' ? JSON.stringify(value, null, 2) : stringify(value).trimEnd();
}

/** 1234567 → "1,234,567"; counters read better grouped. */
export function count(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** How long ago an ISO time was, as kubectl's AGE column: 45s, 12m, 3h, 2d. */
export function age(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '-';
  const seconds = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}
