// One processor replica (DESIGN §5): follows the definitions, consumes the source topics and the
// stateful pipelines' repartition topics in the consumer group, and runs one task per assigned
// partition. Replicas never talk to each other; the group and the transactions coordinate them.
import { Partitioners } from 'kafkajs';
import type { Admin, Consumer, EachBatchPayload, Kafka, Producer } from 'kafkajs';
import type { Logger } from 'pino';

import { internalTopics } from '@sluice/contracts';
import type { InternalTopics } from '@sluice/contracts';
import { createKafka, ensureTopics, fetchTopicOffsets, retryRetriable } from '@sluice/kafka';
import type { TopicSpec } from '@sluice/kafka';
import { resetCounters } from '@sluice/operators';

import type { ProcessorConfig } from './config/processor-config';
import { kafkaLogCreator } from './logging/kafka-log';
import { ProcessorMetrics } from './observability/processor-metrics';
import { activePipeline } from './pipelines/active-pipeline';
import { PipelineSet } from './pipelines/pipeline-set';
import { DefinitionRegistry } from './registry/definition-registry';
import type { RegistryChange } from './registry/definition-registry';
import { RegistryFollower } from './registry/registry-follower';
import { publishStats } from './stats/stats-reporter';
import { GlobalTables } from './tables/global-tables';
import type { CommittedOffset, PartitionTask, TaskContext } from './tasks/partition-task';
import { SourceTask } from './tasks/source-task';
import { StatefulTask } from './tasks/stateful-task';

type State = 'created' | 'starting' | 'running' | 'stopping' | 'stopped';

export class Processor {
  readonly metrics: ProcessorMetrics;
  private readonly kafka: Kafka;
  private readonly topics: InternalTopics;
  private readonly pipelines = new PipelineSet();
  private readonly tables: GlobalTables;
  private readonly registry: DefinitionRegistry;
  private readonly tasks = new Map<string, PartitionTask>();
  private readonly opening = new Map<string, Promise<PartitionTask>>();
  /** `<topic>/<partition>` of the current assignment: a task opened for any other is closed. */
  private assigned = new Set<string>();
  /** Consecutive failures per partition, for the back-off. */
  private readonly failures = new Map<string, number>();
  private readonly sourceTopics: Set<string>;
  private admin: Admin | undefined;
  private statsProducer: Producer | undefined;
  private follower: RegistryFollower | undefined;
  private consumer: Consumer | undefined;
  private subscribed: string[] = [];
  private upstreams: string[] = [];
  private internalPartitions = 1;
  private changes: Promise<void> = Promise.resolve();
  private inFlight = 0;
  private ticking = false;
  private timers: NodeJS.Timeout[] = [];
  private state: State = 'created';

  constructor(
    private readonly config: ProcessorConfig,
    private readonly logger: Logger,
  ) {
    this.kafka = createKafka({
      clientId: `sluice-processor.${config.processorId}`,
      brokers: config.kafkaBrokers,
      logCreator: kafkaLogCreator(logger),
    });
    this.topics = internalTopics(config.topicPrefix);
    this.sourceTopics = new Set(config.sourceTopics);
    this.tables = new GlobalTables(this.kafka, logger);
    this.registry = new DefinitionRegistry({ lookups: this.tables });
    this.metrics = new ProcessorMetrics({
      pipelines: () => this.pipelines.list(),
      lagByTopic: () => {
        const lag = new Map<string, number>();
        for (const task of this.tasks.values())
          lag.set(task.topic, (lag.get(task.topic) ?? 0) + task.lag);
        return lag;
      },
      assignedPartitions: () => this.tasks.size,
    });
  }

  health(): { ready: boolean; state: State; partitions: number; pipelines: number } {
    return {
      ready: this.state === 'running' && this.consumer !== undefined,
      state: this.state,
      partitions: this.tasks.size,
      pipelines: this.pipelines.list().length,
    };
  }

