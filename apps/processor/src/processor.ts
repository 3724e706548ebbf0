// One processor replica (docs/design.md §5): follows the definitions, consumes the source topics and the
// stateful pipelines' repartition topics in the consumer group, and runs one task per assigned
// partition. Replicas never talk to each other; the group and the transactions coordinate them.
// This file only wires the parts together and orders their start and stop:
//   definitions (registry-follower → definition-applier → pipeline-set)
//   group-consumer → task-manager → tasks (source-task, stateful-task)
import { Partitioners } from 'kafkajs';
import type { Admin, Kafka, Producer } from 'kafkajs';
import type { Logger } from 'pino';

import { internalTopics, pipelineRun } from '@sluice/contracts';
import type { InternalTopics } from '@sluice/contracts';
import { createKafka, ensureTopics, isRetriable, isSecurityRefusal } from '@sluice/kafka';

import type { ProcessorConfig } from './config/processor-config';
import { GroupConsumer } from './group/group-consumer';
import { kafkaLogCreator } from './logging/kafka-log';
import { ProcessorMetrics } from './observability/processor-metrics';
import { DefinitionApplier } from './pipelines/definition-applier';
import { HeldPipelines } from './pipelines/held-pipelines';
import { PipelineSet } from './pipelines/pipeline-set';
import { DefinitionRegistry } from './registry/definition-registry';
import { RegistryFollower } from './registry/registry-follower';
import { publishStats } from './stats/stats-reporter';
import { RECONNECT_BACKOFF, untilSucceeds } from './support/backoff';
import { GlobalTables } from './tables/global-tables';
import { SourceTask } from './tasks/source-task';
import type { PartitionMemory } from './tasks/committed-offset';
import type { Task } from './tasks/task';
import { taskFactory } from './tasks/task-factory';
import { TaskManager } from './tasks/task-manager';

type State = 'created' | 'starting' | 'running' | 'stopping' | 'stopped';

export class Processor {
  readonly metrics: ProcessorMetrics;
  private readonly kafka: Kafka;
  private readonly admin: Admin;
  private readonly topics: InternalTopics;
  private readonly pipelines = new PipelineSet();
  private readonly tables: GlobalTables;
  private readonly registry: DefinitionRegistry;
  private readonly definitions: DefinitionApplier;
  private readonly held: HeldPipelines;
  private readonly consumer: GroupConsumer;
  private readonly tasks: TaskManager;
  private statsProducer: Producer | undefined;
  private follower: RegistryFollower | undefined;
  private timers: NodeJS.Timeout[] = [];
  private state: State = 'created';
  private readonly newTask: (
    topic: string,
    partition: number,
    memory: PartitionMemory,
  ) => Task | undefined;

