// A transaction of a task left open on its changelog after the fence, as a single-node broker
// going down leaves one (its coordinator decided it, but dropped the marker of a partition that
// had no leader: README, Known issues). Without an end the changelog's last stable offset stays
// before it and the restore waits for good. The task's journal places the transaction by where
// it starts and says how it was decided; the task ends it with that marker and restores.
//
// A client cannot make a coordinator drop a marker, so the open transaction here is a stand-in's
// (another transactional id, which the task's fence leaves alone), and the journal is told that
// the task wrote it: what the task then does is the same as for its own.
import { logLevel, Partitioners } from 'kafkajs';
import type { Admin, Kafka, Producer } from 'kafkajs';
import pino from 'pino';

import { validateDefinition } from '@sluice/contracts';
import type { StoredPipeline } from '@sluice/contracts';
import { createKafka, ensureTopics, fetchPartitionEnds, findOpenTransactions } from '@sluice/kafka';
import { uniqueName } from '@sluice/kafka/testing';
import { emptyCounters, planOfLinear } from '@sluice/operators';
import type { StageInput } from '@sluice/operators';
import { dailyRevenueDefinition } from '@sluice/operators/testing';

import { ProcessorMetrics } from '../observability/processor-metrics';
import { activePipeline } from '../pipelines/active-pipeline';
import type { ActivePipeline } from '../pipelines/active-pipeline';
import { PipelineSet } from '../pipelines/pipeline-set';
import { StateManager } from '../state/state-manager';
import { HangingCommitError } from './open-transactions';
import { RecordCollector } from './record-collector';
import { StatefulTask } from './stateful-task';
import { TaskProducer, transactionalId } from './task-producer';
import { partitionKey, TransactionJournal } from './transaction-journal';

const logger = pino({ level: 'silent' });
const PIPELINE_ID = '00000000-0000-4000-8000-0000000000d1';

