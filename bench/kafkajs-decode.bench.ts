// npm run bench:kafkajs-decode [-- --records 2000000 --rounds 3]
// Records/s of decoding fetched record batches: kafkajs' own record decoder against the one
// patches/kafkajs+2.2.4.patch puts in its place (the patch keeps the original beside it as
// decoderStock.js), measured in the same run
// on the same bytes: order events as the benches produce them, in batches of 5,000 records.
import { parseArgs } from 'node:util';

import { kafkajsModule, patchedRecordDecoder, stockRecordDecoder } from '@sluice/kafka/testing';
import type { RecordBatchContext, RecordDecoder } from '@sluice/kafka/testing';
import { generateOrders } from '@sluice/operators/testing';

import { fmt, log } from './support/kafka-bench';

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '2000000' },
    rounds: { type: 'string', default: '3' },
  },
});
const N = Number(args.records);
const ROUNDS = Number(args.rounds);
const PER_BATCH = 5000;

type Decode = RecordDecoder;
interface Decoder {
  readVarIntBytes(): Buffer | null;
  canReadBytes(length: number): boolean;
}
const Decoder = kafkajsModule<new (buffer: Buffer) => Decoder>('protocol/decoder');
const encodeRecord = kafkajsModule<(record: object) => { buffer: Buffer }>(
  'protocol/recordBatch/record/v0',
);
const stock = stockRecordDecoder();
const decodeRecord = patchedRecordDecoder();

/** The records part of batches, as the batch decoder reads it, and each batch's context. */
function batches(): Array<{ records: Buffer; count: number; context: RecordBatchContext }> {
  const orders = generateOrders({ count: N, start: Date.UTC(2026, 10, 1), seed: 5 });
  const result = [];
  for (let first = 0; first < N; first += PER_BATCH) {
    const slice = orders.slice(first, first + PER_BATCH);
    const encoded = slice.map(
      (order, i) =>
        encodeRecord({
          offsetDelta: i,
          timestampDelta: i * 3,
          key: Buffer.from(order.entity_id ?? ''),
          value: Buffer.from(JSON.stringify(order)),
        }).buffer,
    );
    result.push({
      records: Buffer.concat(encoded),
      count: slice.length,
      context: {
        firstOffset: String(first + 1_000_000),
        firstTimestamp: String(Date.UTC(2026, 10, 1) + first),
        maxTimestamp: String(Date.UTC(2026, 10, 1) + first + PER_BATCH * 3),
        timestampType: 0,
        magicByte: 2,
      },
    });
  }
  return result;
}

function decodeAll(decode: Decode, input: ReturnType<typeof batches>): number {
  let checksum = 0;
  for (const batch of input) {
    const decoder = new Decoder(batch.records);
    // One context object per batch, as kafkajs' batch decoder passes it.
    const context = { ...batch.context };
    for (let i = 0; i < batch.count; i++) {
      const record = decode(new Decoder(decoder.readVarIntBytes()!) as never, context);
      checksum += record.value!.length + record.offset.length + record.timestamp.length;
    }
  }
  return checksum;
}

function measure(label: string, decode: Decode, input: ReturnType<typeof batches>) {
  let best = Infinity;
  let checksum = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const started = process.hrtime.bigint();
    checksum = decodeAll(decode, input);
    best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e6);
  }
  const perSecond = Math.round((N / best) * 1000);
  log(`  ${label}: best of ${ROUNDS} ${best.toFixed(0)} ms (checksum ${checksum})`);
  return perSecond;
}

log(`encoding ${fmt(N)} order records in batches of ${fmt(PER_BATCH)}`);
const input = batches();
// Interleaved warm-up so neither side profits from running second.
decodeAll(stock, input);
decodeAll(decodeRecord, input);
const stockRate = measure("kafkajs' record decoder", stock, input);
const fastRate = measure('the patched decoder', decodeRecord, input);
console.log(`record decoding, ${fmt(N)} records:`);
console.log(`  kafkajs 2.2.4         ${fmt(stockRate)} records/s`);
console.log(
  `  patched               ${fmt(fastRate)} records/s (x${(fastRate / stockRate).toFixed(2)})`,
);