  constructor(
    private readonly config: ProcessorConfig,
    private readonly logger: Logger,
  ) {
    this.kafka = createKafka({
      clientId: `sluice-processor.${config.processorId}`,
      brokers: config.kafkaBrokers,
      security: config.kafkaSecurity,
      logCreator: kafkaLogCreator(logger),
    });
    this.admin = this.kafka.admin();
    this.topics = internalTopics(config.topicPrefix);
    this.tables = new GlobalTables(this.kafka, logger, config.consumerGroup);
    this.registry = new DefinitionRegistry({
      rules: { topicPrefix: config.topicPrefix, sourceTopics: config.sourceTopics },
      processorGroup: config.consumerGroup,
    });
    this.tasks = new TaskManager({
      logger,
      consumer: {
        pause: (tp) => this.consumer.pause(tp),
        resume: (tp) => this.consumer.resume(tp),
        seek: (tp, offset) => this.consumer.seek(tp, offset),
      },
      createTask: (topic, partition, memory) => this.newTask(topic, partition, memory),
      onBatchDone: (topic, records) =>
        this.metrics.recordsConsumed.inc(
          { kind: this.isSourceTopic(topic) ? 'source' : 'repartition' },
          records,
        ),
      onTaskFailed: () =>
        void this.held
          .check()
          .catch((error: Error) =>
            this.logger.warn({ err: error }, 'could not check the pipelines’ topics'),
          ),
    });
    this.consumer = new GroupConsumer(
      this.kafka,
      {
        groupId: config.consumerGroup,
        sessionTimeoutMs: config.sessionTimeoutMs,
        partitionsConsumedConcurrently: 4,
      },
      this.tasks,
      logger,
    );
    this.definitions = new DefinitionApplier({
      admin: this.admin,
      pipelines: this.pipelines,
      tables: this.tables,
      logger,
      topicPrefix: config.topicPrefix,
      onApplied: () => this.consumer.setTopics(this.wantedTopics()),
    });
    this.held = new HeldPipelines({ admin: this.admin, pipelines: this.pipelines, logger });
    this.metrics = new ProcessorMetrics({
      pipelines: () => this.pipelines.list(),
      lagByTopic: () => {
        const lag = new Map<string, number>();
        for (const task of this.tasks.list())
          lag.set(task.topic, (lag.get(task.topic) ?? 0) + task.lag);
        return lag;
      },
      assignedPartitions: () => this.tasks.size,
    });
    this.newTask = taskFactory({
      context: {
        kafka: this.kafka,
        admin: this.admin,
        consumerGroup: config.consumerGroup,
        topicPrefix: config.topicPrefix,
        logger,
        metrics: this.metrics,
        commitIntervalMs: config.commitIntervalMs,
      },
      pipelines: this.pipelines,
      dlqTopic: this.topics.dlq,
      lookups: this.tables,
      isSourceTopic: (topic) => this.isSourceTopic(topic),
      knownRuns: (topic) =>
        new Set(
          this.registry
            .all()
            .filter(
              (p) => topic === undefined || p.plan.sources.some((s) => s.topics.includes(topic)),
            )
            .map((p) => pipelineRun(p.stored)),
        ),
    });
  }

  health(): { ready: boolean; state: State; partitions: number; pipelines: number } {
    return {
      ready: this.state === 'running' && this.consumer.joined,
      state: this.state,
      partitions: this.tasks.size,
      pipelines: this.pipelines.list().length,
    };
  }

  async start(): Promise<void> {
    this.state = 'starting';
    await this.untilConnected();
    await this.untilPrepared();
    await this.definitions.settled();
    // Definitions applied from here on rejoin the group with their topics (in turn with this).
    await this.consumer.start(this.wantedTopics());
    this.state = 'running';
    this.timers.push(
      setInterval(
        () => void this.tasks.tick(Date.now()),
        Math.max(10, Math.floor(this.config.commitIntervalMs / 2)),
      ),
      setInterval(() => void this.reportStats(), this.config.statsIntervalMs),
    );
    this.logger.info(
      {
        sources: this.sourceTopics(),
        pipelines: this.pipelines.list().map((p) => p.id),
        consumer_group: this.config.consumerGroup,
      },
      'processor running',
    );
  }

  /**
   * The steps before the consumer joins: topics, metadata, the stats producer, every definition
   * read. A broker killed meanwhile (a closed connection, a leader moving) makes them start over
   * after a back-off, instead of ending the replica; anything else still ends the start-up.
   */
  private async untilPrepared(): Promise<void> {
    let fatal: unknown;
    await untilSucceeds(
      async () => {
        try {
          await this.prepareOnce();
        } catch (error) {
          await this.follower?.stop().catch(() => undefined);
          await this.statsProducer?.disconnect().catch(() => undefined);
          this.follower = undefined;
          this.statsProducer = undefined;
          // A refused password or an untrusted certificate is not a broker being away.
          if (!isRetriable(error) || isSecurityRefusal(error)) {
            fatal = error;
            return;
          }
          throw error;
        }
      },
      {
        backoff: RECONNECT_BACKOFF,
        stopped: () => this.state !== 'starting',
        onError: (error, attempt, retryInMs) =>
          this.logger.warn(
            { err: error, attempt, retry_in_ms: retryInMs },
            'a start-up step failed while Kafka was unavailable; starting it over',
          ),
      },
    );
    if (fatal !== undefined) throw fatal;
  }

