import { decodeChangelogEntry, encodeChangelogValue, upstreamKey } from './changelog-records';

describe('changelog records', () => {
  it('restore state of the current epoch', () => {
    const raw = encodeChangelogValue('1.a', { group: 'gbp', acc: { n: 2 } });
    expect(decodeChangelogEntry('wx|ggbp', raw, '1.a')).toEqual({
      kind: 'state',
      key: 'wx|ggbp',
      value: { group: 'gbp', acc: { n: 2 } },
    });
  });

  it('treat tombstones, other epochs and foreign values as deletions', () => {
    for (const raw of [null, encodeChangelogValue('0.a', { n: 1 }), 'not json'])
      expect(decodeChangelogEntry('k', raw, '1.a')).toEqual({
        kind: 'state',
        key: 'k',
        value: null,
      });
    expect(encodeChangelogValue('1.a', null)).toBeNull();
  });

  it('keep the upstream partitions’ event times apart from the stage state', () => {
    const key = upstreamKey('events/3');
    expect(decodeChangelogEntry(key, encodeChangelogValue('1.a', { t: 42 }), '1.a')).toEqual({
      kind: 'upstream',
      upstream: 'events/3',
      time: 42,
    });
    expect(decodeChangelogEntry(key, encodeChangelogValue('0.z', { t: 42 }), '1.a')).toEqual({
      kind: 'upstream',
      upstream: 'events/3',
      time: undefined,
    });
  });
});
