import {
  abortedAcknowledgedWrites,
  decideHangingCommit,
  decidingTransaction,
} from './hanging-commit';
import type { SpanOutcome } from './hanging-commit';
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

/** How the begun transaction ended on out/0 and log/3. */
const outcomes = (out: SpanOutcome, log: SpanOutcome) =>
  new Map([
    ['out/0', out],
    ['log/3', log],
  ]);

/** The acknowledged transaction's outcome on out/0 (nothing after it began a commit). */
const acknowledgedAt = (out: SpanOutcome) => new Map([['out/0', out]]);

const nothing = new Map<string, SpanOutcome>();

/** An acknowledged transaction (offset 10, epoch 3) that wrote out/0 at 5 and log/3 at 1. */
function acknowledgedOnTwo(): TransactionJournal {
  const j = new TransactionJournal();
  j.begin(3);
  j.wrote([
    { topicName: 'out', partition: 0, baseOffset: '5' },
    { topicName: 'log', partition: 3, baseOffset: '1' },
  ]);
  j.committing('10');
  j.acknowledged();
  return j;
}

describe('decideHangingCommit', () => {
  it('refuses without a journal: where the markers are cannot be read', () => {
    expect(decideHangingCommit(new TransactionJournal(), nothing).kind).toBe('refuse');
  });

  it('commits again what the coordinator acknowledged, when nothing after it began a commit', () => {
    const j = acknowledged();
    j.begin(); // a transaction that never asked for its commit sent no offset commit
    j.wrote([{ topicName: 'log', partition: 3, baseOffset: '9' }]);
    expect(decideHangingCommit(j, acknowledgedAt('open'))).toMatchObject({
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

  it("commits where it joined the acknowledged one's open span, as where it began its own", () => {
    expect(decideHangingCommit(begun(), outcomes('joined', 'commit'))).toMatchObject({
      kind: 'commit',
      offset: '20',
    });
  });

  it('aborts on ABORT markers only when no acknowledged commit may share the pending offsets', () => {
    const alone = new TransactionJournal();
    expect(decideHangingCommit(begun(alone), outcomes('abort', 'open'))).toEqual({
      kind: 'abort',
      producerEpoch: 4,
      begun: true,
      reason: expect.stringContaining('ABORT'),
    });
    expect(decideHangingCommit(begun(), outcomes('abort', 'open')).kind).toBe('refuse');
  });

  it('refuses when the markers disagree or a partition cannot say', () => {
    expect(decideHangingCommit(begun(), outcomes('commit', 'abort')).kind).toBe('refuse');
    expect(decideHangingCommit(begun(), outcomes('commit', 'unknown')).kind).toBe('refuse');
    // A partition it wrote that nobody asked about counts as unknown.
    expect(decideHangingCommit(begun(), acknowledgedAt('commit')).kind).toBe('refuse');
  });

  it("commits again a replica's transaction, which journals no offset (its task's reader refuses that)", () => {
    const j = new TransactionJournal();
    j.begin(2);
    j.wrote([{ topicName: 'out', partition: 0, baseOffset: '5' }]);
    j.committing(undefined);
    j.acknowledged();
    expect(decideHangingCommit(j, acknowledgedAt('open'))).toEqual({
      kind: 'commit',
      offset: undefined,
      producerEpoch: 2,
      begun: false,
      reason: 'its commit was acknowledged',
    });
  });

  describe('an acknowledged transaction, when the next one began no commit', () => {
    /** The next transaction, never committing, wrote log/3 and maybe out/0 too. */
    function withNext(alsoOut: boolean): TransactionJournal {
      const j = acknowledged();
      j.begin(3);
      j.wrote([{ topicName: 'log', partition: 3, baseOffset: '2' }]);
      if (alsoOut) j.wrote([{ topicName: 'out', partition: 0, baseOffset: '9' }]);
      return j;
    }

    it('is committed again where its markers are missing or say COMMIT', () => {
      for (const outcome of ['open', 'commit'] as const) {
        expect(decideHangingCommit(withNext(false), acknowledgedAt(outcome))).toMatchObject({
          kind: 'commit',
          offset: '10',
        });
      }
    });

    it("is aborted whole when the next one's ABORT ended its records on a partition", () => {
      // The broker restart's dump: the changelog span of a commit the coordinator had
      // completed, with no marker of its own, closed by the next transaction's ABORT.
      expect(decideHangingCommit(withNext(true), acknowledgedAt('abort'))).toEqual({
        kind: 'abort',
        producerEpoch: 3,
        begun: false,
        reason: expect.stringContaining('the transaction after it wrote into its open span'),
      });
    });

    it('is aborted whole on an ABORT where the next one did not write too (that one did elsewhere)', () => {
      expect(decideHangingCommit(withNext(false), acknowledgedAt('abort')).kind).toBe('abort');
    });

    it('refuses where the span it shares with the next one began with an earlier transaction', () => {
      // Ending the span ends the earlier one's records too: an ABORT loses them, a COMMIT
      // commits the next one's.
      expect(decideHangingCommit(withNext(true), acknowledgedAt('joined')).kind).toBe('refuse');
      // Without the next one in it, committed again as before (nothing undid it).
      expect(decideHangingCommit(withNext(false), acknowledgedAt('joined')).kind).toBe('commit');
    });

    it('refuses to abort it when it joined an earlier span elsewhere: the sweep would end that one', () => {
      const j = acknowledgedOnTwo();
      j.begin(3);
      j.wrote([{ topicName: 'out', partition: 0, baseOffset: '9' }]);
      const split = (log: SpanOutcome) => outcomes('abort', log);
      expect(decideHangingCommit(j, split('joined')).kind).toBe('refuse');
      expect(decideHangingCommit(j, split('open')).kind).toBe('abort');
    });

    it('is aborted whole when the next one wrote into its span, still open: a COMMIT would commit both', () => {
      expect(decideHangingCommit(withNext(true), acknowledgedAt('open')).kind).toBe('abort');
      expect(decideHangingCommit(withNext(false), acknowledgedAt('open')).kind).toBe('commit');
    });

    it('refuses when a COMMIT of it arrived and an ABORT ended it elsewhere, or a partition cannot say', () => {
      expect(decideHangingCommit(acknowledgedOnTwo(), outcomes('commit', 'abort')).kind).toBe(
        'refuse',
      );
      expect(decideHangingCommit(withNext(false), acknowledgedAt('unknown')).kind).toBe('refuse');
      expect(decideHangingCommit(withNext(false), nothing).kind).toBe('refuse');
    });
  });
});

describe('decidingTransaction', () => {
  it('is the one whose commit was begun, else the last acknowledged one', () => {
    const j = acknowledged();
    expect(decidingTransaction(j)).toBe(j.lastAcknowledged);
    j.begin(4);
    j.wrote([{ topicName: 'log', partition: 3, baseOffset: '2' }]);
    expect(decidingTransaction(j)).toBe(j.lastAcknowledged);
    j.committing('20');
    expect(decidingTransaction(j)).toBe(j.unacknowledged);
    expect(decidingTransaction(new TransactionJournal())).toBeUndefined();
  });
});

describe('abortedAcknowledgedWrites', () => {
  it('names the partitions where an ABORT ended the acknowledged transaction', () => {
    const outcomes = new Map<string, SpanOutcome>([
      ['out/0', 'commit'],
      ['log/3', 'abort'],
      ['log/4', 'open'],
      ['log/5', 'unknown'],
    ]);
    expect(abortedAcknowledgedWrites(outcomes)).toEqual(['log/3']);
    expect(abortedAcknowledgedWrites(new Map([['out/0', 'commit']]))).toEqual([]);
  });
});
