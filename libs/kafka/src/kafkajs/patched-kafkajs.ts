// kafkajs 2.2.4 is the last release and it is not maintained. Where Sluice needs it to behave
// otherwise, the change is a patch in the open: patches/kafkajs+2.2.4.patch, applied by
// patch-package at `npm ci` (postinstall) and in the images, so Node, Jest and the containers
// run the same kafkajs. What it changes, each said at its place in the patch:
// - the read_committed filter follows the Java consumer's rule for interleaved aborted
//   transactions;
// - the record decoder does its offset and timestamp arithmetic on plain numbers where exact;
// - a produce request's record batch is written into one buffer, byte for byte as before, and
//   the request around its batches into one more (kafkajs copied each batch eight times);
// - OffsetFetch v7 with `require_stable`, and ListOffsets with a chosen isolation level, so a
//   task can ask the broker whether a pending transaction can still change what it reads;
// - one bounded retry policy for every transaction-coordinator request (AddPartitionsToTxn
//   included), never past the transaction timeout;
// - a transactional producer remembers its coordinators, as the Java producer does, instead of
//   a FindCoordinator request before each coordinator request; it asks again after a failure;
// - a send's retry keeps what was delivered per partition, not per broker, and waits for the
//   attempt's requests to settle (stock kafkajs lost and duplicated records on a leader move);
// - a topic deleted after a client used it is dropped from the client's metadata instead of
//   failing every later request of the client;
// - TxnOffsetCommit v3 names the consumer's generation and member id (`sendOffsets`'
//   `consumerGroupMetadata`, the generation from GROUP_JOIN), so the group coordinator refuses
//   a member a rebalance replaced: the fence of exactly-once v2 (KIP-447);
// - `run`'s `beforeRejoin` is awaited when a rebalance starts, before the member rejoins: the
//   last moment a commit under the ending generation is accepted (the Java consumer's
//   onPartitionsRevoked, which kafkajs lacks);
// - DescribeTransactions, so a replica can ask its coordinator whether the markers of the
//   commit it was just answered are written before its next transaction writes.
// This module is the one place that reaches into kafkajs' sources, and it refuses to go on
// with a kafkajs that lacks the patch.
import { createRequire } from 'node:module';

const load = createRequire(__filename);

/** Every change the patch makes, as `kafkajs/src/sluicePatches.js` lists them. */
export const REQUIRED_PATCHES = [
  'read-committed-filter',
  'fast-record-decoder',
  'fast-record-encoder',
  'offset-fetch-require-stable',
  'list-offsets-isolation-level',
  'coordinator-retries',
  'send-retry-per-partition',
  'describe-producers-write-txn-markers',
  'authorization-errors',
  'deleted-target-topics',
  'linear-partition-grouping',
  'fetch-partition-records',
  'transactional-identity',
  'remembered-coordinators',
  'single-copy-produce',
  'txn-offset-commit-generation',
  'before-rejoin-hook',
  'describe-transactions',
] as const;

export const KAFKAJS_VERSION = '2.2.4';

export class UnpatchedKafkajsError extends Error {
  override readonly name = 'UnpatchedKafkajsError';
}

/** What `assertPatchedKafkajs` looks at, read from the kafkajs this process loads. */
export interface KafkajsFacts {
  version: string | undefined;
  patches: readonly string[] | undefined;
  offsetFetchVersions: readonly string[];
}

export function loadedKafkajsFacts(): KafkajsFacts {
  const optional = <T>(path: string): T | undefined => {
    try {
      return load(path) as T;
    } catch {
      return undefined;
    }
  };
  return {
    version: optional<{ version: string }>('kafkajs/package.json')?.version,
    patches: optional<readonly string[]>('kafkajs/src/sluicePatches'),
    offsetFetchVersions:
      optional<{ versions: string[] }>('kafkajs/src/protocol/requests/offsetFetch')?.versions ?? [],
  };
}

