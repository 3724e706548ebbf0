// The chaos run's verdict on one pipeline: what its output topic holds, read read_committed,
// against what the reference run emits over the same events. A result is identified by its key,
// group, route and window; final-only results must appear exactly once each and equal.
import { canonicalJson } from '@sluice/contracts';

export interface KeyedRecord {
  key: string | null;
  value: unknown;
}

export interface Verdict {
  expected: number;
  received: number;
  /** Expected results that never came. */
  lost: number;
  /** Extra copies of a result that came (the second and later of the same identity). */
  duplicated: number;
  /** Results whose value differs from the reference's, or that the reference does not have. */
  wrong: number;
  /** A few of each problem, for the report. */
  examples: { lost: string[]; duplicated: string[]; wrong: string[] };
}

const EXAMPLES = 5;

/** What makes a result the same result: its key, and its group, route and window if any. */
export function resultIdentity(record: KeyedRecord): string {
  const value = record.value as Record<string, unknown> | null;
  if (value === null || typeof value !== 'object') return canonicalJson([record.key, value]);
  return canonicalJson([record.key, value['group'], value['route'], value['window']]);
}

export function verify(expected: KeyedRecord[], received: KeyedRecord[]): Verdict {
  const wanted = new Map<string, string>();
  for (const record of expected) wanted.set(resultIdentity(record), canonicalJson(record.value));
  const seen = new Map<string, number>();
  const verdict: Verdict = {
    expected: expected.length,
    received: received.length,
    lost: 0,
    duplicated: 0,
    wrong: 0,
    examples: { lost: [], duplicated: [], wrong: [] },
  };
  const note = (kind: keyof Verdict['examples'], text: string) => {
    if (verdict.examples[kind].length < EXAMPLES) verdict.examples[kind].push(text);
  };
  for (const record of received) {
    const identity = resultIdentity(record);
    const copies = (seen.get(identity) ?? 0) + 1;
    seen.set(identity, copies);
    const value = canonicalJson(record.value);
    if (copies > 1) {
      verdict.duplicated += 1;
      note('duplicated', value);
    } else if (wanted.get(identity) !== value) {
      verdict.wrong += 1;
      note('wrong', `${value} (expected ${wanted.get(identity) ?? 'nothing'})`);
    }
  }
  for (const [identity, value] of wanted) {
    if (seen.has(identity)) continue;
    verdict.lost += 1;
    note('lost', value);
  }
  return verdict;
}
