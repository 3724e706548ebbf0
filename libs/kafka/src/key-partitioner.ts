// Where a keyed record goes: Java's murmur2 of the key's bytes, positive, modulo the partition
// count, as Kafka's own clients and Kafka Streams place it (so a repartition topic Sluice writes
// is co-partitioned with one written by anything else). kafkajs' DefaultPartitioner computes
// the same hash through 64-bit Long objects, a new one for each step of each 4 bytes of key: in
// a table join's CPU profile, 4 s of a replica's 64 busy seconds. Every step of the hash is a 32-bit
// multiply, xor or shift of which only the low 32 bits are ever read, so Math.imul gives the
// same result (a property test holds it to kafkajs' on any key).
import { Partitioners } from 'kafkajs';
import type { ICustomPartitioner, Message, PartitionerArgs } from 'kafkajs';

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** Kafka's `Utils.murmur2` of `length` bytes of `data`, as a signed 32-bit integer. */
export function murmur2(data: Uint8Array, length = data.length): number {
  let h = SEED ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const tail = length & 3;
  if (tail > 0) {
    if (tail === 3) h ^= data[whole + 2]! << 16;
    if (tail >= 2) h ^= data[whole + 1]! << 8;
    h ^= data[whole]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h;
}

/** Keys are short: one buffer takes each string key's UTF-8 bytes, with no allocation per key. */
const scratch = Buffer.allocUnsafe(4096);

/** murmur2 of a key as kafkajs hashes it: a Buffer's bytes, or the UTF-8 of its text. */
export function keyHash(key: Buffer | string): number {
  if (typeof key !== 'string') return Buffer.isBuffer(key) ? murmur2(key) : keyHash(String(key));
  // At most 3 UTF-8 bytes per UTF-16 unit, so a key this short always fits.
  if (key.length * 3 <= scratch.length) return murmur2(scratch, scratch.write(key));
  return murmur2(Buffer.from(key));
}

/** The partition of `partitions` a record with this key goes to. */
export function keyPartition(key: Buffer | string, partitions: number): number {
  return partitions === 1 ? 0 : (keyHash(key) & 0x7fffffff) % partitions;
}

/**
 * Where KeyPartitioner puts `message` among `partitions`, short of its round robin: the
 * partition the message names, else its key's; undefined for a message with neither.
 */
export function placedPartition(message: Message, partitions: number): number | undefined {
  if (message.partition !== null && message.partition !== undefined) return message.partition;
  if (message.key === null || message.key === undefined) return undefined;
  return keyPartition(message.key, partitions);
}

/**
 * kafkajs' DefaultPartitioner with the hash above: a message's own partition if it names one,
 * else its key's, else kafkajs' round robin (delegated, unchanged).
 */
export const KeyPartitioner: ICustomPartitioner = () => {
  const keyless = Partitioners.DefaultPartitioner();
  return (args: PartitionerArgs) =>
    placedPartition(args.message, args.partitionMetadata.length) ?? keyless(args);
};
