// The key partitioner against kafkajs' own DefaultPartitioner (Java's murmur2 through Long):
// the same partition for any key, so records land where every other Kafka client puts them.
import fc from 'fast-check';
import { Partitioners } from 'kafkajs';
import type { PartitionerArgs } from 'kafkajs';

import { kafkajsModule } from './kafkajs/patched-kafkajs';
import { KeyPartitioner, keyHash, murmur2 } from './key-partitioner';

const kafkajsMurmur2 = kafkajsModule<(key: Buffer | string) => number>(
  'producer/partitioners/default/murmur2',
);

const args = (key: Buffer | string | null, partitions: number, partition?: number) =>
  ({
    topic: 't',
    partitionMetadata: Array.from({ length: partitions }, (_, partitionId) => ({
      partitionId,
      leader: 1,
      replicas: [1],
      isr: [1],
      partitionErrorCode: 0,
    })),
    message: { key, value: null, partition },
  }) as PartitionerArgs;

describe('murmur2', () => {
  it('gives what Kafka’s Java Utils.murmur2 gives (its own test vectors)', () => {
    // clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java, testMurmur2
    const vectors: Array<[string, number]> = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
      ['abc', 479470107],
    ];
    for (const [key, expected] of vectors) expect(murmur2(Buffer.from(key))).toBe(expected);
  });

  it('equals kafkajs’ murmur2 on any bytes and any text (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        expect(murmur2(bytes)).toBe(kafkajsMurmur2(Buffer.from(bytes)));
      }),
      { numRuns: 2000 },
    );
    // Any UTF-16 units, lone surrogates included (fast-check's 'binary' unit leaves them out).
    const utf16 = fc
      .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 })
      .map((units) => String.fromCharCode(...units));
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), utf16), (text) => {
        expect(keyHash(text)).toBe(kafkajsMurmur2(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('hashes a key longer than its scratch buffer, and one of another type, as kafkajs does', () => {
    const long = 'é'.repeat(2000) + 'k';
    expect(keyHash(long)).toBe(kafkajsMurmur2(long));
    // kafkajs hashes the text of what is neither a string nor a Buffer.
    const odd = 4711 as unknown as string;
    expect(keyHash(odd)).toBe(kafkajsMurmur2(odd));
    const bytes = new Uint8Array([1, 2, 3]) as unknown as Buffer;
    expect(keyHash(bytes)).toBe(kafkajsMurmur2(bytes));
  });
});

describe('KeyPartitioner', () => {
  it('puts a keyed message where kafkajs’ DefaultPartitioner does (property)', () => {
    const ours = KeyPartitioner();
    const theirs = Partitioners.DefaultPartitioner();
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: 'grapheme', maxLength: 24 }), fc.uint8Array({ maxLength: 24 })),
        fc.integer({ min: 1, max: 100 }),
        (key, partitions) => {
          const message = typeof key === 'string' ? key : Buffer.from(key);
          expect(ours(args(message, partitions))).toBe(theirs(args(message, partitions)));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('keeps a message’s own partition, and spreads keyless messages over every partition', () => {
    const partition = KeyPartitioner();
    expect(partition(args('k', 6, 4))).toBe(4);
    const seen = new Set(Array.from({ length: 12 }, () => partition(args(null, 6))));
    expect([...seen].sort()).toEqual([0, 1, 2, 3, 4, 5]);
  });
});
