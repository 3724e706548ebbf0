// A state value as its changelog holds it, not parsed yet. A restore hands a stage's entries
// over as JSON text where the stage says it can keep them so (`restoresJsonText`): a 10⁶-row
// table then restores without building 10⁶ object trees, most of which a join may never look
// at, and parses a row when it first needs it.

export class JsonText {
  constructor(readonly text: string) {}
}

/**
 * The value of `text`, or `null` (what an unreadable changelog value has always meant: the key
 * holds nothing) when it does not parse.
 */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** A restored entry's value as a stage that takes no JSON text wants it. */
export function parsedStateValue(value: unknown): unknown {
  return value instanceof JsonText ? parseJsonText(value.text) : value;
}
