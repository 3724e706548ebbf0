import { parseAllDocuments } from 'yaml';

import type { ValidationIssue } from './errors';

export type DefinitionFormat = 'json' | 'yaml';

export type ParsedDocuments =
  { ok: true; documents: unknown[] } | { ok: false; errors: ValidationIssue[] };

/** `application/yaml`, `text/yaml`, `application/x-yaml` and `*+yaml` are YAML; the rest JSON. */
export function formatOfContentType(contentType: string | undefined): DefinitionFormat {
  const mediaType = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return /(^|[/+])(x-)?yaml$/.test(mediaType) ? 'yaml' : 'json';
}

/**
 * Parses definition text. YAML may hold several `---`-separated documents (as `kubectl apply`
 * files do); JSON may be one object or an array of them.
 */
export function parseDefinitionText(text: string, format: DefinitionFormat): ParsedDocuments {
  if (format === 'json') {
    try {
      const value: unknown = JSON.parse(text);
      return { ok: true, documents: Array.isArray(value) ? value : [value] };
    } catch (error) {
      return {
        ok: false,
        errors: [{ path: '$', message: `is not valid JSON: ${(error as Error).message}` }],
      };
    }
  }
  const documents = parseAllDocuments(text, { prettyErrors: true });
  const list = Array.isArray(documents) ? documents : [documents];
  const errors: ValidationIssue[] = [];
  for (const document of list) {
    for (const error of document.errors) {
      errors.push({ path: '$', message: `is not valid YAML: ${error.message.split('\n')[0]}` });
    }
  }
  if (errors.length > 0) return { ok: false, errors };
  const values: unknown[] = [];
  for (const document of list) {
    // Aliases are where well-formed YAML can still fail: one without its anchor throws, and one
    // inside its own anchor makes a circular value that no JSON consumer can take.
    try {
      const value: unknown = document.toJS({ maxAliasCount: 100 });
      JSON.stringify(value);
      // A YAML list is several definitions, as a JSON array is (what `sluice get -o yaml` prints).
      if (Array.isArray(value)) values.push(...value);
      else if (value !== null) values.push(value);
    } catch (error) {
      const message = (error as Error).message.split('\n')[0];
      return { ok: false, errors: [{ path: '$', message: `is not valid YAML: ${message}` }] };
    }
  }
  return { ok: true, documents: values };
}
