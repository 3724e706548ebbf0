import { positionAfter, splitAt } from './input-batch';
import type { InputBatch } from './input-batch';

function batch(...offsets: number[]): InputBatch {
  const messages = offsets.map((offset) => ({
    offset: String(offset),
    key: null,
    value: null,
    timestamp: '0',
  }));
  return {
    messages,
    firstOffset: () => messages[0]?.offset ?? null,
    lastOffset: () => messages.at(-1)?.offset ?? '-1',
    offsetLag: () => '0',
  };
}

const offsets = (input: InputBatch, position: string | undefined) =>
  splitAt(input, position).map((part) => part.map((message) => Number(message.offset)));

describe('splitAt', () => {
  it('keeps a batch that starts at or after the position whole', () => {
    expect(offsets(batch(5, 6, 7), '5')).toEqual([[], [5, 6, 7]]);
    expect(offsets(batch(5, 6, 7), undefined)).toEqual([[], [5, 6, 7]]);
  });

  it('sets apart what comes before the position (read again)', () => {
    expect(offsets(batch(3, 4, 5, 6), '5')).toEqual([
      [3, 4],
      [5, 6],
    ]);
    expect(offsets(batch(3, 4), '5')).toEqual([[3, 4], []]);
  });

  it('compares offsets as numbers beyond 2^53', () => {
    const input = batch(0);
    input.messages.splice(0, 1, { ...input.messages[0]!, offset: '9007199254740993' });
    input.firstOffset = () => '9007199254740993';
    expect(splitAt(input, '9007199254740992')[1]).toHaveLength(1);
    expect(splitAt(input, '9007199254740994')[1]).toHaveLength(0);
  });
});

describe('positionAfter', () => {
  it('moves past the batch, never backwards', () => {
    expect(positionAfter(batch(5, 6, 7), '5')).toBe('8');
    expect(positionAfter(batch(5, 6, 7), undefined)).toBe('8');
    expect(positionAfter(batch(3, 4), '9')).toBe('9');
  });
});
