import fc from 'fast-check';

import {
  decodeRepartitionRecord,
  encodeEvent,
  encodeMarker,
  encodePartial,
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
        (epoch, group, route, value, time, eventJson, node) => {
          const encoded = encodeEvent(
            epoch,
            node,
            { group, route, value, time, envelope: undefined as never },
            eventJson,
          );
          expect(decodeRepartitionRecord(encoded)).toEqual({
            kind: 'event',
            epoch,
            node,
            group,
            route,
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
    expect(decodeRepartitionRecord(encodePartial('1.x', 'daily', partial))).toEqual({
      kind: 'partial',
      epoch: '1.x',
      node: 'daily',
      partial,
    });
    const reduce = { start: null, route: undefined, group: null, acc: { n: 1, v: 4 } };
    expect(decodeRepartitionRecord(encodePartial('0.y', undefined, reduce))).toEqual({
      kind: 'partial',
      epoch: '0.y',
      node: undefined,
      partial: reduce,
    });
  });

  it('round-trip a watermark marker', () => {
    const marker = { epoch: '0:abc', upstream: 'events/3', time: 1_764_403_200_000 };
    expect(decodeRepartitionRecord(encodeMarker(marker))).toEqual({ kind: 'marker', ...marker });
  });

  it('reject what Sluice did not write instead of throwing', () => {
    for (const value of ['', 'not json', '{"a":1}', '{"g":null}\n{}', '[]'])
      expect(decodeRepartitionRecord(value)).toBeUndefined();
  });
});
