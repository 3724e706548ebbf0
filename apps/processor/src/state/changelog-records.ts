// A stateful partition's changelog (DESIGN §5): compacted, one record per state key, the value
// tagged with the pipeline's state epoch so that state of an earlier epoch is never restored.
import type { StateEntry } from '@sluice/operators';

/** Keys of the upstream partitions' announced event times; stage keys never start like this. */
const UPSTREAM_PREFIX = '~upstream|';

export function upstreamKey(upstream: string): string {
  return `${UPSTREAM_PREFIX}${upstream}`;
}

export function encodeChangelogValue(epoch: string, value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify({ e: epoch, v: value });
}

export interface RestoredState {
  stage: StateEntry[];
  /** Upstream partition → the largest event time it announced. */
  upstreams: Map<string, number>;
}

/**
 * The state of one epoch from a changelog's latest records per key (a tombstone removes a key;
 * a record of another epoch is not this state's).
 */
export function stateOfEpoch(latest: Map<string, string | null>, epoch: string): RestoredState {
  const stage: StateEntry[] = [];
  const upstreams = new Map<string, number>();
  for (const [key, raw] of latest) {
    if (raw === null) continue;
    let record: { e?: unknown; v?: unknown };
    try {
      record = JSON.parse(raw) as { e?: unknown; v?: unknown };
    } catch {
      continue;
    }
    if (record.e !== epoch || record.v === undefined || record.v === null) continue;
    if (key.startsWith(UPSTREAM_PREFIX)) {
      const time = (record.v as { t?: unknown }).t;
      if (typeof time === 'number') upstreams.set(key.slice(UPSTREAM_PREFIX.length), time);
    } else {
      stage.push({ key, value: record.v });
    }
  }
  return { stage, upstreams };
}
