import { getMetadataStorage } from 'class-validator';

/**
 * The environment variable names an environment class validates, read from its class-validator
 * metadata: the one list deployment manifests are checked against, so a renamed variable
 * cannot silently fall back to its default in production.
 */
export function environmentVariableNames(environment: new () => object): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(environment, '', true, false);
  return [...new Set(metadata.map((m) => m.propertyName))].sort();
}
