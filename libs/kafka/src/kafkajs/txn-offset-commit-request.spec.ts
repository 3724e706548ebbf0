// The patched TxnOffsetCommit of kafkajs (protocol/requests/txnOffsetCommit, marker
// txn-offset-commit-generation): v3's bytes field by field as Kafka's schema has them, the
// "no member" of a caller without group metadata (or with kafkajs' null before a first join)
// as -1 and '', and v1 for a broker whose highest version is 2. The broker's answers to it are
// in ../group-fenced-offsets.int-spec.ts.
import { kafkajsModule } from './patched-kafkajs';

interface Request {
  apiVersion: number;
  encode(): Promise<{ buffer: Buffer }>;
}
interface TxnOffsetCommit {
  versions: string[];
  protocol(version: { version: number }): (options: Record<string, unknown>) => {
    request: Request;
  };
}

const txnOffsetCommit = kafkajsModule<TxnOffsetCommit>('protocol/requests/txnOffsetCommit');
const commit = {
  transactionalId: 't',
  groupId: 'g',
  producerId: 1,
  producerEpoch: 2,
  topics: [{ topic: 'a', partitions: [{ partition: 3, offset: '5', metadata: 'm' }] }],
};

async function bytesOf(version: number, options: Record<string, unknown>): Promise<string> {
  const { request } = txnOffsetCommit.protocol({ version })({ ...commit, ...options });
  return (await request.encode()).buffer.toString('hex');
}

/** v3 with `member` (its compact encoding) after producer_epoch; the rest as Kafka writes it. */
const v3 = (member: string) =>
  [
    '00', // request header's tagged fields
    '0274', // transactional_id 't'
    '0267', // group_id 'g'
    '0000000000000001', // producer_id
    '0002', // producer_epoch
    member,
    '02', // one topic
    '0261', // 'a'
    '02', // one partition
    '00000003', // partition_index
    '0000000000000005', // committed_offset
    'ffffffff', // committed_leader_epoch: unknown
    '026d', // committed_metadata 'm'
    '00', // partition's tagged fields
    '00', // topic's tagged fields
    '00', // request's tagged fields
  ].join('');

describe('kafkajs TxnOffsetCommit (patched: txn-offset-commit-generation)', () => {
  it('writes v3 with the consumer generation, member id and group instance id', async () => {
    expect(await bytesOf(3, { generationId: 7, memberId: 'mb', groupInstanceId: 'i' })).toBe(
      v3('00000007' + '036d62' + '0269'),
    );
  });

  it('writes no member as generation -1, an empty member id and no instance id', async () => {
    const none = v3('ffffffff' + '01' + '00');
    expect(await bytesOf(3, {})).toBe(none);
    expect(await bytesOf(3, { generationId: null, memberId: null, groupInstanceId: null })).toBe(
      none,
    );
  });

  it('sends a broker whose highest version is 2 a v1 request', async () => {
    expect(txnOffsetCommit.versions).toEqual(['0', '1', '2', '3']);
    const { request } = txnOffsetCommit.protocol({ version: 2 })(commit);
    expect(request.apiVersion).toBe(1);
    expect(await bytesOf(2, {})).toBe(await bytesOf(1, {}));
  });
});
