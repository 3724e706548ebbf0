// A task that takes over a partition whose last commit is held in PrepareCommit (issue 15,
// deterministic): on a 3-node cluster, the changelog's marker cannot be written while one node
// is down (min ISR 3), so the previous owner's commit stays pending until the node is back. The
// new task must wait for it on the broker's answers (its fence is answered only once the
// markers are written), then restore the state with that commit in it and resume after it.
// A read of the changelog that does not check its end, as the task layer before this one did,
// is shown to stop before the pending commit: it would have restored a prefix.
import { logLevel } from 'kafkajs';
import type { Admin, Kafka } from 'kafkajs';
import pino from 'pino';

import { validateDefinition } from '@sluice/contracts';
import type { StoredPipeline } from '@sluice/contracts';
import {
  createKafka,
  ensureTopics,
  fetchPartitionEnds,
  fetchStableOffset,
  readTopicToEnd,
} from '@sluice/kafka';
import { OwnBroker } from '@sluice/kafka/testing';
import { emptyCounters, planOfLinear } from '@sluice/operators';
import type { StageInput } from '@sluice/operators';
import { dailyRevenueDefinition } from '@sluice/operators/testing';
import { sleep } from '@sluice/testing';

import { ProcessorMetrics } from '../observability/processor-metrics';
import { activePipeline } from '../pipelines/active-pipeline';
import { PipelineSet } from '../pipelines/pipeline-set';
import { StateManager } from '../state/state-manager';
import { RecordCollector } from './record-collector';
import { StatefulTask } from './stateful-task';
import { TaskProducer, transactionalId } from './task-producer';
import { TransactionJournal } from './transaction-journal';

const logger = pino({ level: 'silent' });
const PREFIX = 'pending';
const GROUP = 'pending.processor';