  async start(): Promise<void> {
    this.state = 'starting';
    const admin = this.kafka.admin();
    this.admin = admin;
    await this.untilConnected(admin);
    await ensureTopics(admin, [
      ...this.config.sourceTopics.map((topic) => ({
        topic,
        numPartitions: this.config.sourcePartitions,
      })),
      { topic: this.topics.pipelines, numPartitions: 1, compacted: true },
      { topic: this.topics.stats, numPartitions: 1, compacted: true },
      { topic: this.topics.dlq, numPartitions: 3 },
    ]);
    const metadata = await retryRetriable(() =>
      admin.fetchTopicMetadata({ topics: this.config.sourceTopics }),
    );
    this.upstreams = metadata.topics.flatMap(({ name, partitions }) =>
      partitions.map(({ partitionId }) => `${name}/${partitionId}`),
    );
    this.internalPartitions = Math.max(...metadata.topics.map((t) => t.partitions.length));

    // Stats records are overwritten every few seconds: a plain producer is enough.
    this.statsProducer = this.kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await this.statsProducer.connect();

    this.follower = new RegistryFollower(this.kafka, this.topics.pipelines, this.registry, (c) =>
      this.enqueue(c),
    );
    await this.follower.start();
    await this.changes;
    // Subscribing to a repartition topic another replica has just created can meet
    // UNKNOWN_TOPIC_OR_PARTITION until the metadata has caught up.
    await retryRetriable(() => this.startConsumer());
    this.state = 'running';
    // A definition applied while the consumer was starting found no consumer to resubscribe
    // (kafkajs' group leader assigns only the topics it subscribed to: a pipeline created then
    // would never be consumed by the group); it is checked now, in turn with the changes.
    this.changes = this.changes.then(() =>
      this.resubscribeIfNeeded().catch((error: Error) =>
        this.logger.error({ err: error }, 'rejoining the group with new topics failed'),
      ),
    );
    this.timers.push(
      setInterval(
        () => void this.tick(),
        Math.max(10, Math.floor(this.config.commitIntervalMs / 2)),
      ),
      setInterval(() => void this.reportStats(), this.config.statsIntervalMs),
    );
    this.logger.info(
      {
        sources: this.config.sourceTopics,
        upstream_partitions: this.upstreams.length,
        pipelines: this.pipelines.list().map((p) => p.id),
        consumer_group: this.config.consumerGroup,
      },
      'processor running',
    );
  }

