// npm run bench:kafkajs-encode [-- --records 1000000 --per-batch 500 --rounds 3]
// Records/s of writing the record batches of Produce requests: kafkajs' own batch writer
// against the one patches/kafkajs+2.2.4.patch puts in its place (the patch keeps the original
// beside it as stockRecordSet), measured in the same run on the same messages: order events
// keyed by entity as strings, as Sluice's tasks hand them to kafkajs, `per-batch` to a
// partition's batch (a task's request holds a few hundred per partition). Both are checked to
// write the same bytes first. Then the partition of each keyed record: kafkajs'
// DefaultPartitioner (murmur2 through Long) against @sluice/kafka's KeyPartitioner (the same
// hash in 32-bit arithmetic), on the same keys, checked equal first.
import { parseArgs } from 'node:util';

import { Partitioners } from 'kafkajs';
import type { ICustomPartitioner, PartitionerArgs } from 'kafkajs';

import { KeyPartitioner } from '@sluice/kafka';
import { kafkajsModule, patchedRecordSet, stockRecordSet } from '@sluice/kafka/testing';
import type { RecordSetOptions, RecordSetWriter } from '@sluice/kafka/testing';
import { generateOrders } from '@sluice/operators/testing';

import { fmt, log } from './support/kafka-bench';

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '1000000' },
    'per-batch': { type: 'string', default: '500' },
    rounds: { type: 'string', default: '3' },
  },
});
const N = Number(args.records);
const PER_BATCH = Number(args['per-batch']);
const ROUNDS = Number(args.rounds);

const Long = kafkajsModule<{ fromValue(value: number): unknown }>('utils/long');
const producerId = Long.fromValue(4711);

function batches(): RecordSetOptions[] {
  const orders = generateOrders({ count: N, start: Date.UTC(2026, 10, 1), seed: 5 });
  const result: RecordSetOptions[] = [];
  for (let first = 0; first < N; first += PER_BATCH) {
    result.push({
      compression: 0,
      messages: orders.slice(first, first + PER_BATCH).map((order) => ({
        key: order.entity_id ?? null,
        value: JSON.stringify(order),
      })),
      producerId,
      producerEpoch: 3,
      firstSequence: first,
      transactional: true,
    });
  }
  return result;
}

async function writeAll(write: RecordSetWriter, input: RecordSetOptions[]): Promise<number> {
  let bytes = 0;
  for (const batch of input) bytes += (await write(batch)).buffer.length;
  return bytes;
}

async function measure(label: string, write: RecordSetWriter, input: RecordSetOptions[]) {
  let best = Infinity;
  let bytes = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const started = process.hrtime.bigint();
    bytes = await writeAll(write, input);
    best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e6);
  }
  log(`  ${label}: best of ${ROUNDS} ${best.toFixed(0)} ms (${fmt(bytes)} bytes)`);
  return Math.round((N / best) * 1000);
}

/** Records/s of placing every keyed message of `input` on one of six partitions, best of ROUNDS. */
function partitionRate(label: string, create: ICustomPartitioner, input: PartitionerArgs[]) {
  const partition = create();
  let best = Infinity;
  let sum = 0;
  for (let round = 0; round < ROUNDS + 1; round++) {
    const started = process.hrtime.bigint();
    for (const args of input) sum += partition(args);
    // The first round warms up.
    if (round > 0) best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e6);
  }
  log(`  ${label}: best of ${ROUNDS} ${best.toFixed(0)} ms (checksum ${sum})`);
  return Math.round((input.length / best) * 1000);
}

function partitioning(input: RecordSetOptions[]): void {
  const partitionMetadata = Array.from({ length: 6 }, (_, partitionId) => ({
    partitionId,
    leader: 1,
    replicas: [1],
    isr: [1],
    partitionErrorCode: 0,
  }));
  const keyed = input.flatMap((batch) =>
    batch.messages.map(({ key, value }): PartitionerArgs => ({
      topic: 'orders',
      partitionMetadata,
      message: { key, value },
    })),
  );
  const [stock, ours] = [Partitioners.DefaultPartitioner(), KeyPartitioner()];
  for (const args of keyed.slice(0, 10_000))
    if (stock(args) !== ours(args)) throw new Error('the key partitioner placed a key elsewhere');
  const stockRate = partitionRate(
    "kafkajs' DefaultPartitioner",
    Partitioners.DefaultPartitioner,
    keyed,
  );
  const ourRate = partitionRate('KeyPartitioner', KeyPartitioner, keyed);
  console.log(`keyed records' partition, ${fmt(keyed.length)} keys, 6 partitions:`);
  console.log(`  kafkajs 2.2.4         ${fmt(stockRate)} records/s`);
  console.log(
    `  KeyPartitioner        ${fmt(ourRate)} records/s (x${(ourRate / stockRate).toFixed(2)})`,
  );
}

async function main(): Promise<void> {
  const stock = stockRecordSet();
  const patched = patchedRecordSet();
  log(`${fmt(N)} order records in batches of ${fmt(PER_BATCH)}`);
  const input = batches();
  // The same clock for both: a batch of records without timestamps is stamped with it.
  const clock = Date.now;
  Date.now = () => Date.UTC(2026, 11, 3);
  for (const batch of input.slice(0, 20)) {
    const [a, b] = [await stock(batch), await patched(batch)];
    if (!a.buffer.equals(b.buffer)) throw new Error('the patched writer wrote other bytes');
  }
  Date.now = clock;
  // Interleaved warm-up so neither side profits from running second.
  await writeAll(stock, input);
  await writeAll(patched, input);
  const stockRate = await measure("kafkajs' batch writer", stock, input);
  const patchedRate = await measure('the patched writer', patched, input);
  console.log(`record batch writing, ${fmt(N)} records, ${fmt(PER_BATCH)} per batch:`);
  console.log(`  kafkajs 2.2.4         ${fmt(stockRate)} records/s`);
  console.log(
    `  patched               ${fmt(patchedRate)} records/s (x${(patchedRate / stockRate).toFixed(2)})`,
  );
  partitioning(input);
}

void main();