describe('a commit whose markers are pending when its partition changes hands', () => {
  const broker = new OwnBroker(19_592, { nodes: 3 });
  let kafka: Kafka;
  let admin: Admin;

  beforeAll(async () => {
    broker.up();
    kafka = createKafka({
      clientId: 'pending-markers',
      brokers: broker.addresses,
      logLevel: logLevel.NOTHING,
    });
    admin = kafka.admin();
    await admin.connect();
  }, 180_000);

  afterAll(async () => {
    await admin?.disconnect();
    broker.destroy();
  });

  it('is waited for by the fence, then restored whole, and the task resumes after it', async () => {
    const validated = validateDefinition(
      dailyRevenueDefinition({ id: '00000000-0000-4000-8000-0000000000a1', output: 'pending.out' }),
      { topicPrefix: PREFIX },
    );
    if (!validated.valid) throw new Error(JSON.stringify(validated.errors));
    const stored: StoredPipeline = {
      ...validated.definition,
      version: 1,
      reset_generation: 0,
      created_at: '2026-11-29T00:00:00.000Z',
      updated_at: '2026-11-29T00:00:00.000Z',
    };
    const pipeline = activePipeline(
      stored,
      planOfLinear(stored, ['pending.events']),
      PREFIX,
      () => 1,
    );
    const { repartition, changelog, outputs } = pipeline.topics;
    const [output, late] = outputs as [string, string];
    await ensureTopics(admin, [
      { topic: repartition!, numPartitions: 1 },
      // Every replica in sync, or the changelog takes no write: one node down holds its markers.
      {
        topic: changelog!,
        numPartitions: 1,
        compacted: true,
        configEntries: { 'min.insync.replicas': '3' },
      },
      { topic: output, numPartitions: 1 },
      { topic: late, numPartitions: 1 },
    ]);

    // The previous owner, with the task's own transactional id: one commit, then a second whose
    // changelog marker is held.
    const stage = pipeline.stateful[0]!.node.spec.createStage({
      counters: emptyCounters(),
      trackChanges: true,
      emitter: { result: () => undefined, late: () => undefined },
    });
    const input = (group: string, day: number): StageInput => ({
      group,
      route: undefined,
      value: 10,
      time: Date.UTC(2026, 10, day, 12),
      envelope: { event_type: 'order.placed', payload: {} },
    });
    const state = new StateManager(kafka, admin, changelog!, 0, logger, metrics(), GROUP);
    const changes = () => [
      { topic: changelog!, messages: state.changes(pipeline.epoch, stage.drainChanges(), []) },
    ];
    const previous = new TaskProducer(
      kafka,
      transactionalId(GROUP, repartition!, 0),
      logger,
      new TransactionJournal(),
    );
    await previous.fence();
    for (const group of ['gbp', 'usd']) stage.add(input(group, 1));
    previous.send(RecordCollector.of(...changes()));
    previous.commit(offset('10'), () => undefined);
    await previous.idle();
    for (const group of ['eur', 'chf', 'jpy']) stage.add(input(group, 2));
    previous.send(
      RecordCollector.of(...changes(), {
        topic: output,
        messages: [{ key: 'k', value: 'result of T2' }],
      }),
    );
    await previous.idle();
    expect(previous.error).toBeUndefined();

    // A follower of the changelog goes: its ISR falls below the 3 it needs. (Not its leader:
    // with eligible leader replicas, Kafka 4 elects no new one below min ISR, and the
    // partition would be offline rather than holding a marker.)
    const [changelogMetadata] = (await admin.fetchTopicMetadata({ topics: [changelog!] })).topics;
    const leader = changelogMetadata!.partitions[0]!.leader;
    const victim = [3, 2, 1].find((node) => node !== leader)!;
    broker.kill(victim);
    previous.commit(offset('20'), () => undefined);
    await previous.idle();
    expect((previous.error as Error | undefined)?.stack).toBeUndefined(); // accepted: PrepareCommit
    // The offsets' marker is written (min ISR 2 there), the changelog's is not.
    expect((await fetchStableOffset(admin, GROUP, repartition!, 0))?.offset).toBe('20');
    const [end] = await fetchPartitionEnds(admin, changelog!);
    expect(BigInt(end!.stable)).toBeLessThan(BigInt(end!.high));
    let unchecked = 0;
    await readTopicToEnd(kafka, changelog!, () => (unchecked += 1), {
      partitions: [0],
      groupOwner: GROUP,
    });
    expect(unchecked).toBe(2); // a prefix: the first commit's two entries, not the second's three

    // The new owner.
    const pipelines = new PipelineSet();
    pipelines.set(pipeline);
    const task = new StatefulTask(
      repartition!,
      0,
      {
        kafka,
        admin,
        consumerGroup: GROUP,
        topicPrefix: PREFIX,
        logger,
        metrics: metrics(),
        commitIntervals: { commitMs: 100, quietMs: 100 },
        pipelines,
        dlqTopic: `${PREFIX}.dlq`,
      },
      { acknowledged: undefined, journal: new TransactionJournal() },
      pipeline.id,
    );
    // When the new owner's fence (its InitProducerId) is answered: that is what must wait.
    let fencedAt = 0;
    const fence = TaskProducer.prototype.fence;
    const spy = jest.spyOn(TaskProducer.prototype, 'fence').mockImplementation(async function (
      this: TaskProducer,
    ) {
      await fence.call(this);
      fencedAt = Date.now();
    });
    let resumedAt = 0;
    const resumed = task.resume().then((position) => {
      resumedAt = Date.now();
      return position;
    });
    await sleep(5000);
    // Still waiting: the fence is not answered while the commit is pending.
    expect([fencedAt, resumedAt]).toEqual([0, 0]);
    broker.up(); // the node is back: the ISR grows, the marker is written, the commit completes
    expect(await resumed).toBe('20');
    expect(fencedAt).toBeGreaterThan(0);
    spy.mockRestore();
    expect(task.stateSize()).toBe(5);
    expect(task.stateSize()).toBe(stage.size());
    await task.close();
    await previous.close();
  }, 180_000);
});

function offset(value: string) {
  return {
    groupId: GROUP,
    topic: `${PREFIX}.00000000-0000-4000-8000-0000000000a1.repartition`,
    partition: 0,
    offset: value,
    metadata: undefined,
  };
}

function metrics(): ProcessorMetrics {
  return new ProcessorMetrics({
    pipelines: () => [],
    lagByTopic: () => new Map(),
    assignedPartitions: () => 0,
  });
}