  private async prepareOnce(): Promise<void> {
    await ensureTopics(this.admin, [
      ...this.config.sourceTopics.map((topic) => ({
        topic,
        numPartitions: this.config.sourcePartitions,
      })),
      { topic: this.topics.pipelines, numPartitions: 1, compacted: true },
      { topic: this.topics.stats, numPartitions: 1, compacted: true },
      { topic: this.topics.dlq, numPartitions: 3 },
    ]);

    // Stats records are overwritten every few seconds: a plain producer is enough.
    this.statsProducer = this.kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await this.statsProducer.connect();

    this.follower = new RegistryFollower(
      this.kafka,
      this.topics.pipelines,
      this.registry,
      this.config.consumerGroup,
      (c) => this.definitions.enqueue(c),
    );
    await this.follower.start(10_000, (waitedMs, partitionsLeft) =>
      this.logger.warn(
        { topic: this.topics.pipelines, waited_ms: waitedMs, partitions_left: partitionsLeft },
        'still reading the definitions before processing starts',
      ),
    );
  }

  /** SIGTERM: finish the batches in hand, commit every task, leave the group. */
  async stop(): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.state = 'stopping';
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    // The consumer first: a definition change in progress may be rejoining the group with it.
    this.definitions.stop();
    this.held.stop();
    await this.consumer.stop();
    await this.definitions.settled().catch(() => undefined);
    await this.tasks.closeAll();
    await this.reportStats().catch(() => undefined);
    await this.follower?.stop().catch(() => undefined);
    await this.tables.stop().catch(() => undefined);
    await this.statsProducer?.disconnect().catch(() => undefined);
    await this.admin.disconnect().catch(() => undefined);
    this.state = 'stopped';
    this.logger.info('processor stopped');
  }

  /**
   * A replica started while the broker is away (restarted, or not up yet) waits for it, as a
   * Kafka Streams application does, instead of exiting: kafkajs gives up after a few seconds.
   * A refused password or an untrusted certificate is not waited out: the start-up fails.
   */
  private async untilConnected(): Promise<void> {
    let refused: unknown;
    await untilSucceeds(
      async () => {
        try {
          await this.admin.connect();
        } catch (error) {
          if (!isSecurityRefusal(error)) throw error;
          refused = error;
        }
      },
      {
        backoff: RECONNECT_BACKOFF,
        stopped: () => this.state !== 'starting',
        onError: (error, attempt, retryInMs) =>
          this.logger.warn(
            { err: error, attempt, retry_in_ms: retryInMs },
            'Kafka is not reachable; waiting for it',
          ),
      },
    );
    if (refused !== undefined) throw refused;
  }

  /** The group's default sources (a linear definition reads them) and every pipeline's own. */
  private sourceTopics(): string[] {
    return [...new Set([...this.config.sourceTopics, ...this.pipelines.sourceTopics()])];
  }

  private isSourceTopic(topic: string): boolean {
    return this.config.sourceTopics.includes(topic) || this.pipelines.readersOf(topic).length > 0;
  }

  private wantedTopics(): string[] {
    return [...this.sourceTopics(), ...this.pipelines.repartitionTopics()];
  }

  private async reportStats(): Promise<void> {
    if (!this.statsProducer) return;
    const sources = this.tasks.list().filter((task) => task instanceof SourceTask);
    await publishStats(
      this.statsProducer,
      this.topics.stats,
      this.config.processorId,
      this.pipelines.list(),
      [...this.definitions.failures(), ...this.held.failures()],
      // The lag of each pipeline in the source partitions this replica owns: a pipeline that
      // backfills or replays shows how far it has still to go.
      (pipeline) =>
        sources.reduce(
          (sum, task) =>
            pipeline.topics.sources.includes(task.topic) ? sum + task.lagOf(pipeline.id) : sum,
          0,
        ),
    ).catch((error: Error) => this.logger.warn({ err: error }, 'publishing stats failed'));
  }
}
