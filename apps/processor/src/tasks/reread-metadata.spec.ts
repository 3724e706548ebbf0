import { RereadProgress, rereadFromOf, rereadMetadata } from './reread-metadata';

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

describe('RereadProgress', () => {
  it('reads again from the metadata up to the committed offset, then is done', () => {
    const progress = new RereadProgress();
    progress.start(rereadMetadata('40'), '100');
    expect(progress.from).toBe('40');
    progress.advance('59');
    expect(progress.from).toBe('60');
    progress.advance('99');
    expect(progress.from).toBeUndefined();
  });

  it('names in each commit the oldest of what the stages hold and what is left to read', () => {
    const progress = new RereadProgress();
    progress.start(rereadMetadata('40'), '100');
    // Before any record came back (a tick's commit): the whole range is still to read.
    expect(rereadFromOf(progress.metadata(undefined))).toBe('40');
    progress.advance('69');
    expect(rereadFromOf(progress.metadata('45'))).toBe('45');
    expect(rereadFromOf(progress.metadata(undefined))).toBe('70');
    progress.advance('99');
    expect(rereadFromOf(progress.metadata('45'))).toBe('45');
    expect(progress.metadata(undefined)).toBeUndefined();
  });

  it('has nothing to read again without metadata, or from at or past the committed offset', () => {
    const progress = new RereadProgress();
    progress.start(undefined, '100');
    expect(progress.from).toBeUndefined();
    progress.start(rereadMetadata('100'), '100');
    expect(progress.from).toBeUndefined();
    progress.start(rereadMetadata('5'), undefined);
    expect(progress.from).toBeUndefined();
  });
});
