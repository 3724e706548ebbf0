// A stateful partition's changelog (docs/design.md §5): compacted, one record per state key, the value
// tagged with the pipeline's state epoch so that state of an earlier epoch is never restored.
import { JsonText, parseJsonText } from '@sluice/operators';

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
  | { kind: 'state'; key: string; value: JsonText | null };

/**
 * Decodes changelog records of `epoch`, read in log order while restoring. A state value comes
 * as its JSON text, unparsed (json-text.ts: the stage parses it, or keeps the text until it
 * needs it). A tombstone, a record of another epoch and a record that is not ours all remove
 * the key: whatever was restored for it earlier is not this epoch's state any more.
 *
 * A value of this epoch is told by its first bytes: `encodeChangelogValue` is the changelog's
 * only writer, and JSON.stringify writes `{"e":<epoch>,"v":<value>}` in that order with no
 * space, so the value's text is what lies between that prefix and the last brace.
 */
export function changelogDecoder(
  epoch: string,
): (key: string, raw: string | null) => ChangelogEntry {
  const prefix = `{"e":${JSON.stringify(epoch)},"v":`;
  const textOf = (raw: string | null): string | undefined =>
    raw !== null && raw.length > prefix.length && raw.startsWith(prefix) && raw.endsWith('}')
      ? raw.slice(prefix.length, -1)
      : undefined;
  return (key, raw) => {
    const text = textOf(raw);
    if (key.startsWith(UPSTREAM_PREFIX)) {
      const time = (text === undefined ? null : (parseJsonText(text) as { t?: unknown } | null))?.t;
      return {
        kind: 'upstream',
        upstream: key.slice(UPSTREAM_PREFIX.length),
        time: typeof time === 'number' ? time : undefined,
      };
    }
    return { kind: 'state', key, value: text === undefined ? null : new JsonText(text) };
  };
}
