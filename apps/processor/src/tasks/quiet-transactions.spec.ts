// Which transactions a reader waits for (docs/design.md §5): those commit within
// COMMIT_INTERVAL_MS; the quiet ones, holding only state changes, positions or a window's
// folded partials, may collect for QUIET_COMMIT_INTERVAL_MS. A source task's records are fed to
// the stateful task of its pipeline, as the repartition topic would carry them; no broker.
import type { Message } from 'kafkajs';

import { PipelineSet } from '../pipelines/pipeline-set';
import type { InputMessage } from './input-batch';
import type { CommitIntervals } from './task-output';
import { active, order, sourceTask, statefulTask, stored } from './unit-tasks.testing';
import type { LinearStored, StatefulDriven } from './unit-tasks.testing';

const DAY = 86_400_000;
const day1 = Date.UTC(2026, 10, 1);
const INTERVALS: CommitIntervals = { commitMs: 100, quietMs: 1000 };

function started(definition: LinearStored, pipelines = new PipelineSet()) {
  pipelines.set(active(definition));
  const task = sourceTask(pipelines, () => [definition], INTERVALS);
  task.adoptCommitted(undefined, undefined);
  task.refresh();
  const sent: Message[] = [];
  task.send = (_topic, message) => sent.push(message);
  return { task, sent, pipelines };
}

// The clock stands still: a slow moment between a transaction's start and the check must not
// move it past an interval.
beforeEach(() => {
  jest.spyOn(Date, 'now').mockReturnValue(Date.UTC(2026, 11, 1));
});
afterEach(() => {
  jest.restoreAllMocks();
});

/** Whether the task's transaction, begun at `begun`, is due `ms` later. */
const dueAfter = (task: StatefulDriven, begun: number, ms: number) =>
  task.output.due(begun + ms, task.awaitsCommit());

describe('a source transaction', () => {
  it('holding only a daily window’s partials is quiet until its time crosses the window’s end', () => {
    const { task } = started(stored(1));
    task.handle([order(0, day1 + 1000)]);
    expect(task.awaitsCommit()).toBe(true); // the first time it knows is announced
    task.afterBatch('1');
    task.beforeCommit();
    task.handle([order(1, day1 + 2000), order(2, day1 + 3000)]);
    expect(task.awaitsCommit()).toBe(false); // folded partials, fired only by a later marker
    task.handle([order(3, day1 + DAY + 5)]);
    expect(task.awaitsCommit()).toBe(true); // the marker that fires the day is due
  });

  it('holding a reduce’s partials, or those of a window that emits updates, is awaited', () => {
    const reduce = started(
      stored(2, {
        operators: [{ type: 'reduce', field: 'total', function: 'sum', group_by: 'currency' }],
      }),
    ).task;
    expect(reduce.awaitsCommit()).toBe(false); // nothing folded yet
    reduce.handle([order(0, day1 + 1000)]);
    expect(reduce.awaitsCommit()).toBe(true);
    reduce.beforeCommit();
    expect(reduce.awaitsCommit()).toBe(false);

    const updates = started(
      stored(3, {
        operators: [
          {
            type: 'window',
            config: { window_type: 'tumbling', size_seconds: 86400 },
            aggregation: { type: 'reduce', field: 'total', function: 'sum', group_by: 'currency' },
            emit: 'update',
          },
        ],
      }),
    ).task;
    updates.handle([order(0, day1 + 1000)]);
    updates.afterBatch('1');
    updates.beforeCommit();
    updates.handle([order(1, day1 + 2000)]);
    expect(updates.awaitsCommit()).toBe(true);
  });
});

describe('a stateful transaction', () => {
  it('holding only state changes is quiet; one holding a fired window’s result is awaited', () => {
    const definition = stored(1);
    const source = started(definition);
    const stateful = statefulTask(source.pipelines, definition.id, INTERVALS);
    stateful.refresh();
    let offset = 0;
    /** The source's next transaction (orders at `times`), as its stateful partition reads it. */
    const repartitioned = (...times: number[]): InputMessage[] => {
      source.sent.length = 0;
      source.task.handle(times.map((time) => order(offset++, time)));
      source.task.afterBatch(String(offset));
      source.task.beforeCommit();
      return source.sent.map((message, i) => ({
        offset: String(i),
        key: null,
        value: Buffer.from(String(message.value)),
        timestamp: '0',
      }));
    };
    const feed = (messages: InputMessage[]) => {
      stateful.handle(messages);
      stateful.output.handled();
      stateful.output.flush();
    };

    let begun = Date.now();
    stateful.output.begin();
    feed(repartitioned(day1 + 1000, day1 + 2000));
    expect(dueAfter(stateful, begun, 150)).toBe(false); // partials and a marker: state only
    expect(dueAfter(stateful, begun, 1050)).toBe(true);

    stateful.output.discard(); // as a commit would leave it, without a producer to commit with
    begun = Date.now();
    stateful.output.begin();
    feed(repartitioned(day1 + DAY + 5)); // past the first day's end: its window fires
    expect(dueAfter(stateful, begun, 150)).toBe(true);
  });
});
