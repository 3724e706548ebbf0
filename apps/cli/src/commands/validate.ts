import {
  GRAPH_NOT_RUN_YET,
  isGraphInput,
  splitStoredFields,
  validateDefinition,
  validateGraphDefinition,
} from '@sluice/contracts';
import type {
  DefinitionValidationOptions,
  PipelineDefinition,
  PipelineGraph,
} from '@sluice/contracts';

import { CliError } from '../errors';
import type { DefinitionFiles } from '../io/definition-files';
import type { Printer } from '../output/printer';

export interface ValidDocument {
  origin: string;
  /** The id the document gives; absent means "match by name" when applying. */
  givenId: string | undefined;
  definition: PipelineDefinition;
  /** The document as written, without the read-only fields a `get` output carries. */
  document: unknown;
  /** The read-only fields it carried (version…): the admin compares them on an update. */
  stored: Record<string, unknown>;
}

/**
 * Validates every document with the admin's own rules (the same library, so this works without
 * an admin) and reports every problem of every file, unreadable files included, before anything
 * is changed. Warnings (defaults applied, fields ignored) go to `warn`. A graph definition is
 * checked by its own rules; a valid one goes to `onGraph`, or, without it (apply: the
 * processor does not run graphs yet), is a problem of its file.
 */
export function validateDocuments(
  files: DefinitionFiles,
  rules: DefinitionValidationOptions,
  warn: (line: string) => void,
  onGraph?: (origin: string, graph: PipelineGraph) => void,
): ValidDocument[] {
  const problems = [...files.problems];
  const valid: ValidDocument[] = [];
  for (const { file, origin, document } of files.documents) {
    const { definition, stored } = splitStoredFields(document);
    if (isGraphInput(definition)) {
      const graph = validateGraphDefinition(definition, rules);
      for (const warning of graph.warnings) warn(`${origin}: ${warning.path}: ${warning.message}`);
      for (const error of graph.errors)
        problems.push({ file, line: `${origin}: ${error.path}: ${error.message}` });
      if (graph.valid && onGraph) onGraph(origin, graph.graph);
      else if (graph.valid) problems.push({ file, line: `${origin}: ${GRAPH_NOT_RUN_YET}` });
      continue;
    }
    const validation = validateDefinition(definition, rules);
    for (const warning of validation.warnings)
      warn(`${origin}: ${warning.path}: ${warning.message}`);
    if (!validation.valid) {
      for (const error of validation.errors)
        problems.push({ file, line: `${origin}: ${error.path}: ${error.message}` });
      continue;
    }
    const givenId = (definition as { id?: string }).id;
    valid.push({
      origin,
      givenId,
      definition: validation.definition,
      document: definition,
      stored,
    });
  }
  if (problems.length > 0) {
    const all = new Set([
      ...files.documents.map((d) => d.file),
      ...files.problems.map((p) => p.file),
    ]);
    const bad = new Set(problems.map((p) => p.file));
    throw new CliError(
      `${plural(problems.length, 'problem')} in ${bad.size} of ${plural(all.size, 'file')}; nothing was changed`,
      problems.map((p) => p.line),
    );
  }
  return valid;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

export function runValidate(
  files: DefinitionFiles,
  rules: DefinitionValidationOptions,
  out: Printer,
  warn: (line: string) => void,
): void {
  // In file order: the graphs are told of while the documents are read, the rest after.
  const lines = new Map<string, string>();
  const linear = validateDocuments(files, rules, warn, (origin, graph) =>
    lines.set(origin, `pipeline/${graph.name} is a valid graph (preview only: not run yet)`),
  );
  for (const { origin, definition } of linear)
    lines.set(origin, `pipeline/${definition.name} is valid`);
  for (const { origin } of files.documents) {
    const line = lines.get(origin);
    if (line) out.line(`${origin}: ${line}`);
  }
}
