// A stateful partition's changelog (docs/design.md §5): compacted, one record per state key, the value
// tagged with the pipeline's state epoch so that state of an earlier epoch is never restored.

/** Keys of the upstream partitions' announced event times; stage keys never start like this. */
const UPSTREAM_PREFIX = '~upstream|';

export function upstreamKey(upstream: string): string {
  return `${UPSTREAM_PREFIX}${upstream}`;
}

export function encodeChangelogValue(epoch: string, value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify({ e: epoch, v: value });
}

export type ChangelogEntry =
  | { kind: 'upstream'; upstream: string; time: number | undefined }
  | { kind: 'state'; key: string; value: unknown };

/**
 * One changelog record, read in log order while restoring. A tombstone, a record of another
 * epoch and a record that is not ours all remove the key: whatever was restored for it earlier
 * is not this epoch's state any more.
 */
export function decodeChangelogEntry(
  key: string,
  raw: string | null,
  epoch: string,
): ChangelogEntry {
  let value: unknown = null;
  if (raw !== null) {
    try {
      const record = JSON.parse(raw) as { e?: unknown; v?: unknown };
      if (record.e === epoch && record.v !== undefined) value = record.v;
    } catch {
      value = null;
    }
  }
  if (key.startsWith(UPSTREAM_PREFIX)) {
    const time = (value as { t?: unknown } | null)?.t;
    return {
      kind: 'upstream',
      upstream: key.slice(UPSTREAM_PREFIX.length),
      time: typeof time === 'number' ? time : undefined,
    };
  }
  return { kind: 'state', key, value };
}