  /**
   * A replica started while the broker is away (restarted, or not up yet) waits for it, as a
   * Kafka Streams application does, instead of exiting: kafkajs gives up after a few seconds.
   */
  private async untilConnected(admin: Admin): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await admin.connect();
        return;
      } catch (error) {
        if (this.state !== 'starting') throw error;
        const retryInMs = Math.min(10_000, 500 * 2 ** (attempt - 1));
        this.logger.warn(
          { err: error, attempt, retry_in_ms: retryInMs },
          'Kafka is not reachable; waiting for it',
        );
        await new Promise((resolve) => setTimeout(resolve, retryInMs));
      }
    }
  }

  /** SIGTERM: finish the batch in hand, commit every task, leave the group. */
  async stop(): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.state = 'stopping';
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    await this.changes.catch(() => undefined);
    await this.stopConsumer();
    await this.reportStats().catch(() => undefined);
    await this.follower?.stop().catch(() => undefined);
    await this.tables.stop().catch(() => undefined);
    await this.statsProducer?.disconnect().catch(() => undefined);
    await this.admin?.disconnect().catch(() => undefined);
    this.state = 'stopped';
    this.logger.info('processor stopped');
  }

  // ---- definitions -------------------------------------------------------------------------

  /**
   * Changes apply one at a time, in log order, each until it succeeds: a replica that skipped
   * one would run without a pipeline its peers run (and lose that pipeline's share of events).
   */
  private enqueue(change: RegistryChange): void {
    this.changes = this.changes.then(async () => {
      for (let attempt = 1; this.state !== 'stopping' && this.state !== 'stopped'; attempt++) {
        try {
          await this.apply(change);
          return;
        } catch (error) {
          const retryInMs = Math.min(10_000, 250 * 2 ** (attempt - 1));
          this.logger.error(
            { err: error, pipeline_id: change.id, attempt, retry_in_ms: retryInMs },
            'applying a definition failed; retrying',
          );
          await new Promise((resolve) => setTimeout(resolve, retryInMs));
        }
      }
    });
  }

  private async apply(change: RegistryChange): Promise<void> {
    if (change.kind === 'ignored') {
      this.logger.warn({ pipeline_id: change.id, reason: change.reason }, 'definition ignored');
      return;
    }
    if (change.kind === 'deleted') {
      this.pipelines.delete(change.id);
      this.logger.info({ pipeline_id: change.id }, 'pipeline deleted');
    } else {
      const { stored, compiled } = change.pipeline;
      for (const operator of stored.operators) {
        if (operator.type !== 'enrich') continue;
        // A table nobody has written yet is an empty table, not a failed pipeline: enrich
        // misses until its rows arrive (a Kafka Streams GlobalKTable would refuse to start).
        await ensureTopics(this.admin!, [
          { topic: operator.source, numPartitions: this.internalPartitions, compacted: true },
        ]);
        await this.tables.load(operator.source);
      }
      const next = activePipeline(
        stored,
        compiled,
        this.config.topicPrefix,
        this.internalPartitions,
        this.pipelines.get(change.id)?.counters,
      );
      if (change.kind === 'reset') resetCounters(next.counters);
      await this.ensurePipelineTopics(next.topics);
      this.pipelines.set(next);
      this.logger.info(
        { pipeline_id: change.id, change: change.kind, version: stored.version, epoch: next.epoch },
        `pipeline ${change.kind}`,
      );
    }
    await this.resubscribeIfNeeded();
  }

  private async ensurePipelineTopics(topics: ReturnType<typeof activePipeline>['topics']) {
    const specs: TopicSpec[] = [
      { topic: topics.output, numPartitions: this.internalPartitions },
      { topic: topics.late, numPartitions: this.internalPartitions },
    ];
    if (topics.repartition && topics.changelog) {
      specs.push(
        { topic: topics.repartition, numPartitions: this.internalPartitions },
        { topic: topics.changelog, numPartitions: this.internalPartitions, compacted: true },
      );
    }
    await ensureTopics(this.admin!, specs);
  }

  private wantedTopics(): string[] {
    return [...this.config.sourceTopics, ...this.pipelines.repartitionTopics()];
  }

  /**
   * kafkajs cannot change a running consumer's subscription: a new consumer takes over, retried
   * until one runs (a replica left without a consumer would process nothing).
   */
  private async resubscribeIfNeeded(): Promise<void> {
    if (this.state !== 'running') return;
    const wanted = this.wantedTopics();
    if (this.consumer && wanted.join(',') === this.subscribed.join(',')) return;
    this.logger.info({ topics: wanted }, 'topics changed; rejoining the group');
    await this.restartConsumer();
  }

  // ---- consumption -------------------------------------------------------------------------

  private async startConsumer(): Promise<void> {
    const consumer = this.kafka.consumer({
      groupId: this.config.consumerGroup,
      readUncommitted: false,
      maxWaitTimeInMs: 100,
      sessionTimeout: this.config.sessionTimeoutMs,
      rebalanceTimeout: 60_000,
      heartbeatInterval: Math.max(500, Math.floor(this.config.sessionTimeoutMs / 10)),
      maxBytesPerPartition: 1024 * 1024,
      maxBytes: 8 * 1024 * 1024,
      retry: { initialRetryTime: 100, retries: 10 },
    });
    const { GROUP_JOIN, CRASH } = consumer.events;
    consumer.on(GROUP_JOIN, ({ payload }) => this.onAssignment(payload.memberAssignment));
    consumer.on(CRASH, ({ payload }) => {
      this.logger.error({ err: payload.error, restart: payload.restart }, 'consumer crashed');
      if (!payload.restart && this.state === 'running' && this.consumer === consumer) {
        this.changes = this.changes.then(() => this.restartConsumer());
      }
    });
    const topics = this.wantedTopics();
    try {
      await consumer.connect();
      await consumer.subscribe({ topics, fromBeginning: true });
      this.consumer = consumer;
      this.subscribed = topics;
      await consumer.run({
        autoCommit: false,
        partitionsConsumedConcurrently: 4,
        eachBatch: (payload) => this.onBatch(consumer, payload),
      });
    } catch (error) {
      if (this.consumer === consumer) this.consumer = undefined;
      await consumer.disconnect().catch(() => undefined);
      throw error;
    }
  }

  /**
   * A new consumer, attempted until one starts: after kafkajs gave up (a broker away for longer
   * than its retries last), so that the replica rides out any outage instead of exiting, and
   * when the topics to read changed.
   */
  private async restartConsumer(): Promise<void> {
    for (let attempt = 1; this.state === 'running'; attempt++) {
      try {
        await this.stopConsumer();
        await new Promise((resolve) => setTimeout(resolve, Math.min(10_000, 500 * attempt)));
        if (this.state === 'running') await this.startConsumer();
        return;
      } catch (error) {
        this.logger.error({ err: error, attempt }, 'restarting the consumer failed; retrying');
      }
    }
  }

  /** Stops reading, lets the batches in hand finish, commits every task, then leaves the group. */
  private async stopConsumer(): Promise<void> {
    const consumer = this.consumer;
    if (!consumer) return;
    this.consumer = undefined;
    try {
      consumer.pause(this.subscribed.map((topic) => ({ topic })));
    } catch {
      // A crashed consumer has no group left to pause: nothing more will come from it.
    }
    while (this.inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await Promise.all(
      [...this.tasks.values()].map((task) =>
        task.commitNow().catch((error: Error) => {
          this.logger.warn(
            { err: error, topic: task.topic, partition: task.partition },
            'commit on hand-over failed',
          );
        }),
      ),
    );
    await consumer.disconnect().catch(() => undefined);
    for (const task of this.tasks.values()) task.needsSync = true;
    if (this.state === 'stopping') await this.closeTasks([...this.tasks.keys()]);
  }

  private onAssignment(assignment: Record<string, number[]>): void {
    const assigned = new Set(
      Object.entries(assignment).flatMap(([topic, partitions]) =>
        partitions.map((partition) => `${topic}/${partition}`),
      ),
    );
    this.assigned = assigned;
    const revoked = [...this.tasks.keys()].filter((key) => !assigned.has(key));
    for (const task of this.tasks.values()) task.needsSync = true;
    this.logger.info({ assigned: assigned.size, revoked: revoked.length }, 'partitions assigned');
    void this.closeTasks(revoked, { commit: true });
    // Open every assigned partition now, not at its first batch: state is restored before
    // records arrive, and a partition that gets no records still has its windows (idle flush).
    for (const [topic, partitions] of Object.entries(assignment)) {
      if (!this.sourceTopics.has(topic) && !this.pipelines.forRepartitionTopic(topic)) continue;
      for (const partition of partitions) {
        this.taskFor(topic, partition).catch((error: Error) =>
          this.logger.warn(
            { err: error, topic, partition },
            'opening a partition failed; retried at its next batch',
          ),
        );
      }
    }
  }

  private async closeTasks(keys: string[], options: { commit?: boolean } = {}): Promise<void> {
    await Promise.all(
      keys.map(async (key) => {
        const task = this.tasks.get(key);
        if (!task) return;
        this.tasks.delete(key);
        // Committing a revoked partition is safe: if its new owner already started, this
        // producer is fenced and the commit fails; otherwise the new owner sees it.
        if (options.commit) await task.commitNow().catch(() => undefined);
        await task.close();
      }),
    );
  }

  private async onBatch(consumer: Consumer, payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    if (this.state !== 'running' || this.consumer !== consumer) return;
    this.inFlight += 1;
    const key = `${batch.topic}/${batch.partition}`;
    try {
      const task = await this.taskFor(batch.topic, batch.partition);
      const fetchedOffset = (batch as unknown as { fetchedOffset: string }).fetchedOffset;
      if (task.redelivers(fetchedOffset)) {
        this.logger.warn(
          { topic: batch.topic, partition: batch.partition, fetched_offset: fetchedOffset },
          'the consumer went back without a rebalance; syncing with the committed offset',
        );
        task.needsSync = true;
      }
      if (task.needsSync) {
        const seekTo = await task.sync(
          fetchedOffset,
          () => this.committed(batch.topic, batch.partition),
          () => this.earliest(batch.topic, batch.partition),
        );
        if (seekTo !== undefined) {
          consumer.seek({ topic: batch.topic, partition: batch.partition, offset: seekTo });
          return;
        }
      }
      await task.processBatch(batch);
      this.failures.delete(key);
      this.metrics.recordsConsumed.inc(
        { kind: this.sourceTopics.has(batch.topic) ? 'source' : 'repartition' },
        batch.messages.length,
      );
      await payload.heartbeat();
    } catch (error) {
      // The task's state can no longer be trusted: the next batch gets a new task, which starts
      // from what is committed (and seeks there). A failure that repeats (a record that breaks
      // the code, a broker refusing) backs off exponentially instead of spinning.
      const attempt = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, attempt);
      const delayMs = Math.min(60_000, 250 * 2 ** (attempt - 1));
      this.logger.error(
        {
          err: error,
          topic: batch.topic,
          partition: batch.partition,
          attempt,
          retry_in_ms: delayMs,
        },
        'batch failed; the partition restarts from its last commit',
      );
      await this.closeTasks([key]);
      await this.rewind(consumer, batch.topic, batch.partition);
      const paused = [{ topic: batch.topic, partitions: [batch.partition] }];
      consumer.pause(paused);
      setTimeout(() => {
        if (this.consumer === consumer) consumer.resume(paused);
      }, delayMs).unref();
    } finally {
      this.inFlight -= 1;
    }
  }

  private async taskFor(topic: string, partition: number): Promise<PartitionTask> {
    const key = `${topic}/${partition}`;
    const known = this.tasks.get(key);
    if (known && !known.broken) return known;
    if (known) await this.closeTasks([key]);
    let opening = this.opening.get(key);
    if (!opening) {
      opening = this.openTask(topic, partition).finally(() => this.opening.delete(key));
      this.opening.set(key, opening);
    }
    const task = await opening;
    if (!this.assigned.has(key)) {
      // Revoked while it was opening: keeping it would leave a second owner beside the new one,
      // whose producer it just fenced (and whose ticks would go on writing).
      await task.close();
      throw new Error(`${key} was revoked while its task was opening`);
    }
    this.tasks.set(key, task);
    return task;
  }

  private async openTask(topic: string, partition: number): Promise<PartitionTask> {
    const context: TaskContext = {
      kafka: this.kafka,
      consumerGroup: this.config.consumerGroup,
      logger: this.logger,
      metrics: this.metrics,
      commitIntervalMs: this.config.commitIntervalMs,
    };
    let task: PartitionTask;
    if (this.sourceTopics.has(topic)) {
      task = new SourceTask(topic, partition, {
        ...context,
        pipelines: this.pipelines,
        dlqTopic: this.topics.dlq,
      });
    } else {
      const pipeline = this.pipelines.forRepartitionTopic(topic);
      if (!pipeline) throw new Error(`no pipeline reads ${topic} any more`);
      task = new StatefulTask(
        topic,
        partition,
        { ...context, pipelines: this.pipelines, upstreams: this.upstreams },
        pipeline.id,
      );
    }
    try {
      await task.open();
    } catch (error) {
      await task.close();
      throw error;
    }
    task.needsSync = true;
    return task;
  }

  private async committed(topic: string, partition: number): Promise<CommittedOffset | undefined> {
    const [offsets] = await this.admin!.fetchOffsets({
      groupId: this.config.consumerGroup,
      topics: [topic],
    });
    const committed = offsets?.partitions.find((p) => p.partition === partition);
    if (committed === undefined || committed.offset === '-1') return undefined;
    return { offset: committed.offset, metadata: committed.metadata ?? undefined };
  }

  /**
   * After a task failed: the consumer reads its partition again from what was committed (or
   * from the start), so that the work lost with the task is redone even if no new record ever
   * arrives there. The next batch opens a new task, whose sync has the last word on the offset.
   */
  private async rewind(consumer: Consumer, topic: string, partition: number): Promise<void> {
    try {
      const committed = await this.committed(topic, partition);
      const offset = committed?.offset ?? (await this.earliest(topic, partition));
      if (this.consumer === consumer) consumer.seek({ topic, partition, offset });
    } catch (error) {
      this.logger.warn(
        { err: error, topic, partition },
        'rewinding the partition failed; it resumes with its next record',
      );
    }
  }

  /** A partition's first offset: where the group starts reading it (`fromBeginning`). */
  private async earliest(topic: string, partition: number): Promise<string> {
    const offsets = await fetchTopicOffsets(this.admin!, topic);
    const low = offsets.find((p) => p.partition === partition)?.low;
    if (low === undefined) throw new Error(`${topic} has no partition ${partition}`);
    return low;
  }

  // ---- clocks ------------------------------------------------------------------------------

  private async tick(): Promise<void> {
    if (this.ticking || this.state !== 'running') return;
    this.ticking = true;
    const now = Date.now();
    try {
      await Promise.all(
        [...this.tasks.entries()].map(([key, task]) =>
          task.tick(now).catch(async (error: Error) => {
            this.logger.error(
              { err: error, task: key },
              'tick failed; the partition restarts from its last commit',
            );
            await this.closeTasks([key]);
            if (this.consumer) await this.rewind(this.consumer, task.topic, task.partition);
          }),
        ),
      );
    } finally {
      this.ticking = false;
    }
  }

  private async reportStats(): Promise<void> {
    if (!this.statsProducer) return;
    let lag = 0;
    for (const task of this.tasks.values()) if (this.sourceTopics.has(task.topic)) lag += task.lag;
    await publishStats(
      this.statsProducer,
      this.topics.stats,
      this.config.processorId,
      this.pipelines.list(),
      lag,
    ).catch((error: Error) => this.logger.warn({ err: error }, 'publishing stats failed'));
  }
}
