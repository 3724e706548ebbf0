import fc from 'fast-check';

import { iso } from './iso-time';

describe('iso', () => {
  it('writes what Date#toISOString writes, for any time Date accepts', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: 0, max: 253_402_300_799_999 }),
          fc.integer({ min: -8_640_000_000_000_000, max: 8_640_000_000_000_000 }),
          fc.double({ min: -1e13, max: 1e13, noNaN: true }),
        ),
        (time) => expect(iso(time)).toBe(new Date(time).toISOString()),
      ),
      { numRuns: 20_000 },
    );
  });

  it('gets the calendar edges right', () => {
    const edges = [
      0,
      Date.UTC(1970, 0, 1, 23, 59, 59, 999),
      Date.UTC(2000, 1, 29, 12, 0, 0, 7),
      Date.UTC(2000, 2, 1),
      Date.UTC(2100, 1, 28, 23, 59, 59, 999),
      Date.UTC(2100, 2, 1),
      Date.UTC(2400, 1, 29),
      Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      253_402_300_799_999,
      253_402_300_800_000,
      -1,
    ];
    for (const time of edges) expect(iso(time)).toBe(new Date(time).toISOString());
  });

  it('throws as Date does for a time it cannot write', () => {
    expect(() => iso(Number.NaN)).toThrow(RangeError);
    expect(() => iso(8.64e15 + 1)).toThrow(RangeError);
  });
});
