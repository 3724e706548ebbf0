import { TransactionJournal } from './transaction-journal';

const OUT = 'out/0';
const LOG = 'log/3';

/** A journal with an acknowledged transaction (offset 10) that wrote out/0 at 5 and log/3 at 7. */
function journal(): TransactionJournal {
  const j = new TransactionJournal();
  j.begin();
  j.wrote([
    { topicName: 'out', partition: 0, baseOffset: '5' },
    { topicName: 'log', partition: 3, baseOffset: '7' },
    { topicName: 'out', partition: 0, baseOffset: '6' }, // a later batch: not the start
  ]);
  j.committing('10');
  j.acknowledged();
  return j;
}

describe('TransactionJournal.decide', () => {
  it('commits the acknowledged transaction wherever it is still open', () => {
    const j = journal();
    expect(j.decide(OUT, '5', '10').kind).toBe('commit');
    expect(j.decide(LOG, '7', '10').kind).toBe('commit');
    // Its later batch's offset is not where it started: no transaction of this journal starts there.
    expect(j.decide(OUT, '6', '10').kind).toBe('not-ours');
    expect(j.decide('other/0', '5', '10').kind).toBe('not-ours');
  });

  it("cannot tell when the next transaction wrote into the acknowledged one's open span", () => {
    const j = journal();
    j.begin();
    j.wrote([{ topicName: 'out', partition: 0, baseOffset: '9' }]);
    // out/0 is open from 5: the acknowledged transaction's start, with the next one's records in it.
    expect(j.decide(OUT, '5', '10').kind).toBe('unknown');
    expect(j.decide(LOG, '7', '10').kind).toBe('commit'); // the next one did not write there
  });

  it('forgets the acknowledged transaction once the task aborted it', () => {
    const j = journal();
    j.forgetAcknowledged();
    expect(j.decide(OUT, '5', '10').kind).toBe('not-ours');
  });

  it('aborts the next transaction when its commit was never asked for', () => {
    const j = journal();
    j.begin();
    j.wrote([{ topicName: 'out', partition: 0, baseOffset: '9' }]);
    expect(j.decide(OUT, '9', '10')).toMatchObject({ kind: 'abort' });
  });

  it('tells an asked-for commit by the committed offset, when the offsets differ', () => {
    const j = journal();
    j.begin();
    j.wrote([{ topicName: 'log', partition: 3, baseOffset: '12' }]);
    j.committing('20');
    expect(j.decide(LOG, '12', '20').kind).toBe('commit');
    expect(j.decide(LOG, '12', '10').kind).toBe('abort');
    expect(j.decide(LOG, '12', '15').kind).toBe('unknown');
  });

  it('cannot tell when both transactions commit the same offset (a tick without input)', () => {
    const j = journal();
    j.begin();
    j.wrote([{ topicName: 'out', partition: 0, baseOffset: '9' }]);
    j.committing('10');
    expect(j.decide(OUT, '9', '10').kind).toBe('unknown');
  });

  it('lists what both transactions wrote, and forgets an unacknowledged one when the next begins', () => {
    const j = journal();
    j.begin();
    j.wrote([{ topicName: 'out', partition: 2, baseOffset: '1' }]);
    expect(j.writtenPartitions()).toEqual([
      { topic: 'out', partitions: [0, 2] },
      { topic: 'log', partitions: [3] },
    ]);
    j.begin();
    expect(j.decide('out/2', '1', '10').kind).toBe('not-ours');
    expect(j.writtenPartitions()).toEqual([
      { topic: 'out', partitions: [0] },
      { topic: 'log', partitions: [3] },
    ]);
  });

  it('handles a first transaction with nothing committed before it', () => {
    const j = new TransactionJournal();
    j.begin();
    j.wrote([{ topicName: 'out', partition: 0, baseOffset: '0' }]);
    j.committing('4');
    expect(j.decide(OUT, '0', undefined).kind).toBe('abort');
    expect(j.decide(OUT, '0', '4').kind).toBe('commit');
  });
  it('commits what the fence found committed, and then holds it acknowledged', () => {
    const j = journal();
    j.begin();
    j.wrote([{ topicName: 'out', partition: 0, baseOffset: '9' }]);
    j.committing('10'); // a commit that moved no offset (a tick): the offsets cannot tell
    expect(j.decide(OUT, '9', '10').kind).toBe('unknown');
    j.committedAfterFence();
    expect(j.decide(OUT, '9', '10').kind).toBe('commit');
    expect(j.decide(LOG, '7', '10').kind).toBe('commit');
    j.settled();
    expect(j.lastAcknowledged?.firstOffsets.get(OUT)).toBe('9');
    expect(j.unacknowledged).toBeUndefined();
  });

  it("lists where both transactions' offset commits went, once per group", () => {
    const j = new TransactionJournal();
    j.begin();
    j.committing(undefined, [{ groupId: 'g', topics: [{ topic: 'in', partitions: [0, 1] }] }]);
    j.acknowledged();
    j.begin();
    j.committing(undefined, [
      { groupId: 'g', topics: [{ topic: 'in', partitions: [1, 2] }] },
      { groupId: 'h', topics: [{ topic: 'in', partitions: [0] }] },
    ]);
    expect(j.groupOffsets()).toEqual([
      { groupId: 'g', topics: [{ topic: 'in', partitions: [0, 1, 2] }] },
      { groupId: 'h', topics: [{ topic: 'in', partitions: [0] }] },
    ]);
  });

  it('aborts what the fence found aborted', () => {
    const j = journal();
    j.begin();
    j.wrote([{ topicName: 'out', partition: 0, baseOffset: '9' }]);
    j.committing(undefined); // a replica's transaction: the journal keeps no offset
    expect(j.decide(OUT, '9', undefined).kind).toBe('unknown');
    j.abortedAfterFence();
    expect(j.decide(OUT, '9', undefined).kind).toBe('abort');
    expect(j.decide(LOG, '7', undefined).kind).toBe('commit'); // the acknowledged one's
  });
});
