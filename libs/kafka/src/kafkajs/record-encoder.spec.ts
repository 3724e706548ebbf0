import fc from 'fast-check';

import { kafkajsModule, patchedRecordSet, stockRecordSet } from './patched-kafkajs';
import type { RecordSetOptions } from './patched-kafkajs';

// The batch writer the patch puts in Produce, against kafkajs 2.2.4's own (kept by it): the
// same bytes, or the same error, for whatever a producer may be handed.
const recordSet = patchedRecordSet();
const stock = stockRecordSet();
const Long = kafkajsModule<{ fromValue(value: string | number): unknown }>('utils/long');
const NONE = 0;
const GZIP = 1;

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }), // lone surrogates and astral characters
  fc.string({ minLength: 100, maxLength: 400 }),
);
const bytes = fc.oneof(
  { arbitrary: text, weight: 4 },
  { arbitrary: fc.uint8Array({ maxLength: 300 }).map((array) => Buffer.from(array)), weight: 4 },
  // Lengths of three-byte varints.
  { arbitrary: fc.integer({ min: 8_192, max: 40_000 }).map((n) => 'é'.repeat(n)), weight: 1 },
);
const nullable = fc.oneof(bytes, fc.constant(null));
const timestamp = fc.oneof(
  fc.integer({ min: 0, max: 2 ** 45 }),
  // Deltas on either side of where the plain-number varlong stops being exact.
  fc.constantFrom(2 ** 51, 2 ** 51 + 1, 2 ** 52, -(2 ** 51), 1.5, -7),
  fc.integer({ min: 1_700_000_000_000, max: 1_800_000_000_000 }),
  fc.integer({ min: 1_700_000_000_000, max: 1_800_000_000_000 }).map(String),
  fc.constant(0),
);
const headers = fc.dictionary(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.oneof(bytes, fc.array(bytes, { maxLength: 3 })),
  { maxKeys: 4 },
);
const message = fc.record(
  {
    key: fc.oneof(nullable, fc.constant(undefined)),
    value: nullable,
    headers,
    timestamp,
  },
  { requiredKeys: ['value'] },
);
const options = fc.record(
  {
    compression: fc.constant(NONE),
    messages: fc.array(message, { minLength: 1, maxLength: 30 }),
    producerId: fc
      .oneof(fc.constant(-1), fc.integer({ min: 0, max: 2 ** 40 }))
      .map((id) => Long.fromValue(id)),
    producerEpoch: fc.integer({ min: 0, max: 32_767 }),
    firstSequence: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    transactional: fc.boolean(),
  },
  { requiredKeys: ['compression', 'messages'] },
);

/** The bytes a writer gives, or its error's message. */
async function outcome(write: typeof stock, input: RecordSetOptions): Promise<string> {
  try {
    return (await write(input)).buffer.toString('hex');
  } catch (error) {
    return `throws ${(error as Error).message}`;
  }
}

describe("Produce's record batch writer (patched)", () => {
  const now = Date.UTC(2026, 11, 3, 8);
  beforeEach(() => jest.spyOn(Date, 'now').mockReturnValue(now));
  afterEach(() => jest.restoreAllMocks());

  it('writes the bytes kafkajs 2.2.4 wrote, for any batch of records', async () => {
    await fc.assert(
      fc.asyncProperty(options, async (input) => {
        expect(await outcome(recordSet, input)).toEqual(await outcome(stock, input));
      }),
      { numRuns: 1000 },
    );
  });

  it('fails where kafkajs failed, and leaves a compressed batch to kafkajs', async () => {
    const cases: RecordSetOptions[] = [
      { compression: NONE, messages: [{ value: 'v', headers: { h: null as unknown as string } }] },
      {
        compression: NONE,
        messages: [{ value: 'v', headers: null as unknown as Record<string, string> }],
      },
      { compression: NONE, messages: [{ value: 5 as unknown as string }] },
      { compression: NONE, messages: [{ value: 'v', timestamp: 'soon' }] },
      { compression: GZIP, messages: [{ key: 'k', value: 'v'.repeat(100) }] },
      // kafkajs took a spread copy: an inherited key is not the message's.
      { compression: NONE, messages: [Object.assign(Object.create({ key: 'k' }), { value: 'v' })] },
      { compression: NONE, messages: [] },
    ];
    for (const input of cases) {
      const expected = await outcome(stock, input);
      expect(await outcome(recordSet, input)).toEqual(expected);
    }
  });
});