/** The problems that make `facts` not the patched kafkajs Sluice runs; none when it is. */
export function kafkajsPatchProblems(facts: KafkajsFacts): string[] {
  const problems: string[] = [];
  if (facts.version !== KAFKAJS_VERSION)
    problems.push(`kafkajs is ${facts.version ?? 'missing'}, not ${KAFKAJS_VERSION}`);
  const missing = REQUIRED_PATCHES.filter((patch) => !facts.patches?.includes(patch));
  if (missing.length > 0) problems.push(`kafkajs lacks the patch (${missing.join(', ')})`);
  if (!facts.offsetFetchVersions.includes('7'))
    problems.push('kafkajs has no OffsetFetch v7 (require_stable)');
  return problems;
}

/** Throws, naming what is wrong and how to mend it, unless the loaded kafkajs is patched. */
export function assertPatchedKafkajs(facts: KafkajsFacts = loadedKafkajsFacts()): void {
  const problems = kafkajsPatchProblems(facts);
  if (problems.length === 0) return;
  throw new UnpatchedKafkajsError(
    `${problems.join('; ')}. Sluice runs kafkajs ${KAFKAJS_VERSION} with ` +
      'patches/kafkajs+2.2.4.patch: run `npm ci` (its postinstall applies the patch) or ' +
      '`npx patch-package`.',
  );
}

/** A kafkajs source module (under `kafkajs/src/`), for the tests and benchmarks of the patch. */
export function kafkajsModule<T>(path: string): T {
  return load(`kafkajs/src/${path}`) as T;
}

/** kafkajs' protocol Decoder, the parts a record decoder reads. */
export interface KafkajsDecoder {
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

export type RecordDecoder = (
  decoder: KafkajsDecoder,
  context?: RecordBatchContext,
) => DecodedRecord;

export interface FetchedMessage {
  key: Buffer | null;
  offset: string;
  batchContext: { producerId: string; inTransaction: boolean };
  isControlRecord?: boolean;
}

export type AbortedFilter = (fetched: {
  messages: FetchedMessage[];
  abortedTransactions?: { firstOffset: string; producerId: string }[];
}) => FetchedMessage[];

/** The record decoder kafkajs runs (the patch's). */
export const patchedRecordDecoder = (): RecordDecoder =>
  kafkajsModule('protocol/recordBatch/record/v0/decoder');

/** kafkajs 2.2.4's own record decoder, which the patch keeps beside its replacement. */
export const stockRecordDecoder = (): RecordDecoder =>
  kafkajsModule('protocol/recordBatch/record/v0/decoderStock');

/** The read_committed filter kafkajs runs (the patch's). */
export const patchedAbortedFilter = (): AbortedFilter =>
  kafkajsModule('consumer/filterAbortedMessages');

/** What Produce v3+ hands a partition's batch writer (kafkajs' Long for the producer id). */
export interface RecordSetOptions {
  compression: number;
  messages: Array<{
    key?: Buffer | string | null;
    value: Buffer | string | null;
    headers?: Record<string, Buffer | string | Array<Buffer | string>>;
    timestamp?: string | number;
  }>;
  producerId?: unknown;
  producerEpoch?: number;
  firstSequence?: number;
  transactional?: boolean;
}

/** A partition's record batch (kafkajs' Encoder, whose `buffer` holds the bytes). */
export type RecordSetWriter = (options: RecordSetOptions) => Promise<{ buffer: Buffer }>;

/** The batch writer Produce runs (the patch's). */
export const patchedRecordSet = (): RecordSetWriter =>
  kafkajsModule<{ recordSet: RecordSetWriter }>('protocol/requests/produce/v3/recordSet').recordSet;

/** kafkajs 2.2.4's own batch writer, which the patch keeps beside its replacement. */
export const stockRecordSet = (): RecordSetWriter =>
  kafkajsModule<{ stockRecordSet: RecordSetWriter }>('protocol/requests/produce/v3/recordSet')
    .stockRecordSet;
