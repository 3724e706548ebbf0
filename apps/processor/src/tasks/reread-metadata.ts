// A stateful task's commit metadata: the offset of the oldest input its stages hold outside the
// changelog (a temporal table join's waiting records), from which a new owner reads the
// repartition partition again after restoring the changelog.

export function rereadMetadata(from: string | undefined): string | undefined {
  return from === undefined ? undefined : JSON.stringify({ reread_from: from });
}

/** The offset the metadata asks to read again from (`undefined`: none, or not ours). */
export function rereadFromOf(metadata: string | undefined): string | undefined {
  if (!metadata) return undefined;
  try {
    const from = (JSON.parse(metadata) as { reread_from?: unknown }).reread_from;
    return typeof from === 'string' && /^\d+$/.test(from) ? from : undefined;
  } catch {
    return undefined;
  }
}
