// The patched groupMessagesPerPartition of kafkajs (producer/groupMessagesPerPartition.js,
// marker linear-partition-grouping): the same grouping as published, in one pass. Published, it
// copied a partition's list for every message, quadratic in the messages of one send.
import fc from 'fast-check';

import { kafkajsModule } from './patched-kafkajs';

interface Message {
  key: string;
  n: number;
}
type Group = (options: {
  topic: string;
  partitionMetadata: Array<{ partitionId: number }>;
  messages: Message[];
  partitioner: (options: { message: Message }) => number;
}) => Record<string, Message[]>;

const group = kafkajsModule<Group>('producer/groupMessagesPerPartition');

describe('kafkajs groupMessagesPerPartition (patched)', () => {
  it('groups each partition’s messages in their order, as the published code did (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 3 })),
        fc.integer({ min: 1, max: 7 }),
        (keys, partitions) => {
          const messages = keys.map((key, n) => ({ key, n }));
          const partitioner = ({ message }: { message: Message }) =>
            message.key.length % partitions;
          const expected: Record<string, Message[]> = {};
          for (const message of messages) (expected[partitioner({ message })] ??= []).push(message);
          const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({
            partitionId,
          }));
          expect(group({ topic: 't', partitionMetadata, messages, partitioner })).toEqual(expected);
        },
      ),
    );
  });

  it('answers nothing for a topic without partitions', () => {
    expect(
      group({
        topic: 't',
        partitionMetadata: [],
        messages: [{ key: 'a', n: 0 }],
        partitioner: () => 0,
      }),
    ).toEqual({});
  });

  it('groups a send of 200,000 messages without copying a list per message', () => {
    const messages = Array.from({ length: 200_000 }, (_, n) => ({ key: '', n }));
    // Published, this took minutes (200,000 copies of a list growing to 200,000 entries).
    const started = Date.now();
    const grouped = group({
      topic: 't',
      partitionMetadata: [{ partitionId: 0 }],
      messages,
      partitioner: () => 0,
    });
    expect(grouped['0']).toHaveLength(200_000);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
