// One processor replica (docs/design.md §5): follows the definitions, consumes the source topics and the
// stateful pipelines' repartition topics in the consumer group, and runs one task per assigned
// partition. Replicas never talk to each other; the group and the transactions coordinate them.
// This file only wires the parts together and orders their start and stop:
//   definitions (registry-follower → definition-applier → pipeline-set)
//   group-consumer → task-manager → tasks (source-task, stateful-task)
import type { Admin, Kafka } from 'kafkajs';
import type { Logger } from 'pino';

import { internalTopics } from '@sluice/contracts';
import type { InternalTopics } from '@sluice/contracts';
import { createKafka } from '@sluice/kafka';

import type { ProcessorConfig } from './config/processor-config';
import { GroupConsumer } from './group/group-consumer';
import { kafkaLogCreator } from './logging/kafka-log';
import { ProcessorMetrics } from './observability/processor-metrics';
import { DefinitionApplier } from './pipelines/definition-applier';
import { HeldPipelines } from './pipelines/held-pipelines';
import { PipelineSet } from './pipelines/pipeline-set';
import { DefinitionRegistry } from './registry/definition-registry';
import { ReplicaStartup } from './startup/replica-startup';
import { StatsPublisher } from './stats/stats-publisher';
import { GlobalTables } from './tables/global-tables';
import { SourceTask } from './tasks/source-task';
import type { PartitionMemory } from './tasks/committed-offset';
import type { Task } from './tasks/task';
import { ReplicaTransactions } from './tasks/replica-transactions';
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
  private readonly stats: StatsPublisher;
  private readonly startup: ReplicaStartup;
  /** exactly_once_v2: the transactions the tasks write in. */
  private readonly replicaTransactions: ReplicaTransactions | undefined;
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
    this.stats = new StatsPublisher(
      this.kafka,
      this.topics.stats,
      config.processorId,
      {
        pipelines: () => this.pipelines.list(),
        failures: () => [...this.definitions.failures(), ...this.held.failures()],
        // A pipeline that backfills or replays shows how far it has still to go.
        lagOf: (pipeline) =>
          this.tasks
            .list()
            .filter((task) => task instanceof SourceTask)
            .filter((task) => pipeline.topics.sources.includes(task.topic))
            .reduce((sum, task) => sum + task.lagOf(pipeline.id), 0),
      },
      logger,
    );
    this.startup = new ReplicaStartup({
      kafka: this.kafka,
      admin: this.admin,
      config,
      topics: this.topics,
      stats: this.stats,
      registry: this.registry,
      definitions: this.definitions,
      logger,
    });
    this.replicaTransactions =
      config.processingGuarantee === 'exactly_once_v2'
        ? new ReplicaTransactions({
            kafka: this.kafka,
            admin: this.admin,
            group: config.consumerGroup,
            processorId: config.processorId,
            count: config.replicaTransactions,
            logger,
            // Kafka Streams' 10 s: how long a killed replica's open transaction holds the
            // partitions it wrote (their readers, and a task taking over), and twice the
            // longest a transaction here stays open.
            transactionTimeoutMs: Math.max(10_000, 2 * config.quietCommitIntervalMs),
            onCommitSeconds: (seconds) => this.metrics.commitSeconds.observe(seconds),
          })
        : undefined;
    this.newTask = taskFactory({
      context: {
        kafka: this.kafka,
        admin: this.admin,
        consumerGroup: config.consumerGroup,
        topicPrefix: config.topicPrefix,
        logger,
        metrics: this.metrics,
        commitIntervals: {
          commitMs: config.commitIntervalMs,
          quietMs: config.quietCommitIntervalMs,
        },
        replicaTransactions: this.replicaTransactions,
      },
      pipelines: this.pipelines,
      dlqTopic: this.topics.dlq,
      lookups: this.tables,
      isSourceTopic: (topic) => this.isSourceTopic(topic),
      knownRuns: (topic) => this.registry.runs(topic),
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
    await this.startup.run(() => this.state === 'starting');
    await this.definitions.settled();
    // Definitions applied from here on rejoin the group with their topics (in turn with this).
    await this.consumer.start(this.wantedTopics());
    this.state = 'running';
    this.timers.push(
      setInterval(
        () => void this.tasks.tick(Date.now()),
        Math.max(10, Math.floor(this.config.commitIntervalMs / 2)),
      ),
      setInterval(() => void this.stats.publish(), this.config.statsIntervalMs),
    );
    this.logger.info(
      {
        sources: this.sourceTopics(),
        pipelines: this.pipelines.list().map((p) => p.id),
        consumer_group: this.config.consumerGroup,
        processing_guarantee: this.config.processingGuarantee,
      },
      'processor running',
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
    await this.replicaTransactions?.close();
    await this.stats.publish();
    await this.startup.stop();
    await this.tables.stop().catch(() => undefined);
    await this.stats.disconnect();
    await this.admin.disconnect().catch(() => undefined);
    this.state = 'stopped';
    this.logger.info('processor stopped');
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
}
