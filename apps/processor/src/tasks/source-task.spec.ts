// A source task's positions across definition changes, without a broker: what it would commit
// in the offset's metadata when a pipeline stops running here, is deleted, or was there before
// positions were.
import { pipelineRun } from '@sluice/contracts';

import { PipelineSet } from '../pipelines/pipeline-set';
import { decodeRepartitionRecord } from '../repartition/repartition-records';
import { active, order, sourceTask, stored } from './unit-tasks.testing';

const runsIn = (metadata: string | undefined) =>
  JSON.parse(metadata!) as { r: string[]; p?: Record<string, number> };

describe('a source task’s positions', () => {
  const [a, b] = [stored(1), stored(2)];

  it('keeps the position of a pipeline that stops running here, and forgets a deleted one', () => {
    const pipelines = new PipelineSet();
    pipelines.set(active(a));
    pipelines.set(active(b));
    let known = [a, b];
    const task = sourceTask(pipelines, () => known);
    // Committed at 40, with b ahead at 50.
    task.adoptCommitted(
      JSON.stringify({ r: [pipelineRun(a), pipelineRun(b)], p: { [pipelineRun(b)]: 50 } }),
      '40',
    );
    task.refresh();

    // b is parked here (its apply failed): it runs nowhere on this replica, but is known.
    pipelines.delete(b.id);
    task.refresh();
    expect(runsIn(task.commitMetadata('40'))).toEqual({
      r: [pipelineRun(a), pipelineRun(b)],
      p: { [pipelineRun(b)]: 50 },
    });

    // b is deleted: its position goes.
    known = [a];
    pipelines.set(active(a)); // any change makes the task look again
    task.refresh();
    expect(runsIn(task.commitMetadata('40'))).toEqual({ r: [pipelineRun(a)] });
  });

  it('does not hold the others back behind a pipeline parked here, and takes it back when it returns', () => {
    const pipelines = new PipelineSet();
    pipelines.set(active(a));
    pipelines.set(active(b));
    const task = sourceTask(pipelines, () => [a, b]);
    task.adoptCommitted(
      JSON.stringify({ r: [pipelineRun(a), pipelineRun(b)], p: { [pipelineRun(b)]: 50 } }),
      '40',
    );
    task.refresh();
    expect(task.repositionTo()).toBe('40');
    pipelines.delete(a.id); // a parked at 40: b alone reads here, from 50
    task.refresh();
    expect(task.repositionTo()).toBe('50');
    pipelines.set(active(a)); // back: the task reads from a's position again
    task.refresh();
    expect(task.repositionTo()).toBe('40');
  });

  it('gives metadata from before positions to the pipelines known then, and a later one its start', () => {
    const pipelines = new PipelineSet();
    pipelines.set(active(a));
    const task = sourceTask(pipelines, () => [a, b]);
    task.adoptCommitted(JSON.stringify({ t: 5 }), '120');
    task.refresh();
    // b is known but not running here: it keeps the old committed offset too.
    const before = runsIn(task.commitMetadata('120'));
    expect(new Set(before.r)).toEqual(new Set([pipelineRun(a), pipelineRun(b)]));
    expect(before.p).toBeUndefined();

    // A pipeline created after the upgrade starts where its definition says (here, offset 0).
    const c = stored(3);
    pipelines.set(active(c));
    task.refresh();
    expect(runsIn(task.commitMetadata('120')).p).toEqual({ [pipelineRun(c)]: 0 });
  });
});

describe('a source task’s watermark markers', () => {
  const DAY = 86_400_000;
  const day1 = Date.UTC(2026, 10, 1);

  it('are sent when its event time crosses a window end, not after every transaction', () => {
    const pipelines = new PipelineSet();
    pipelines.set(active(stored(1)));
    const task = sourceTask(pipelines, () => [stored(1)]);
    task.adoptCommitted(undefined, undefined);
    task.refresh();
    const markers: number[] = [];
    task.send = (_topic, message) => {
      const record = decodeRepartitionRecord(String(message.value));
      if (record?.kind === 'marker') markers.push(record.time);
    };
    let offset = 0;
    /** One transaction of the task: a batch of orders at these times, then the commit. */
    const transaction = (...times: number[]) => {
      task.handle(times.map((time) => order(offset++, time)));
      task.afterBatch(String(offset));
      task.beforeCommit();
    };

    transaction(day1 + 1000); // the first time it knows: announced
    transaction(day1 + 2000, day1 + 3000);
    transaction(day1 + DAY - 1); // still inside the first day's window
    expect(markers).toEqual([day1 + 1000]);
    transaction(day1 + DAY + 5); // past its end: the window can fire
    transaction(day1 + DAY + 6, day1 + 2 * DAY - 1);
    expect(markers).toEqual([day1 + 1000, day1 + DAY + 5]);
  });

  it('are sent at once, before any record, when the pipeline enters a new epoch', () => {
    const pipelines = new PipelineSet();
    const first = stored(1);
    pipelines.set(active(first));
    const task = sourceTask(pipelines, () => [first]);
    task.adoptCommitted(undefined, undefined);
    task.refresh();
    const sent: string[] = [];
    task.send = (_topic, message) => {
      const record = decodeRepartitionRecord(String(message.value));
      if (record?.kind === 'marker') sent.push(`marker ${record.time} ${record.epoch}`);
      else if (record) sent.push('record');
    };
    task.handle([order(0, day1 + 1000), order(1, day1 + 5000)]);
    task.afterBatch('2');
    task.beforeCommit();
    const oldEpoch = active(first).epoch;
    expect(sent.filter((s) => s.startsWith('marker'))).toEqual([
      `marker ${day1 + 5000} ${oldEpoch}`,
    ]);

    // A reset: the stateful side starts the new epoch from the times it carried over, so the
    // source tells it the time it has read before any record of the new epoch.
    sent.length = 0;
    const reset = { ...first, reset_generation: 1 };
    pipelines.set(active(reset));
    task.refresh();
    task.handle([order(2, day1 + 6000)]);
    task.afterBatch('3');
    task.beforeCommit(); // the order, folded into a partial; no boundary crossed since
    expect(sent).toEqual([`marker ${day1 + 5000} ${active(reset).epoch}`, 'record']);
  });
});
