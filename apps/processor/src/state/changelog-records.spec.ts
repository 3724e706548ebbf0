import { JsonText, parseJsonText } from '@sluice/operators';

import { changelogDecoder, encodeChangelogValue, upstreamKey } from './changelog-records';

/** A state entry's value as a stage would take it parsed. */
function parsedValue(entry: ReturnType<ReturnType<typeof changelogDecoder>>): unknown {
  if (entry.kind !== 'state') throw new Error(`not a state entry: ${JSON.stringify(entry)}`);
  return entry.value instanceof JsonText ? parseJsonText(entry.value.text) : entry.value;
}

describe('changelog records', () => {
  it('restore state of the current epoch as the text of its value', () => {
    const value = { group: 'gbp', acc: { n: 2, s: 'a "quoted" } brace' }, list: [[1, null]] };
    const entry = changelogDecoder('1.a')('wx|ggbp', encodeChangelogValue('1.a', value));
    expect(entry).toEqual({ kind: 'state', key: 'wx|ggbp', value: expect.any(JsonText) });
    expect(parsedValue(entry)).toEqual(value);
  });

  it('give back any value JSON can hold, whatever the epoch string holds', () => {
    const epochs = ['0', '1.a', 'e"}{,"v":x', '\u00e9\u2028'];
    const values = [0, 'text', [1, [2, { a: null }]], { e: 'x', v: 'y' }, true, -1.5e-7];
    for (const epoch of epochs)
      for (const value of values)
        expect(
          parsedValue(changelogDecoder(epoch)('k', encodeChangelogValue(epoch, value))),
        ).toEqual(value);
  });

  it('treat tombstones, other epochs and foreign values as deletions', () => {
    const decode = changelogDecoder('1.a');
    for (const raw of [
      null,
      encodeChangelogValue('0.a', { n: 1 }),
      encodeChangelogValue('1.ab', { n: 1 }),
      encodeChangelogValue('1', { n: 1 }),
      'not json',
      '{"e":"1.a","v":',
      '{"v":{"n":1},"e":"1.a"}',
    ])
      expect(decode('k', raw)).toEqual({ kind: 'state', key: 'k', value: null });
    expect(encodeChangelogValue('1.a', null)).toBeNull();
  });

  it('keep the upstream partitions’ event times apart from the stage state', () => {
    const key = upstreamKey('events/3');
    const decode = changelogDecoder('1.a');
    expect(decode(key, encodeChangelogValue('1.a', { t: 42 }))).toEqual({
      kind: 'upstream',
      upstream: 'events/3',
      time: 42,
    });
    expect(decode(key, encodeChangelogValue('0.z', { t: 42 }))).toEqual({
      kind: 'upstream',
      upstream: 'events/3',
      time: undefined,
    });
  });
});
