import { rereadFromOf, rereadMetadata } from './reread-metadata';

describe('reread metadata', () => {
  it('round-trips the offset to read again from', () => {
    expect(rereadFromOf(rereadMetadata('1234'))).toBe('1234');
    expect(rereadMetadata(undefined)).toBeUndefined();
  });

  it('reads nothing from metadata that is not ours', () => {
    for (const metadata of [
      undefined,
      '',
      'not json',
      '{"r":["a"]}',
      '{"reread_from":12}',
      '{"reread_from":"-1"}',
    ])
      expect(rereadFromOf(metadata)).toBeUndefined();
  });
});
