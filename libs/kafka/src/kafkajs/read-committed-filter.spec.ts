import { patchedAbortedFilter } from './patched-kafkajs';

// The filter kafkajs runs once patches/kafkajs+2.2.4.patch is applied.
const filterAbortedMessages = patchedAbortedFilter();

const record = (
  offset: number,
  producerId: string,
  key: number[] | null = null,
  control = false,
) => ({
  offset: String(offset),
  key: key ? Buffer.from(key) : Buffer.from('k'),
  isControlRecord: control,
  batchContext: { producerId, inTransaction: true },
});
const abort = (offset: number, producerId: string) =>
  record(offset, producerId, [0, 0, 0, 0], true);
const commit = (offset: number, producerId: string) =>
  record(offset, producerId, [0, 0, 0, 1], true);

describe('filterAbortedMessages', () => {
  it('drops interleaved aborted transactions whatever order the broker lists them in', () => {
    // p1 commits 0..1, p2 aborts 2,4, p3 aborts 3,5; the broker lists p3's abort first.
    const messages = [
      record(0, 'p1'),
      commit(1, 'p1'),
      record(2, 'p2'),
      record(3, 'p3'),
      record(4, 'p2'),
      record(5, 'p3'),
      abort(6, 'p3'),
      abort(7, 'p2'),
      record(8, 'p2'),
    ];
    const kept = filterAbortedMessages({
      messages,
      abortedTransactions: [
        { firstOffset: '3', producerId: 'p3' },
        { firstOffset: '2', producerId: 'p2' },
      ],
    }).filter((m) => !m.isControlRecord);
    expect(kept.map((m) => m.offset)).toEqual(['0', '8']);
  });
});

describe("kafkajs' own Batch (patched)", () => {
  it('drops interleaved aborted transactions of two producers', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Batch = require('kafkajs/src/consumer/batch') as new (
      topic: string,
      fetchedOffset: string,
      partitionData: object,
    ) => { messages: Array<{ offset: string }> };
    // Two producers' aborted transactions, one record each, their markers in the other order.
    const messages = [record(0, 'p1'), record(1, 'p2'), abort(2, 'p2'), abort(3, 'p1')];
    const batch = new Batch('t', '0', {
      partition: 0,
      highWatermark: '4',
      messages,
      abortedTransactions: [
        { firstOffset: '1', producerId: 'p2' },
        { firstOffset: '0', producerId: 'p1' },
      ],
    });
    expect(batch.messages.map((m) => m.offset)).toEqual([]);
  });
});
