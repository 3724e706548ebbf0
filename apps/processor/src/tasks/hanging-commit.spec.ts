import type { TransactionOutcome } from '@sluice/kafka';

import { decideHangingCommit } from './hanging-commit';
import { TransactionJournal } from './transaction-journal';

/** An acknowledged transaction (offset 10, producer epoch 3) that wrote out/0 at 5. */
function acknowledged(): TransactionJournal {
  const j = new TransactionJournal();
  j.begin(3);
  j.wrote([{ topicName: 'out', partition: 0, baseOffset: '5' }]);
  j.committing('10');
  j.acknowledged();
  return j;
}

/** Then one whose commit was begun (offset 20, epoch 4), that wrote out/0 at 9 and log/3 at 2. */
function begun(j = acknowledged()): TransactionJournal {
  j.begin(4);
  j.wrote([
    { topicName: 'out', partition: 0, baseOffset: '9' },
    { topicName: 'log', partition: 3, baseOffset: '2' },
  ]);
  j.committing('20');
  return j;
}

const outcomes = (out: TransactionOutcome, log: TransactionOutcome) =>
  new Map([
    ['out/0', out],
    ['log/3', log],
  ]);

describe('decideHangingCommit', () => {
  it('refuses without a journal: where the markers are cannot be read', () => {
    expect(decideHangingCommit(new TransactionJournal(), new Map()).kind).toBe('refuse');
  });

  it('commits again what the coordinator acknowledged, when nothing after it began a commit', () => {
    const j = acknowledged();
    j.begin(); // a transaction that never asked for its commit sent no offset commit
    j.wrote([{ topicName: 'out', partition: 0, baseOffset: '9' }]);
    expect(decideHangingCommit(j, new Map())).toMatchObject({
      kind: 'commit',
      offset: '10',
      producerEpoch: 3,
      begun: false,
    });
  });

  it('follows the markers of the transaction whose commit was begun', () => {
    // The run that found this: the changelog had its COMMIT, the offsets partition nothing.
    expect(decideHangingCommit(begun(), outcomes('commit', 'open'))).toMatchObject({
      kind: 'commit',
      offset: '20',
      producerEpoch: 4,
      begun: true,
    });
    expect(decideHangingCommit(begun(), outcomes('commit', 'commit')).kind).toBe('commit');
  });

  it('commits when no marker of it arrived anywhere: nothing of it was read', () => {
    expect(decideHangingCommit(begun(), outcomes('open', 'open'))).toMatchObject({
      kind: 'commit',
      offset: '20',
    });
  });

  it('aborts on ABORT markers only when no acknowledged commit may share the pending offsets', () => {
    const alone = new TransactionJournal();
    expect(decideHangingCommit(begun(alone), outcomes('abort', 'open')).kind).toBe('abort');
    expect(decideHangingCommit(begun(), outcomes('abort', 'open')).kind).toBe('refuse');
  });

  it('refuses when the markers disagree or a partition cannot say', () => {
    expect(decideHangingCommit(begun(), outcomes('commit', 'abort')).kind).toBe('refuse');
    expect(decideHangingCommit(begun(), outcomes('commit', 'unknown')).kind).toBe('refuse');
    // A partition it wrote that nobody asked about counts as unknown.
    expect(decideHangingCommit(begun(), new Map([['out/0', 'commit']])).kind).toBe('refuse');
  });

  it('refuses to commit again a transaction that committed no offset', () => {
    const j = new TransactionJournal();
    j.begin();
    j.committing(undefined);
    j.acknowledged();
    expect(decideHangingCommit(j, new Map()).kind).toBe('refuse');
  });
});
