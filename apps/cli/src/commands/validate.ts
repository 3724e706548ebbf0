import { validateDefinition } from '@sluice/contracts';
import type { PipelineDefinition } from '@sluice/contracts';

import { CliError } from '../errors';
import type { DefinitionDocument } from '../io/definition-files';
import type { Printer } from '../output/printer';

export interface ValidDocument {
  origin: string;
  /** The id the document gives; absent means "match by name" when applying. */
  givenId: string | undefined;
  definition: PipelineDefinition;
  document: unknown;
}

/**
 * Validates every document with the admin's own rules (the same library, so this works without
 * an admin) and reports every problem of every file before anything is changed.
 */
export function validateDocuments(documents: readonly DefinitionDocument[]): ValidDocument[] {
  const problems: string[] = [];
  const valid: ValidDocument[] = [];
  for (const { origin, document } of documents) {
    const validation = validateDefinition(document);
    if (!validation.valid) {
      for (const error of validation.errors)
        problems.push(`${origin}: ${error.path}: ${error.message}`);
      continue;
    }
    const givenId = (document as { id?: string }).id;
    valid.push({ origin, givenId, definition: validation.definition, document });
  }
  if (problems.length > 0) {
    const invalid = documents.length - valid.length;
    throw new CliError(
      `${invalid} of ${documents.length} definition${documents.length === 1 ? ' is' : 's are'} invalid`,
      problems,
    );
  }
  return valid;
}

export function runValidate(documents: readonly DefinitionDocument[], out: Printer): void {
  for (const { origin, definition } of validateDocuments(documents)) {
    out.line(`${origin}: pipeline/${definition.name} is valid`);
  }
}
