// Problems in the order a reader meets them in the document: by the position of the path in a
// depth-first reading; a path the document lacks (a missing key) comes where its object ends.
// Ties keep the order the problems were found in.
import type { Segments } from './definition-checks';

interface Span {
  start: number;
  /** The position of the node's last descendant (itself when it has none). */
  end: number;
}

function spans(document: unknown): Map<string, Span> {
  const order = new Map<string, Span>();
  let next = 0;
  const visit = (value: unknown, segments: Segments) => {
    const span = { start: next++, end: 0 };
    order.set(JSON.stringify(segments), span);
    if (Array.isArray(value)) value.forEach((item, index) => visit(item, [...segments, index]));
    else if (value !== null && typeof value === 'object')
      for (const [key, item] of Object.entries(value)) visit(item, [...segments, key]);
    span.end = next - 1;
  };
  visit(document, []);
  return order;
}

/** `items` sorted in document order (a stable sort). */
export function inDocumentOrder<T extends { segments: Segments }>(
  document: unknown,
  items: T[],
): T[] {
  const order = spans(document);
  const positionOf = (segments: Segments): number => {
    const exact = order.get(JSON.stringify(segments));
    if (exact) return exact.start;
    for (let depth = segments.length - 1; depth >= 0; depth--) {
      const parent = order.get(JSON.stringify(segments.slice(0, depth)));
      if (parent) return parent.end + 0.5;
    }
    return Infinity;
  };
  return items
    .map((item, index) => ({ item, index, position: positionOf(item.segments) }))
    .sort((a, b) => a.position - b.position || a.index - b.index)
    .map(({ item }) => item);
}
