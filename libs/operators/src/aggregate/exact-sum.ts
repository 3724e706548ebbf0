// Exact floating-point summation (Shewchuk's algorithm, as in Python's math.fsum). The partials
// hold the exact sum of everything added; `exactSumValue` rounds it correctly once. The result
// is therefore independent of the order of additions, which is what lets a distributed run
// (events merged from many partitions) equal the in-process reference run to the last bit.

/** Adds `x` (finite) to the partials in place. */
export function exactSumAdd(partials: number[], x: number): void {
  let count = 0;
  const length = partials.length;
  for (let j = 0; j < length; j++) {
    let y = partials[j]!;
    if (Math.abs(x) < Math.abs(y)) {
      const t = x;
      x = y;
      y = t;
    }
    const hi = x + y;
    const lo = y - (hi - x);
    if (lo !== 0) partials[count++] = lo;
    x = hi;
  }
  // Usually one partial is replaced in place: avoid resizing the array then.
  if (count === length) {
    partials.push(x);
  } else {
    partials[count] = x;
    if (count + 1 < length) partials.length = count + 1;
  }
}

/** The correctly rounded value of the exact sum the partials represent. */
export function exactSumValue(partials: readonly number[]): number {
  let n = partials.length;
  if (n === 0) return 0;
  let hi = partials[--n]!;
  let lo = 0;
  while (n > 0) {
    const x = hi;
    const y = partials[--n]!;
    hi = x + y;
    const yr = hi - x;
    lo = y - yr;
    if (lo !== 0) break;
  }
  // Round half-even across the remaining partials, as fsum does.
  if (n > 0 && ((lo < 0 && partials[n - 1]! < 0) || (lo > 0 && partials[n - 1]! > 0))) {
    const y = lo * 2;
    const x = hi + y;
    const yr = x - hi;
    if (y === yr) hi = x;
  }
  return hi;
}
