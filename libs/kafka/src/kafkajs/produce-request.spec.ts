// The patched Produce request of kafkajs (protocol/requests/produce/v3/request.js and
// protocol/request.js, marker single-copy-produce): written into one buffer sized from its
// record sets, and framed with one more copy, where kafkajs copied every record set five
// times into Encoders grown by doubling. The bytes must be kafkajs 2.2.4's.
import fc from 'fast-check';

import { kafkajsModule, stockRecordSet } from './patched-kafkajs';

interface Encoder {
  writeInt16(value: number): Encoder;
  writeInt32(value: number): Encoder;
  writeString(value: string | null): Encoder;
  writeBytes(value: Buffer | string | null): Encoder;
  writeEncoder(value: Encoder): Encoder;
  size(): number;
  readonly buffer: Buffer;
}
type EncoderClass = new (initialSize?: number) => Encoder;
interface ProduceRequest {
  apiKey: number;
  apiVersion: number;
  encode(): Promise<Encoder>;
  /**
   * kafkajs 2.2.4's encode, kept beside the patched one; its batches are the patched writer's,
   * so the test's reference writes them with the stock writer instead.
   */
  stockEncode(): Promise<Encoder>;
}
type Produce = (options: {
  acks: number;
  timeout: number;
  transactionalId?: string | null;
  producerId?: unknown;
  producerEpoch?: number;
  compression?: number;
  topicData: Array<{
    topic: string;
    partitions: Array<{
      partition: number;
      firstSequence?: number;
      messages: Array<{ key: string | null; value: string | Buffer | null; timestamp?: number }>;
    }>;
  }>;
}) => ProduceRequest;
type CreateRequest = (options: {
  correlationId: number;
  clientId: string;
  request: { apiKey: number; apiVersion: number; encode: () => Promise<Encoder> };
}) => Promise<Encoder>;

const Encoder = kafkajsModule<EncoderClass>('protocol/encoder');
const Long = kafkajsModule<{ fromValue(value: number): unknown }>('utils/long');
const produceV3 = kafkajsModule<Produce>('protocol/requests/produce/v3/request');
const createRequest = kafkajsModule<CreateRequest>('protocol/request');

/**
 * Every unzeroed buffer full of 0xa5, so a byte left unwritten shows (Node's pool hands out
 * small ones from memory no test could fill first).
 */
function poison(): void {
  const alloc = Buffer.alloc.bind(Buffer);
  jest.spyOn(Buffer, 'allocUnsafe').mockImplementation((size) => alloc(size, 0xa5));
}

/**
 * kafkajs 2.2.4's Produce v3 body, written here from its request.js and every batch from its
 * own writer (the patch keeps it as stockRecordSet): the topics' and partitions' arrays, each
 * partition's batch behind its size.
 */
async function publishedProduce(
  options: Parameters<Produce>[0] & { transactionalId: string | null },
): Promise<Buffer> {
  const stock = stockRecordSet();
  const encoder = new Encoder()
    .writeString(options.transactionalId)
    .writeInt16(options.acks)
    .writeInt32(options.timeout)
    .writeInt32(options.topicData.length);
  for (const { topic, partitions } of options.topicData) {
    encoder.writeString(topic).writeInt32(partitions.length);
    for (const data of partitions) {
      const batch = (await stock({
        compression: options.compression ?? 0,
        messages: data.messages,
        producerId: options.producerId,
        producerEpoch: options.producerEpoch,
        firstSequence: data.firstSequence,
        transactional: !!options.transactionalId,
      })) as unknown as Encoder;
      encoder.writeInt32(data.partition).writeInt32(batch.size()).writeEncoder(batch);
    }
  }
  return encoder.buffer;
}

const text = fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 30 }));
const messages = fc.array(
  fc.record({
    key: fc.option(text),
    value: fc.oneof(
      fc.option(text),
      fc.uint8Array({ maxLength: 2000 }).map((bytes) => Buffer.from(bytes)),
    ),
    timestamp: fc.integer({ min: 1_700_000_000_000, max: 1_800_000_000_000 }),
  }),
  { minLength: 1, maxLength: 20 },
);
const topicData = fc.array(
  fc.record({
    topic: text,
    partitions: fc.array(
      fc.record({
        partition: fc.integer({ min: 0, max: 100 }),
        firstSequence: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        messages,
      }),
      { maxLength: 4 },
    ),
  }),
  { maxLength: 4 },
);

describe('kafkajs Produce request (patched: single-copy-produce)', () => {
  const now = Date.UTC(2026, 11, 4, 8);
  beforeEach(() => jest.spyOn(Date, 'now').mockReturnValue(now));
  afterEach(() => jest.restoreAllMocks());

  it('writes the bytes kafkajs 2.2.4 wrote, for any topics, partitions and records (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        topicData,
        fc.option(text),
        fc.constantFrom(-1, 0, 1),
        fc.boolean(),
        async (data, transactionalId, acks, gzip) => {
          const options = {
            acks,
            timeout: 30_000,
            transactionalId,
            producerId: Long.fromValue(4711),
            producerEpoch: 3,
            compression: gzip ? 1 : 0,
            topicData: data,
          };
          const request = produceV3(options);
          const expected = (await publishedProduce(options)).toString('hex');
          expect((await request.stockEncode()).buffer.toString('hex')).toBe(expected);
          poison();
          try {
            expect((await request.encode()).buffer.toString('hex')).toBe(expected);
          } finally {
            jest.mocked(Buffer.allocUnsafe).mockRestore();
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('frames a request with the bytes kafkajs 2.2.4 wrote (property)', async () => {
    // protocol/request.js as published: the header and payload copied into one Encoder, then
    // that one behind its size into another.
    const published = (
      apiKey: number,
      correlationId: number,
      clientId: string,
      payload: Encoder,
    ) => {
      const requestPayload = new Encoder()
        .writeInt16(apiKey)
        .writeInt16(3)
        .writeInt32(correlationId)
        .writeString(clientId)
        .writeEncoder(payload);
      return new Encoder().writeInt32(requestPayload.size()).writeEncoder(requestPayload).buffer;
    };
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 70 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        text,
        fc.array(fc.option(text), { maxLength: 20 }),
        async (apiKey, correlationId, clientId, strings) => {
          const payload = new Encoder();
          for (const value of strings) payload.writeBytes(value);
          poison();
          const request = await createRequest({
            correlationId,
            clientId,
            request: { apiKey, apiVersion: 3, encode: async () => payload },
          }).finally(() => jest.mocked(Buffer.allocUnsafe).mockRestore());
          const expected = published(apiKey, correlationId, clientId, payload);
          expect(request.buffer.toString('hex')).toBe(expected.toString('hex'));
          expect(request.buffer.readInt32BE(0)).toBe(request.buffer.length - 4);
        },
      ),
      { numRuns: 300 },
    );
  });
});
