// kafkajs decodes each fetched record's offset and timestamp with its BigInt-backed Long: parse
// the batch's base from a string, add the delta, print the sum, twice per record, plus a varlong
// read built from Long shifts. That was most of the time kafkajs takes to decode a record batch
// (bench/kafkajs-decode.bench.ts). This decoder gives the same record, field for field, doing
// the arithmetic on plain numbers when it is exact there (bases below 2^53 minus the largest
// delta, varlongs of at most 7 bytes) and kafkajs' own way otherwise. It is installed in place
// of kafkajs' record decoder when the package is first imported (see kafkajs-module.ts).
import { kafkajsModule, replaceKafkajsModule } from './kafkajs-module';

/** kafkajs' protocol Decoder, the parts read here. */
interface Decoder {
  buffer: Buffer;
  offset: number;
  readInt8(): number;
  readVarInt(): number;
  readVarLong(): unknown;
  readVarIntBytes(): Buffer | null;
}

/** What kafkajs' record batch decoder passes for every record of a batch (one object each). */
export interface RecordBatchContext {
  firstOffset: string;
  firstTimestamp: string;
  magicByte?: number;
  isControlBatch?: boolean;
  timestampType?: number;
  maxTimestamp?: string;
  [other: string]: unknown;
}

export interface DecodedRecord {
  magicByte: number | undefined;
  attributes: number;
  timestamp: string;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer | null | Array<Buffer | null>>;
  isControlRecord: boolean;
  batchContext: RecordBatchContext;
}

interface LongValue {
  add(other: unknown): LongValue;
  toString(): string;
}
const Long = kafkajsModule<{ fromValue(value: string): LongValue }>('utils/long');
const decodeHeader = kafkajsModule<(decoder: Decoder) => { key: string; value: Buffer | null }>(
  'protocol/recordBatch/header/v0/decoder',
);
const TimestampTypes = kafkajsModule<{ LOG_APPEND_TIME: number }>('protocol/timestampTypes');

/** A base plus any int32 delta, or any 7-byte varlong, stays exact below this. */
const EXACT_BASE = Number.MAX_SAFE_INTEGER - 2 ** 49;

function exactNumber(text: string): number | undefined {
  const value = Number(text);
  return Number.isInteger(value) && Math.abs(value) <= EXACT_BASE ? value : undefined;
}

// The records of a batch are decoded one after another with the same context object: its
// bases are parsed once.
let lastContext: RecordBatchContext | undefined;
let offsetBase: number | undefined;
let timestampBase: number | undefined;

/** A zigzag varlong of at most 7 bytes (49 bits) as a number; `undefined` if longer (unread). */
function readShortVarLong(decoder: Decoder): number | undefined {
  const buffer = decoder.buffer;
  let at = decoder.offset;
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 7; i++) {
    const byte = buffer[at++]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) {
      decoder.offset = at;
      return value % 2 === 1 ? -(value + 1) / 2 : value / 2;
    }
    scale *= 128;
  }
  return undefined;
}

export function decodeRecord(
  decoder: Decoder,
  batchContext: RecordBatchContext = {} as RecordBatchContext,
): DecodedRecord {
  const {
    firstOffset,
    firstTimestamp,
    magicByte,
    isControlBatch = false,
    timestampType,
    maxTimestamp,
  } = batchContext;
  if (batchContext !== lastContext) {
    lastContext = batchContext;
    offsetBase = exactNumber(firstOffset);
    timestampBase = exactNumber(firstTimestamp);
  }
  const attributes = decoder.readInt8();

  const deltaAt = decoder.offset;
  const timestampDelta = readShortVarLong(decoder);
  let timestamp: string;
  if (timestampType === TimestampTypes.LOG_APPEND_TIME && maxTimestamp) {
    if (timestampDelta === undefined) decoder.readVarLong();
    timestamp = maxTimestamp;
  } else if (timestampDelta !== undefined && timestampBase !== undefined) {
    timestamp = String(timestampBase + timestampDelta);
  } else {
    decoder.offset = deltaAt;
    timestamp = Long.fromValue(firstTimestamp).add(decoder.readVarLong()).toString();
  }

  const offsetDelta = decoder.readVarInt();
  const offset =
    offsetBase !== undefined
      ? String(offsetBase + offsetDelta)
      : Long.fromValue(firstOffset).add(offsetDelta).toString();

  const key = decoder.readVarIntBytes();
  const value = decoder.readVarIntBytes();
  const headers: DecodedRecord['headers'] = {};
  const headerCount = decoder.readVarInt();
  for (let i = 0; i < headerCount; i++) {
    const header = decodeHeader(decoder);
    // kafkajs builds the object with spreads and computed keys: an own property even for a
    // key such as `__proto__`, where plain assignment would set the prototype.
    const known = headers[header.key];
    Object.defineProperty(headers, header.key, {
      value:
        known === undefined
          ? header.value
          : Array.isArray(known)
            ? known.concat([header.value])
            : [known, header.value],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }

  return {
    magicByte,
    attributes,
    timestamp,
    offset,
    key,
    value,
    headers,
    isControlRecord: isControlBatch,
    batchContext,
  };
}

replaceKafkajsModule(
  'protocol/recordBatch/record/v0/decoder',
  'protocol/recordBatch/v0/decoder',
  decodeRecord,
);
