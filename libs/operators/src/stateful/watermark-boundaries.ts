// Which rises of a stateful node's watermark input (an upstream's event time) can change what the
// node does. A tumbling or sliding window without an idle timeout acts only when the input
// crosses a window end plus the allowed lateness: it fires the windows that end there, and from
// then on their inputs are late. Between two such boundaries the node behaves the same whatever
// the input is, so a source partition may announce its event time only when it crosses one
// (docs/design.md §4): with ten daily windows over one topic, a transaction then writes a marker
// once a day of event time instead of to every repartition partition of every pipeline.

/** Whether the watermark input rising from `from` to `to` can change what the node does. */
export type WatermarkBoundaries = (from: number, to: number) => boolean;

/** Sessions, joins and idle timeouts: every rise matters (a gap, an interval, a liveness clock). */
export const EVERY_RISE: WatermarkBoundaries = (from, to) => to > from;

/** A reduce: time plays no part. */
export const NO_BOUNDARY: WatermarkBoundaries = () => false;

/**
 * Windows `[k·slide, k·slide + size)` (epoch-aligned, as the hopping stage places them) with
 * `latenessMs` of allowed lateness: the boundaries are `k·slide + size + latenessMs`, where the
 * watermark (`input - latenessMs`) reaches a window's end.
 */
export function windowEnds(
  sizeMs: number,
  slideMs: number,
  latenessMs: number,
): WatermarkBoundaries {
  const phase = sizeMs + latenessMs;
  return (from, to) => {
    if (!(to > from)) return false;
    if (from === -Infinity) return true;
    return Math.floor((to - phase) / slideMs) > Math.floor((from - phase) / slideMs);
  };
}
