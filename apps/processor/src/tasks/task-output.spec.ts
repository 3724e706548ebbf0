// When a task's transaction is due: within the commit interval if a reader waits for what it
// holds, else within the quiet interval. The producer is a recorder: no broker is reached.
import type { TopicMessages } from 'kafkajs';

import type { RecordCollector } from './record-collector';
import { TaskOutput } from './task-output';
import type { OffsetToCommit, TaskProducer } from './task-producer';

function recorded() {
  const sent: TopicMessages[][][] = [];
  const commits: Array<OffsetToCommit | undefined> = [];
  const unanswered: Array<() => void> = [];
  const producer = {
    send: (records: RecordCollector) => sent.push(records.drain()),
    commit: (offset: OffsetToCommit | undefined, onCommitted: () => void) => {
      commits.push(offset);
      unanswered.push(onCommitted);
    },
  } as unknown as TaskProducer;
  const output = new TaskOutput(
    producer,
    { commitMs: 100, quietMs: 1000 },
    { groupId: 'g', topic: 't', partition: 0 },
  );
  output.begin();
  /** The coordinator accepts every commit asked for so far. */
  const answer = () => unanswered.splice(0).forEach((onCommitted) => onCommitted());
  return { output, sent, commits, answer };
}

describe('a task’s transaction', () => {
  const record = { key: 'k', value: 'v' };
  // The clock stands still: a slow moment between a transaction's start and the check must not
  // move it past an interval.
  const now = Date.UTC(2026, 11, 1);
  beforeEach(() => {
    jest.spyOn(Date, 'now').mockReturnValue(now);
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('with nothing handled is never due', () => {
    const { output } = recorded();
    expect(output.due(now + 10_000, true)).toBe(false);
  });

  it('holding a record a reader waits for is due after the commit interval', () => {
    const { output } = recorded();
    output.add('results', record, true);
    output.add('changelog', record, false);
    output.flush();
    expect(output.due(now + 50, false)).toBe(false);
    expect(output.due(now + 150, false)).toBe(true);
  });

  it('holding only state changes and positions is due after the quiet interval', () => {
    const { output } = recorded();
    output.add('changelog', record, false);
    output.flush();
    output.handled();
    expect(output.due(now + 150, false)).toBe(false);
    expect(output.due(now + 1050, false)).toBe(true);
  });

  it('holding work the task keeps elsewhere that a reader waits for is due after the commit interval', () => {
    const { output } = recorded();
    output.handled();
    expect(output.due(now + 150, false)).toBe(false);
    expect(output.due(now + 150, true)).toBe(true);
  });

  it('is quiet again after a commit, and after a discard', () => {
    const { output, sent, commits, answer } = recorded();
    output.add('results', record, true);
    const member = { generationId: 3, memberId: 'm' };
    output.commit('7', undefined, member, () => {});
    expect(sent).toHaveLength(1);
    expect(commits).toEqual([{ groupId: 'g', topic: 't', partition: 0, offset: '7', member }]);
    answer();
    output.add('changelog', record, false);
    output.flush();
    expect(output.due(now + 150, false)).toBe(false);

    output.add('results', record, true);
    output.discard();
    output.add('changelog', record, false);
    output.flush();
    expect(output.due(now + 150, false)).toBe(false);
  });

  it('is not due while its last commit is unanswered, however long that takes', () => {
    const { output, commits, answer } = recorded();
    const answered: string[] = [];
    output.add('results', record, true);
    output.commit('7', undefined, undefined, () => answered.push('7'));
    output.add('results', record, true);
    output.flush();
    expect(output.due(now + 5_000, false)).toBe(false);
    answer();
    expect(answered).toEqual(['7']);
    expect(output.due(now + 150, false)).toBe(true);
    // A commit that failed is never answered: the task's next transaction starts afresh.
    output.commit('8', undefined, undefined, () => answered.push('8'));
    output.discard();
    output.add('results', record, true);
    output.flush();
    expect(output.due(now + 150, false)).toBe(true);
    expect(commits.map((c) => c?.offset)).toEqual(['7', '8']);
  });
});
