import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';

import { parseDefinitionText } from '@sluice/contracts';
import type { DefinitionFormat } from '@sluice/contracts';

import { CliError } from '../errors';

/** One definition document and where it came from, for messages (`orders.yaml#2`). */
export interface DefinitionDocument {
  file: string;
  origin: string;
  document: unknown;
}

/** One problem of one file: `line` as printed (`orders.yaml#2: operators[1].op: must be …`). */
export interface FileProblem {
  file: string;
  line: string;
}

/** What `-f` holds: the documents read, and the problems of each file that could not be read. */
export interface DefinitionFiles {
  documents: DefinitionDocument[];
  problems: FileProblem[];
}

const DEFINITION_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/**
 * The documents behind `-f`: files, directories (their .yaml/.yml/.json files, sorted; with
 * `recursive`, those of subdirectories too, as kubectl's -R) or `-` for standard input. A file
 * may hold several documents. A file that does not parse is reported and the others are read:
 * one bad file must not hide the problems of the rest.
 */
export function readDefinitionDocuments(
  paths: readonly string[],
  options: { recursive?: boolean } = {},
): DefinitionFiles {
  if (paths.length === 0) throw new CliError('no definitions given: use -f <file|dir>');
  const documents: DefinitionDocument[] = [];
  const problems: FileProblem[] = [];
  for (const path of paths.flatMap((p) => expandPath(p, options.recursive ?? false))) {
    let text: string;
    try {
      text = path === '-' ? readFileSync(0, 'utf8') : readFileSync(path, 'utf8');
    } catch (error) {
      // Unreadable (permissions, a vanished file): a problem of that file, not the end of the run.
      problems.push({
        file: displayName(path),
        line: `${displayName(path)}: cannot be read: ${(error as Error).message}`,
      });
      continue;
    }
    const format: DefinitionFormat = extname(path).toLowerCase() === '.json' ? 'json' : 'yaml';
    const parsed = parseDefinitionText(text, format);
    if (!parsed.ok) {
      for (const error of parsed.errors)
        problems.push({
          file: displayName(path),
          line: `${displayName(path)}: ${error.path}: ${error.message}`,
        });
      continue;
    }
    parsed.documents.forEach((document, index) => {
      const origin =
        parsed.documents.length > 1 ? `${displayName(path)}#${index + 1}` : displayName(path);
      documents.push({ file: displayName(path), origin, document });
    });
  }
  if (documents.length === 0 && problems.length === 0) {
    const hint = options.recursive ? '' : ' (-R reads subdirectories too)';
    throw new CliError(`no definitions in ${paths.join(', ')}${hint}`);
  }
  return { documents, problems };
}

function expandPath(path: string, recursive: boolean): string[] {
  if (path === '-') return [path];
  let isDirectory: boolean;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    throw new CliError(`${path}: no such file or directory`);
  }
  if (!isDirectory) return [path];
  const entries = readdirSync(path, { withFileTypes: true }).sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  return entries.flatMap((entry) => {
    const child = join(path, entry.name);
    if (entry.isDirectory()) return recursive ? expandPath(child, true) : [];
    return DEFINITION_EXTENSIONS.has(extname(entry.name).toLowerCase()) ? [child] : [];
  });
}

function displayName(path: string): string {
  return path === '-' ? 'stdin' : path;
}