describe('a transaction of a task left open on its changelog after the fence', () => {
  let kafka: Kafka;
  let admin: Admin;
  const standIns: Producer[] = [];

  beforeAll(async () => {
    kafka = createKafka({ clientId: 'dropped-marker', logLevel: logLevel.NOTHING });
    admin = kafka.admin();
    await admin.connect();
  });

  afterAll(async () => {
    await Promise.all(standIns.map((producer) => producer.disconnect()));
    await admin.disconnect();
  });

  /** A pipeline of its own, a first commit (offset 10, two entries), and a second open one. */
  async function setUp() {
    const prefix = uniqueName('dropped');
    const group = `${prefix}.processor`;
    const validated = validateDefinition(
      dailyRevenueDefinition({ id: PIPELINE_ID, output: `${prefix}.out` }),
      { topicPrefix: prefix },
    );
    if (!validated.valid) throw new Error(JSON.stringify(validated.errors));
    const stored: StoredPipeline = {
      ...validated.definition,
      version: 1,
      reset_generation: 0,
      created_at: '2026-12-01T00:00:00.000Z',
      updated_at: '2026-12-01T00:00:00.000Z',
    };
    const pipeline = activePipeline(
      stored,
      planOfLinear(stored, ['dropped.events']),
      prefix,
      () => 1,
    );
    const { repartition, changelog, outputs } = pipeline.topics;
    const [output, late] = outputs as [string, string];
    await ensureTopics(admin, [
      { topic: repartition!, numPartitions: 1 },
      { topic: changelog!, numPartitions: 1, compacted: true },
      { topic: output, numPartitions: 1 },
      { topic: late, numPartitions: 1 },
    ]);
    const stage = pipeline.stateful[0]!.node.spec.createStage({
      counters: emptyCounters(),
      trackChanges: true,
      emitter: { result: () => undefined, late: () => undefined },
    });
    const input = (g: string, day: number): StageInput => ({
      group: g,
      route: undefined,
      value: 10,
      time: Date.UTC(2026, 10, day, 12),
      envelope: { event_type: 'order.placed', payload: {} },
    });
    const state = new StateManager(kafka, admin, changelog!, 0, logger, metrics(), group);
    const changes = () => ({
      topic: changelog!,
      messages: state.changes(pipeline.epoch, stage.drainChanges(), []),
    });
    const offset = (value: string) => ({
      groupId: group,
      topic: repartition!,
      partition: 0,
      offset: value,
      metadata: undefined,
    });

    // The task's own producer: a first transaction with two state entries, committed (offset
    // 10), and a second that commits the offset 20 with nothing else.
    const journal = new TransactionJournal();
    const own = new TaskProducer(kafka, transactionalId(group, repartition!, 0), logger, journal);
    await own.fence();
    for (const g of ['gbp', 'usd']) stage.add(input(g, 1));
    own.send(RecordCollector.of(changes()));
    own.commit(offset('10'), () => undefined);
    own.commit(offset('20'), () => undefined);
    await own.idle();
    expect(own.error).toBeUndefined();
    await own.close();

    // Three more entries in a transaction that stays open on the changelog.
    const standIn = kafka.producer({
      transactionalId: uniqueName('dropped.stand-in'),
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    standIns.push(standIn);
    await standIn.connect();
    const open = await standIn.transaction();
    for (const g of ['eur', 'chf', 'jpy']) stage.add(input(g, 2));
    const [written] = await open.sendBatch({ topicMessages: [changes()] });
    const start = written!.baseOffset!;
    const [end] = await fetchPartitionEnds(admin, changelog!);
    expect(end!.stable).toBe(start); // the restore could only read a prefix

    return {
      pipeline,
      prefix,
      group,
      journal,
      start,
      changelog: changelog!,
      finish: () => open.abort(),
    };
  }

  function task(
    pipeline: ActivePipeline,
    prefix: string,
    group: string,
    journal: TransactionJournal,
  ) {
    const pipelines = new PipelineSet();
    pipelines.set(pipeline);
    return new StatefulTask(
      pipeline.topics.repartition!,
      0,
      {
        kafka,
        admin,
        consumerGroup: group,
        topicPrefix: prefix,
        logger,
        metrics: metrics(),
        commitIntervals: { commitMs: 100, quietMs: 100 },
        pipelines,
        dlqTopic: `${prefix}.dlq`,
      },
      { acknowledged: '20', journal },
      pipeline.id,
    );
  }

  it('commits it when it is the transaction whose commit was acknowledged, and restores it whole', async () => {
    const { pipeline, prefix, group, journal, start, changelog, finish } = await setUp();
    // The journal's word: the acknowledged transaction (offset 20) wrote the changelog there.
    journal.lastAcknowledged!.firstOffsets.set(partitionKey(changelog, 0), start);

    const owner = task(pipeline, prefix, group, journal);
    expect(await owner.resume()).toBe('20');
    expect(owner.stateSize()).toBe(5);
    expect(await findOpenTransactions(admin, [{ topic: changelog, partitions: [0] }])).toEqual([]);
    await owner.close();
    await finish(); // its own coordinator's marker, later, changes nothing read
  }, 120_000);

  it('fails the task when an ABORT ended the acknowledged transaction there, its offset committed', async () => {
    // The later transaction wrote into the acknowledged one's open span and was aborted: that
    // ABORT ended the acknowledged one's records too, behind the group's offset 20.
    const { pipeline, prefix, group, journal, start, changelog, finish } = await setUp();
    await finish();
    journal.lastAcknowledged!.firstOffsets.set(partitionKey(changelog, 0), start);

    const owner = task(pipeline, prefix, group, journal);
    const refused = owner.resume();
    await expect(refused).rejects.toThrow(HangingCommitError);
    await expect(refused).rejects.toThrow(`on ${changelog}/0 an ABORT`);
    await owner.close();
  }, 120_000);

  it('aborts it when it is a later transaction whose commit was never asked for', async () => {
    const { pipeline, prefix, group, journal, start, changelog, finish } = await setUp();
    journal.begin();
    journal.unacknowledged!.firstOffsets.set(partitionKey(changelog, 0), start);

    const owner = task(pipeline, prefix, group, journal);
    expect(await owner.resume()).toBe('20');
    expect(owner.stateSize()).toBe(2);
    const [end] = await fetchPartitionEnds(admin, changelog);
    expect(end!.stable).toBe(end!.high);
    await owner.close();
    await finish();
  }, 120_000);
});

function metrics(): ProcessorMetrics {
  return new ProcessorMetrics({
    pipelines: () => [],
    lagByTopic: () => new Map(),
    assignedPartitions: () => 0,
  });
}
