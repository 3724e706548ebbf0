import {
  assertPatchedKafkajs,
  kafkajsModule,
  kafkajsPatchProblems,
  loadedKafkajsFacts,
  REQUIRED_PATCHES,
  UnpatchedKafkajsError,
} from './patched-kafkajs';

type Encoder = { buffer: Buffer };
type Request = { apiKey: number; apiVersion: number; encode(): Promise<Encoder> };
type OffsetFetch = {
  protocol(options: { version: number }): (request: {
    groupId: string;
    topics: { topic: string; partitions: { partition: number }[] }[] | null;
    requireStable?: boolean;
  }) => {
    request: Request;
    response: { decode(raw: Buffer): Promise<unknown>; parse(data: unknown): Promise<unknown> };
  };
};

describe('the kafkajs this workspace loads', () => {
  it('is 2.2.4 with every change of patches/kafkajs+2.2.4.patch', () => {
    expect(kafkajsPatchProblems(loadedKafkajsFacts())).toEqual([]);
    expect(() => assertPatchedKafkajs()).not.toThrow();
  });
});

describe('assertPatchedKafkajs', () => {
  const patched = { version: '2.2.4', patches: REQUIRED_PATCHES, offsetFetchVersions: ['1', '7'] };

  it('refuses an unpatched kafkajs, saying what is missing and how to mend it', () => {
    const unpatched = { version: '2.2.4', patches: undefined, offsetFetchVersions: ['1', '4'] };
    expect(() => assertPatchedKafkajs(unpatched)).toThrow(UnpatchedKafkajsError);
    expect(() => assertPatchedKafkajs(unpatched)).toThrow(
      /kafkajs lacks the patch \(read-committed-filter, .*describe-producers-write-txn-markers, authorization-errors, deleted-target-topics, linear-partition-grouping, fetch-partition-records, transactional-identity, remembered-coordinators, single-copy-produce, txn-offset-commit-generation, before-rejoin-hook, describe-transactions\); kafkajs has no OffsetFetch v7.*run `npm ci`/,
    );
  });

  it('refuses another version and a partial patch', () => {
    expect(kafkajsPatchProblems({ ...patched, version: '2.2.5' })).toEqual([
      'kafkajs is 2.2.5, not 2.2.4',
    ]);
    expect(kafkajsPatchProblems({ ...patched, patches: ['read-committed-filter'] })).toEqual([
      'kafkajs lacks the patch (fast-record-decoder, fast-record-encoder, offset-fetch-require-stable, list-offsets-isolation-level, coordinator-retries, send-retry-per-partition, describe-producers-write-txn-markers, authorization-errors, deleted-target-topics, linear-partition-grouping, fetch-partition-records, transactional-identity, remembered-coordinators, single-copy-produce, txn-offset-commit-generation, before-rejoin-hook, describe-transactions)',
    ]);
    expect(kafkajsPatchProblems(patched)).toEqual([]);
  });
});

describe('OffsetFetch v7 (added by the patch)', () => {
  const offsetFetch = kafkajsModule<OffsetFetch>('protocol/requests/offsetFetch').protocol({
    version: 7,
  });

  it('encodes require_stable in the flexible (compact) layout', async () => {
    const { request } = offsetFetch({
      groupId: 'g',
      topics: [{ topic: 'ab', partitions: [{ partition: 2 }] }],
      requireStable: true,
    });
    expect([request.apiKey, request.apiVersion]).toEqual([9, 7]);
    const bytes = (await request.encode()).buffer;
    expect([...bytes]).toEqual([
      0, // request header tagged fields
      2,
      0x67, // group_id: compact string "g"
      2, // topics: one
      3,
      0x61,
      0x62, // name "ab"
      2,
      0,
      0,
      0,
      2, // partition_indexes: [2]
      0, // topic tagged fields
      1, // require_stable
      0, // tagged fields
    ]);
  });

  it('decodes offsets and metadata, and reports UNSTABLE_OFFSET_COMMIT as a retriable error', async () => {
    const { response } = offsetFetch({ groupId: 'g', topics: null });
    const partition = (errorCode: number) => [
      0,
      0,
      0,
      1, // partition_index 1
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      42, // committed_offset 42
      0xff,
      0xff,
      0xff,
      0xff, // committed_leader_epoch -1
      3,
      0x6d,
      0x64, // metadata "md"
      errorCode >> 8,
      errorCode & 0xff,
      0,
    ];
    const body = (errorCode: number) =>
      Buffer.from([0, 0, 0, 0, 0, 2, 2, 0x74, 2, ...partition(errorCode), 0, 0, 0, 0]);
    const ok = await response.decode(body(0));
    expect(await response.parse(ok)).toMatchObject({
      responses: [{ topic: 't', partitions: [{ partition: 1, offset: '42', metadata: 'md' }] }],
      errorCode: 0,
    });
    const unstable = await response.decode(body(88));
    await expect(response.parse(unstable)).rejects.toMatchObject({
      type: 'UNSTABLE_OFFSET_COMMIT',
      retriable: true,
    });
  });
});
