// Problems in the order a reader meets them in the document: by the position of the path in a
// depth-first reading; a path the document lacks (a missing key) comes where its object ends.
// Ties keep the order the problems were found in.
import type { Segments } from './definition-checks';

interface Span {
  start: number;
  /** The position of the node's last descendant (itself when it has none). */
  end: number;
}

const keyOf = (segments: Segments) => JSON.stringify(segments);

/** Every node's span, walked with an explicit stack (a deep document must not overflow). */
function spans(document: unknown): Map<string, Span> {
  const order = new Map<string, Span>();
  let next = 0;
  type Frame = { value: unknown; segments: Segments; span?: Span };
  const stack: Frame[] = [{ value: document, segments: [] }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.span) {
      frame.span.end = next - 1; // its whole subtree has been numbered
      continue;
    }
    const span = { start: next++, end: 0 };
    order.set(keyOf(frame.segments), span);
    stack.push({ ...frame, span });
    const { value, segments } = frame;
    const children: Frame[] = Array.isArray(value)
      ? value.map((item, index) => ({ value: item, segments: [...segments, index] }))
      : value !== null && typeof value === 'object'
        ? Object.entries(value).map(([key, item]) => ({
            value: item,
            segments: [...segments, key],
          }))
        : [];
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return order;
}

/** `items` sorted in document order (a stable sort). */
export function inDocumentOrder<T extends { segments: Segments }>(
  document: unknown,
  items: T[],
): T[] {
  if (items.length < 2) return items;
  const order = spans(document);
  const positionOf = (segments: Segments): number => {
    const exact = order.get(keyOf(segments));
    if (exact) return exact.start;
    for (let depth = segments.length - 1; depth >= 0; depth--) {
      const parent = order.get(keyOf(segments.slice(0, depth)));
      if (parent) return parent.end + 0.5;
    }
    return Infinity;
  };
  return items
    .map((item, index) => ({ item, index, position: positionOf(item.segments) }))
    .sort((a, b) => a.position - b.position || a.index - b.index)
    .map(({ item }) => item);
}
