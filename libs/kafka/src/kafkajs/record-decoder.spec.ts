import fc from 'fast-check';

import { kafkajsModule, patchedRecordDecoder, stockRecordDecoder } from './patched-kafkajs';
import type {
  DecodedRecord,
  KafkajsDecoder as Decoder,
  RecordBatchContext,
  RecordDecoder,
} from './patched-kafkajs';

type DecoderClass = new (buffer: Buffer) => Decoder;

// The decoder the patch puts in kafkajs, against the one kafkajs 2.2.4 shipped (kept by it).
const decodeRecord = patchedRecordDecoder();
const stock = stockRecordDecoder();
const Decoder = kafkajsModule<DecoderClass>('protocol/decoder');
const encodeRecord = kafkajsModule<(record: object) => { buffer: Buffer }>(
  'protocol/recordBatch/record/v0',
);
const Long = kafkajsModule<{ fromValue(value: string): unknown }>('utils/long');

/** Both decoders read the record the way kafkajs' batch decoder hands it over. */
function decodeWith(decode: RecordDecoder, encoded: Buffer, context: RecordBatchContext) {
  const body = new Decoder(encoded).readVarIntBytes()!;
  return decode(new Decoder(body), context);
}

/** A comparable form: own properties in order, buffers as hex, inherited functions named. */
function plain(record: DecodedRecord): unknown {
  const form = (value: unknown): unknown =>
    Buffer.isBuffer(value)
      ? `hex:${value.toString('hex')}`
      : Array.isArray(value)
        ? value.map(form)
        : typeof value === 'function'
          ? `function ${value.name}`
          : value;
  const headers = Object.getOwnPropertyNames(record.headers).map((key) => [
    key,
    form(Object.getOwnPropertyDescriptor(record.headers, key)!.value),
  ]);
  return {
    ...record,
    key: form(record.key),
    value: form(record.value),
    headers,
    prototype: Object.getPrototypeOf(record.headers) === Object.prototype,
  };
}

const int64 = fc.oneof(
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  fc.bigInt({ min: -(2n ** 53n), max: 2n ** 53n }),
  fc.bigInt({ min: 0n, max: 2n ** 41n }),
  fc.constantFrom(-1n, 0n, 1n, 2n ** 53n - 1n, 2n ** 53n, -(2n ** 63n), 2n ** 63n - 1n),
);
const delta = fc.oneof(
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  fc.bigInt({ min: -(2n ** 48n), max: 2n ** 48n }),
  fc.integer({ min: -100_000, max: 100_000 }).map(BigInt),
  fc.constantFrom(2n ** 48n - 1n, -(2n ** 48n), 2n ** 48n, -(2n ** 48n) - 1n),
);
const bytes = fc.option(fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)));
const headerKey = fc.oneof(fc.string(), fc.constantFrom('__proto__', 'toString', 'a', 'b'));

const record = fc.record({
  firstOffset: int64,
  firstTimestamp: int64,
  maxTimestamp: int64,
  logAppendTime: fc.boolean(),
  isControlBatch: fc.option(fc.boolean(), { nil: undefined }),
  timestampDelta: delta,
  offsetDelta: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  key: bytes,
  value: bytes,
  // kafkajs' encoder cannot write a null header value (the wire format can; both decoders read
  // header values with kafkajs' header decoder).
  headers: fc.array(
    fc.tuple(
      headerKey,
      fc.uint8Array({ maxLength: 8 }).map((a) => Buffer.from(a)),
    ),
    {
      maxLength: 4,
    },
  ),
});

describe('the patched kafkajs record decoder', () => {
  it('is checked against kafkajs own decoder, not against itself', () => {
    expect(stock).not.toBe(decodeRecord);
  });

  it('decodes every record exactly as kafkajs does', () => {
    fc.assert(
      fc.property(record, (r) => {
        // Duplicate keys become arrays, as kafkajs' encoder expects them.
        const headers: Record<string, Buffer[]> = Object.create(null);
        for (const [key, value] of r.headers) (headers[key] ??= []).push(value);
        const encoded = encodeRecord({
          offsetDelta: r.offsetDelta,
          timestampDelta: Long.fromValue(r.timestampDelta.toString()),
          key: r.key,
          value: r.value,
          headers,
        }).buffer;
        const context: RecordBatchContext = {
          firstOffset: r.firstOffset.toString(),
          firstTimestamp: r.firstTimestamp.toString(),
          maxTimestamp: r.maxTimestamp.toString(),
          timestampType: r.logAppendTime ? 1 : 0,
          magicByte: 2,
          ...(r.isControlBatch === undefined ? {} : { isControlBatch: r.isControlBatch }),
        };
        expect(plain(decodeWith(decodeRecord, encoded, context))).toEqual(
          plain(decodeWith(stock, encoded, context)),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('reads consecutive records of one batch with the bases of that batch', () => {
    const first = { firstOffset: '100', firstTimestamp: '5000', magicByte: 2 };
    const second = { firstOffset: '9007199254740000', firstTimestamp: '-1', magicByte: 2 };
    const encoded = encodeRecord({ offsetDelta: 3, timestampDelta: 7, key: null, value: null });
    for (const context of [first, second, first]) {
      expect(plain(decodeWith(decodeRecord, encoded.buffer, context))).toEqual(
        plain(decodeWith(stock, encoded.buffer, context)),
      );
    }
    expect(decodeWith(decodeRecord, encoded.buffer, second).offset).toBe('9007199254740003');
  });
});
