// A batch whose handling throws halfway is never handed over to a commit of the replica's
// (exactly_once_v2, docs/design.md §5): the step's rejection marks the task broken only a
// microtask later, and a commit that begins in between would otherwise take the half-done work
// with the offset from before the batch (its records twice once the batch is read again).
import type { TopicMessages } from 'kafkajs';

import { PipelineSet } from '../pipelines/pipeline-set';
import type { InputBatch } from './input-batch';
import type { ReplicaTransactions } from './replica-transactions';
import type { OffsetToCommit } from './task-producer';
import type { TaskTransactions } from './task-transactions';
import { active, order, sourceTask, stored } from './unit-tasks.testing';

/** The replica's transactions as one task's share sees them: what was handed over. */
function recordingShare() {
  const handedOver: { records: TopicMessages[][][]; offsets: Array<string | undefined> } = {
    records: [],
    offsets: [],
  };
  let prepareCommit: () => void = () => undefined;
  const share: TaskTransactions = {
    id: 'unit.replica/r0/0',
    error: undefined,
    backlog: 0,
    fence: async () => undefined,
    send: (records) => handedOver.records.push(records.drain()),
    commit: (offset: OffsetToCommit | undefined) => handedOver.offsets.push(offset?.offset),
    idle: async () => undefined,
    close: async () => undefined,
  };
  const transactions = {
    forTask: (_key: string, prepare: () => void) => {
      prepareCommit = prepare;
      return share;
    },
  } as unknown as ReplicaTransactions;
  // A commit of the replica's begins: every task hands over what it handled.
  return { transactions, handedOver, commitBegins: () => prepareCommit() };
}

function batchOf(...offsets: number[]): InputBatch {
  const messages = offsets.map((offset) => order(offset, Date.UTC(2026, 10, 1) + offset));
  return {
    messages,
    firstOffset: () => String(offsets[0]),
    lastOffset: () => String(offsets.at(-1)),
    offsetLag: () => '0',
  };
}

describe('a step that throws halfway', () => {
  it('is not handed over to a commit that begins before the task is marked broken', async () => {
    const definition = stored(1, { operators: [] }); // stateless: each order is a result
    const pipelines = new PipelineSet();
    pipelines.set(active(definition));
    const replica = recordingShare();
    const task = sourceTask(pipelines, () => [definition], undefined, replica.transactions);
    const running = task as unknown as {
      lifecycle: { moveTo(state: string): void };
      position: string | undefined;
      processBatch(batch: InputBatch): Promise<unknown>;
      handle(messages: unknown[]): void;
    };
    task.adoptCommitted(undefined, '0');
    running.lifecycle.moveTo('restoring');
    running.lifecycle.moveTo('running');
    running.position = '0'; // as a resume from the committed offset leaves it
    const handle = running.handle.bind(task);
    running.handle = (messages) => {
      handle(messages); // its results are collected
      queueMicrotask(replica.commitBegins); // ahead of the rejection's handling
      throw new Error('a bug halfway through the batch');
    };

    await expect(running.processBatch(batchOf(0, 1, 2))).rejects.toThrow('halfway');
    expect(replica.handedOver).toEqual({ records: [], offsets: [] });
    // Once broken, it stays out of every later commit.
    replica.commitBegins();
    expect(replica.handedOver).toEqual({ records: [], offsets: [] });
  });
});
