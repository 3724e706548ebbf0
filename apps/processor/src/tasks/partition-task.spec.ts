import type { Kafka } from 'kafkajs';
import pino from 'pino';

import { ProcessorMetrics } from '../observability/processor-metrics';
import { PartitionTask } from './partition-task';
import type { CommittedOffset } from './partition-task';

/** What the task did, in order: producers started (each fences the last) and offset reads. */
let steps: string[] = [];

/** Producers that only record that they started: the broker side is the e2e suites' job. */
const kafka = {
  producer: () => ({
    connect: async () => void steps.push('producer started'),
    transaction: async () => ({ isActive: () => false }),
    disconnect: async () => undefined,
  }),
} as unknown as Kafka;

/** A task whose state is a count of rebuilds. */
class BareTask extends PartitionTask {
  rebuilds = 0;
  protected handle(): void {}
  protected onTick(): void {}
  protected refresh(): void {}
  protected async rebuild(): Promise<void> {
    this.rebuilds += 1;
  }
}

function bareTask(): BareTask {
  return new BareTask('events', 0, {
    kafka,
    consumerGroup: 'group',
    logger: pino({ level: 'silent' }),
    metrics: new ProcessorMetrics({
      pipelines: () => [],
      lagByTopic: () => new Map(),
      assignedPartitions: () => 0,
    }),
    commitIntervalMs: 100,
  });
}

const reads = (committed: CommittedOffset | undefined) => async () => {
  steps.push('offset read');
  return committed;
};

beforeEach(() => {
  steps = [];
});
const earliest = async () => '0';

describe('PartitionTask.sync', () => {
  it("goes by the task's own last commit when the group's offset reads behind it", async () => {
    const task = bareTask();
    task.committedOffset = '100';
    // After a broker restart the commit's markers may still be pending: OffsetFetch (without
    // require_stable) answers the previous stable offset, or none at all.
    expect(await task.sync('40', reads({ offset: '40', metadata: undefined }), earliest)).toBe(
      '100',
    );
    expect(await task.sync('0', reads(undefined), earliest)).toBe('100');
    expect(task.committedOffset).toBe('100');
    expect(task.rebuilds).toBe(0);
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

  it('fences the partition with a new producer before it reads the committed offset', async () => {
    const task = bareTask();
    await task.open();
    // Opening fenced already: the first sync reads at once.
    await task.sync('0', reads(undefined), earliest);
    expect(steps).toEqual(['producer started', 'offset read']);
    steps = [];
    await task.sync('0', reads(undefined), earliest);
    expect(steps).toEqual(['producer started', 'offset read']);
  });

  it('resumes without seeking when the batch starts at the committed offset', async () => {
    const task = bareTask();
    task.committedOffset = '100';
    expect(
      await task.sync('100', reads({ offset: '100', metadata: undefined }), earliest),
    ).toBeUndefined();
    expect(task.rebuilds).toBe(0);
  });
});
