import type { Kafka, TopicMessages } from 'kafkajs';
import pino from 'pino';

import { ProcessorMetrics } from '../observability/processor-metrics';
import { PartitionTask, SWEEP_KEY } from './partition-task';
import type { CommittedOffset, WrittenTopics } from './partition-task';

/** What the task did, in order: producers started (each fences the last), sweeps, reads. */
let steps: string[] = [];
let swept: TopicMessages[] = [];

/** Producers that record what they are asked: the broker side is the e2e suites' job. */
const kafka = {
  producer: () => ({
    connect: async () => void steps.push('producer started'),
    transaction: async () => ({
      isActive: () => true,
      sendBatch: async ({ topicMessages }: { topicMessages: TopicMessages[] }) => {
        swept = topicMessages;
        steps.push('records sent');
      },
      sendOffsets: async () => void steps.push('offsets sent'),
      abort: async () => void steps.push('aborted'),
    }),
    disconnect: async () => undefined,
  }),
} as unknown as Kafka;

/** A task whose state is a count of rebuilds. */
class BareTask extends PartitionTask {
  rebuilds = 0;
  protected handle(): void {}
  protected onTick(): void {}
  protected refresh(): void {}
  protected writtenTopics(): WrittenTopics {
    return { all: ['results'], own: ['changelog'] };
  }
  protected async rebuild(): Promise<void> {
    this.rebuilds += 1;
    steps.push('rebuilt');
  }
}

function bareTask(): BareTask {
  return new BareTask('events', 2, {
    kafka,
    consumerGroup: 'group',
    logger: pino({ level: 'silent' }),
    metrics: new ProcessorMetrics({
      pipelines: () => [],
      lagByTopic: () => new Map(),
      assignedPartitions: () => 0,
    }),
    commitIntervalMs: 100,
    partitionsOf: async () => 3,
  });
}

const reads = (committed: CommittedOffset | undefined) => async () => {
  steps.push('offset read');
  return committed;
};
const earliest = async () => '0';
const FENCE = ['producer started', 'records sent', 'offsets sent', 'aborted'];

beforeEach(() => {
  steps = [];
  swept = [];
});

describe('PartitionTask', () => {
  it('opens by fencing the partition and aborting a sweep of every partition it writes', async () => {
    const task = bareTask();
    await task.open();
    expect(steps).toEqual([...FENCE, 'rebuilt']);
    expect(
      swept.map(({ topic, messages }) => [topic, messages.map((m) => [m.partition, m.key])]),
    ).toEqual([
      [
        'results',
        [
          [0, SWEEP_KEY],
          [1, SWEEP_KEY],
          [2, SWEEP_KEY],
        ],
      ],
      ['changelog', [[2, SWEEP_KEY]]],
    ]);
  });

  it('reads the committed offset of a kept task only after fencing it again', async () => {
    const task = bareTask();
    await task.open();
    steps = [];
    // The first sync after opening needs no second fence.
    await task.sync('0', reads(undefined), earliest);
    expect(steps).toEqual(['offset read']);
    steps = [];
    await task.sync('0', reads(undefined), earliest);
    expect(steps).toEqual([...FENCE, 'offset read']);
  });

  it("follows the group's offset below its own last commit, rebuilding the state", async () => {
    // After a broker restart that lost the markers of the task's last commit, the sweep
    // aborted that commit: the group's offset is the truth, and the state must match it.
    const task = bareTask();
    task.committedOffset = '100';
    expect(await task.sync('40', reads({ offset: '40', metadata: undefined }), earliest)).toBe(
      undefined,
    );
    expect(task.committedOffset).toBe('40');
    expect(task.rebuilds).toBe(1);
  });

  it("follows the group's offset when it is ahead (another owner committed since)", async () => {
    const task = bareTask();
    task.committedOffset = '100';
    expect(await task.sync('100', reads({ offset: '160', metadata: undefined }), earliest)).toBe(
      '160',
    );
    expect(task.committedOffset).toBe('160');
    expect(task.rebuilds).toBe(1);
  });

  it('resumes without seeking or rebuilding when the batch starts at its own commit', async () => {
    const task = bareTask();
    task.committedOffset = '100';
    expect(
      await task.sync('100', reads({ offset: '100', metadata: undefined }), earliest),
    ).toBeUndefined();
    expect(task.rebuilds).toBe(0);
  });

  it('goes back to the start of a partition nothing was committed for', async () => {
    const task = bareTask();
    await task.open();
    expect(await task.sync('500', reads(undefined), async () => '7')).toBe('7');
  });
});
