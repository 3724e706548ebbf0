import { splitStoredFields, validateAnyDefinition } from '@sluice/contracts';
import type { AnyPipelineDefinition, DefinitionValidationOptions } from '@sluice/contracts';

import { CliError } from '../errors';
import type { DefinitionFiles } from '../io/definition-files';
import type { Printer } from '../output/printer';

export interface ValidDocument {
  origin: string;
  /** The id the document gives; absent means "match by name" when applying. */
  givenId: string | undefined;
  /** In either form: AllSource's linear one or a graph (docs/design.md §9). */
  definition: AnyPipelineDefinition;
  /** The document as written, without the read-only fields a `get` output carries. */
  document: unknown;
  /** The read-only fields it carried (version…): the admin compares them on an update. */
  stored: Record<string, unknown>;
}

/**
 * Validates every document with the admin's own rules (the same library, so this works without
 * an admin) and reports every problem of every file, unreadable files included, before anything
 * is changed. Warnings (defaults applied, fields ignored) go to `warn`.
 */
export function validateDocuments(
  files: DefinitionFiles,
  rules: DefinitionValidationOptions,
  warn: (line: string) => void,
): ValidDocument[] {
  const problems = [...files.problems];
  const valid: ValidDocument[] = [];
  for (const { file, origin, document } of files.documents) {
    const { definition, stored } = splitStoredFields(document);
    const validation = validateAnyDefinition(definition, rules);
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
  for (const { origin, definition } of validateDocuments(files, rules, warn))
    out.line(`${origin}: pipeline/${definition.name} is valid`);
}
