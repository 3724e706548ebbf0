import { positionAfter, unprocessed } from './input-batch';
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
  unprocessed(input, position).map((message) => Number(message.offset));

describe('unprocessed', () => {
  it('keeps a batch that starts at or after the position whole', () => {
    expect(offsets(batch(5, 6, 7), '5')).toEqual([5, 6, 7]);
    expect(offsets(batch(5, 6, 7), undefined)).toEqual([5, 6, 7]);
  });

  it('drops what kafkajs delivers again before the position', () => {
    expect(offsets(batch(3, 4, 5, 6), '5')).toEqual([5, 6]);
    expect(offsets(batch(3, 4), '5')).toEqual([]);
  });

  it('compares offsets as numbers beyond 2^53', () => {
    const big = batch(0).messages[0]!;
    const input = batch(0);
    input.messages.splice(0, 1, { ...big, offset: '9007199254740993' });
    input.firstOffset = () => '9007199254740993';
    expect(unprocessed(input, '9007199254740992')).toHaveLength(1);
    expect(unprocessed(input, '9007199254740994')).toHaveLength(0);
  });
});

describe('positionAfter', () => {
  it('moves past the batch, never backwards', () => {
    expect(positionAfter(batch(5, 6, 7), '5')).toBe('8');
    expect(positionAfter(batch(5, 6, 7), undefined)).toBe('8');
    expect(positionAfter(batch(3, 4), '9')).toBe('9');
  });
});
