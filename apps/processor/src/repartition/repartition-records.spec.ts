import fc from 'fast-check';

import {
  decodeRepartitionRecord,
  encodeEvent,
  encodeMarker,
  encodePartial,
  isLaterGeneration,
} from './repartition-records';

describe('repartition records', () => {
  it('round-trip an event contribution, keeping the event text as it was', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.option(fc.string(), { nil: null }),
        fc.option(fc.string(), { nil: undefined }),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.integer({ min: 0, max: 4_102_444_800_000 }),
        fc.json(),
        fc.option(fc.string(), { nil: undefined }),
        fc.tuple(fc.nat(), fc.nat()).map(([resets, version]) => `${resets}.${version}`),
        fc.constantFrom('left' as const, 'right' as const, undefined),
        (epoch, group, route, value, time, eventJson, node, generation, side) => {
          const encoded = encodeEvent(
            { epoch, generation },
            node,
            { group, route, side, value, time, envelope: undefined as never },
            eventJson,
          );
          expect(decodeRepartitionRecord(encoded)).toEqual({
            kind: 'event',
            epoch,
            generation,
            node,
            group,
            route,
            side,
            value: Object.is(value, -0) ? 0 : value,
            time,
            eventJson,
          });
        },
      ),
    );
  });

  it('round-trip a partial aggregate', () => {
    const partial = {
      start: 1_764_374_400_000,
      route: 'eu',
      group: 'gbp',
      acc: { n: 3, p: [12.5] },
    };
    const stamp = { epoch: '1.x', generation: '1.7' };
    expect(decodeRepartitionRecord(encodePartial(stamp, 'daily', partial))).toEqual({
      kind: 'partial',
      ...stamp,
      node: 'daily',
      partial,
    });
    const reduce = { start: null, route: undefined, group: null, acc: { n: 1, v: 4 } };
    expect(
      decodeRepartitionRecord(
        encodePartial({ epoch: '0.y', generation: '0.1' }, undefined, reduce),
      ),
    ).toEqual({
      kind: 'partial',
      epoch: '0.y',
      generation: '0.1',
      node: undefined,
      partial: reduce,
    });
  });

  it('round-trip a watermark marker', () => {
    const stamp = { epoch: '0:abc', generation: '0.3' };
    expect(decodeRepartitionRecord(encodeMarker(stamp, 'events/3', 1_764_403_200_000))).toEqual({
      kind: 'marker',
      ...stamp,
      upstream: 'events/3',
      time: 1_764_403_200_000,
    });
    // Written before generations: none, and never taken for a later definition.
    expect(decodeRepartitionRecord('{"m":"events/3","e":"0:abc","t":5}')).toMatchObject({
      generation: undefined,
    });
    expect(isLaterGeneration(undefined, '0.1')).toBe(false);
  });

  it('orders definitions by reset generation, then version', () => {
    expect(isLaterGeneration('0.3', '0.2')).toBe(true);
    expect(isLaterGeneration('0.10', '0.9')).toBe(true);
    expect(isLaterGeneration('1.1', '0.9')).toBe(true);
    expect(isLaterGeneration('0.9', '1.1')).toBe(false);
    expect(isLaterGeneration('0.2', '0.2')).toBe(false);
    expect(isLaterGeneration('0.1', '0.2')).toBe(false);
  });

  it('reject what Sluice did not write instead of throwing', () => {
    for (const value of ['', 'not json', '{"a":1}', '{"g":null}\n{}', '[]'])
      expect(decodeRepartitionRecord(value)).toBeUndefined();
  });
});
