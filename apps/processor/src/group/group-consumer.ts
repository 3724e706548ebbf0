// The one owner of the replica's kafkajs consumer: it joins the group with the topics it is
// given, rejoins when they change (kafkajs cannot change a running consumer's subscription),
// replaces a consumer kafkajs gave up on, and pauses, resumes and seeks partitions for the task
// manager. Everything it hears from the group goes to one handler.
import { namingDenied, onTopics } from '@sluice/kafka';
import type { AskedFor } from '@sluice/kafka';
import type { Consumer, ConsumerGroupMetadata, EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from 'pino';

import { RECONNECT_BACKOFF, untilSucceeds } from '../support/backoff';
import { settledWithin } from '../support/settled-within';

export interface TopicPartition {
  topic: string;
  partition: number;
}

export interface GroupHandler {
  /**
   * The group gave this replica these partitions (and only these), as `member`: the generation
   * and member id a transactional offset commit names, so that the group coordinator refuses
   * it once a later generation has begun (KIP-447).
   */
  onAssignment(assigned: TopicPartition[], member: ConsumerGroupMetadata): void;
  /**
   * A rebalance is starting; the consumer joins again once this resolves, with no batch in
   * hand: the last moment a commit under the ending generation is accepted.
   */
  beforeRejoin(): Promise<void>;
  /**
   * kafkajs begins a fetch: the consumer reads as the member it last joined as (after a
   * rebalance began and no assignment followed, its join failed and it reads on as before).
   */
  onFetching(): void;
  /** `isStale()`: a seek for the partition is pending, so the batch is from before it. */
  onBatch(payload: EachBatchPayload): Promise<void>;
  /** The consumer is about to leave the group (stop, restart): finish and commit everything. */
  beforeLeave(): Promise<void>;
}

export interface GroupConsumerOptions {
  groupId: string;
  sessionTimeoutMs: number;
  partitionsConsumedConcurrently: number;
}

export class GroupConsumer {
  private consumer: Consumer | undefined;
  private topics: string[] = [];
  private subscribed: string[] = [];
  private running = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** Restarts and rejoins, one at a time, in order. */
  private changes: Promise<void> = Promise.resolve();

  constructor(
    private readonly kafka: Kafka,
    private readonly options: GroupConsumerOptions,
    private readonly handler: GroupHandler,
    private readonly logger: Logger,
  ) {}

  get joined(): boolean {
    return this.consumer !== undefined;
  }

  /** Joins with `topics`, retried (a topic another replica has just created may be unknown). */
  async start(topics: string[]): Promise<void> {
    this.running = true;
    this.topics = [...topics].sort();
    await this.enqueue(() => this.restart('starting'));
  }

  /** Rejoins with `topics` if they differ from the subscription (before `start`: records them). */
  setTopics(topics: string[]): Promise<void> {
    this.topics = [...topics].sort();
    if (!this.running) return Promise.resolve();
    return this.enqueue(async () => {
      if (this.consumer && this.topics.join(',') === this.subscribed.join(',')) return;
      this.logger.info({ topics: this.topics }, 'topics changed; rejoining the group');
      await this.restart('new topics');
    });
  }

  // kafkajs throws from pause, resume and seek while its consumer has no group (after a crash,
  // while it restarts itself): then there is nothing to pause or seek, and the next consumer
  // starts from the group's offsets, which the tasks check when they resume.
  pause(partition: TopicPartition): void {
    this.withConsumer('pause', (consumer) =>
      consumer.pause([{ topic: partition.topic, partitions: [partition.partition] }]),
    );
  }

  resume(partition: TopicPartition): void {
    this.withConsumer('resume', (consumer) =>
      consumer.resume([{ topic: partition.topic, partitions: [partition.partition] }]),
    );
  }

  /** The next fetch of `partition` starts at `offset` (batches fetched before are stale). */
  seek(partition: TopicPartition, offset: string): void {
    this.withConsumer('seek', (consumer) =>
      consumer.seek({ topic: partition.topic, partition: partition.partition, offset }),
    );
  }

  private withConsumer(what: string, act: (consumer: Consumer) => void): void {
    const consumer = this.consumer;
    if (!consumer) return;
    try {
      act(consumer);
    } catch (error) {
      this.logger.debug({ err: error, what }, 'the consumer has no group right now');
    }
  }

  /** Stops reading, lets the batches in hand finish, lets the handler commit, leaves. */
  async stop(): Promise<void> {
    this.running = false;
    await this.changes.catch(() => undefined);
    await this.leave();
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    const next = this.changes.then(work);
    this.changes = next.catch((error: Error) =>
      this.logger.error({ err: error }, 'rejoining the group failed'),
    );
    return next;
  }

  /** A new consumer, attempted until one runs (a replica without one would process nothing). */
  private async restart(reason: string): Promise<void> {
    await untilSucceeds(
      async () => {
        await this.leave();
        await this.join();
      },
      {
        backoff: RECONNECT_BACKOFF,
        stopped: () => !this.running,
        onError: (error, attempt, retryInMs) =>
          this.logger.warn(
            { err: error, reason, attempt, retry_in_ms: retryInMs },
            'joining the group failed; retrying',
          ),
      },
    );
  }

  private async join(): Promise<void> {
    const consumer = this.kafka.consumer({
      groupId: this.options.groupId,
      readUncommitted: false,
      maxWaitTimeInMs: 100,
      sessionTimeout: this.options.sessionTimeoutMs,
      rebalanceTimeout: 60_000,
      heartbeatInterval: Math.max(500, Math.floor(this.options.sessionTimeoutMs / 10)),
      maxBytesPerPartition: 1024 * 1024,
      // The broker fills a response in the order the request lists partitions, which kafkajs
      // shuffles, until this total: below a full MiB for every partition, each fetch serves a
      // random subset and the partitions drift apart. In the join bench (18 partitions), at
      // 8 MiB the interval join's watermark (its slowest source partition) stayed 24 to 86
      // hours of event time behind the newest record it had, buffering all of that; at 32 MiB,
      // 5 to 19 hours (README, Joins, session 33; Known issues).
      maxBytes: 32 * 1024 * 1024,
      retry: { initialRetryTime: 100, retries: 10 },
    });
    const { GROUP_JOIN, CRASH, FETCH_START } = consumer.events;
    consumer.on(FETCH_START, () => {
      if (this.consumer === consumer) this.handler.onFetching();
    });
    consumer.on(GROUP_JOIN, ({ payload }) => {
      if (this.consumer !== consumer) return;
      this.handler.onAssignment(
        Object.entries(payload.memberAssignment).flatMap(([topic, partitions]) =>
          partitions.map((partition) => ({ topic, partition })),
        ),
        { generationId: payload.generationId, memberId: payload.memberId },
      );
    });
    // kafkajs joins inside run: a refused join is a crash before run returns, not a throw.
    let joining = true;
    let refusedJoin: unknown;
    consumer.on(CRASH, ({ payload }) => {
      if (joining && !payload.restart) {
        refusedJoin = payload.error;
        return;
      }
      this.logger.error(
        { err: namingDenied(payload.error, this.asked()), restart: payload.restart },
        'consumer crashed',
      );
      // kafkajs restarts it itself when it can; when it gave up, a new consumer takes over.
      if (!payload.restart && this.running && this.consumer === consumer)
        void this.enqueue(() => this.restart('consumer crashed'));
    });
    const topics = this.topics;
    try {
      await consumer.connect();
      await consumer.subscribe({ topics, fromBeginning: true });
      this.consumer = consumer;
      this.subscribed = topics;
      await consumer.run({
        autoCommit: false,
        partitionsConsumedConcurrently: this.options.partitionsConsumedConcurrently,
        eachBatch: (payload) => this.onBatch(consumer, payload),
        beforeRejoin: () => this.beforeRejoin(consumer),
      });
      joining = false;
      // Thrown, so that the restart backs off before the next attempt.
      if (refusedJoin !== undefined) throw refusedJoin;
    } catch (error) {
      if (this.consumer === consumer) this.consumer = undefined;
      await consumer.disconnect().catch(() => undefined);
      throw namingDenied(error, this.asked());
    }
  }

  /** What the group's consumer needs granted, named when Kafka refuses it. */
  private asked(): AskedFor {
    return {
      group: `Read on group ${this.options.groupId}`,
      topic: onTopics('Read and Describe', this.topics),
    };
  }

  private async onBatch(consumer: Consumer, payload: EachBatchPayload): Promise<void> {
    if (!this.running || this.consumer !== consumer) return;
    const handled = this.handler.onBatch(payload);
    this.inFlight.add(handled);
    try {
      await handled;
    } finally {
      this.inFlight.delete(handled);
    }
  }

  /**
   * Awaited by kafkajs (patched) before it rejoins. kafkajs has stopped its fetchers by then,
   * each once its batches ended; waiting for the batches in hand all the same keeps the
   * handler's commit after the last of them should that ever change.
   *
   * kafkajs sends no heartbeat meanwhile, and the coordinator drops a member that neither
   * heartbeats nor rejoins within its session timeout: so the member rejoins after a third of
   * it even if the commits have not all been answered (the broker away, say). That decides
   * only when to stop waiting: a commit answered after the rebalance is refused for its ended
   * generation, its transaction aborts and its task is opened again.
   */
  private async beforeRejoin(consumer: Consumer): Promise<void> {
    if (this.consumer !== consumer) return;
    const patience = Math.floor(this.options.sessionTimeoutMs / 3);
    const committed = (async () => {
      await Promise.allSettled([...this.inFlight]);
      await this.handler.beforeRejoin();
    })().catch((error: unknown) =>
      this.logger.error({ err: error }, 'committing before the rebalance failed'),
    );
    if (!(await settledWithin(committed, patience)))
      this.logger.warn(
        { waited_ms: patience },
        'commits before the rebalance not all answered; rejoining the group meanwhile',
      );
  }

  private async leave(): Promise<void> {
    const consumer = this.consumer;
    if (!consumer) return;
    this.consumer = undefined;
    try {
      consumer.pause(this.subscribed.map((topic) => ({ topic })));
    } catch {
      // A crashed consumer has no group left to pause: nothing more will come from it.
    }
    await Promise.allSettled([...this.inFlight]);
    await this.handler.beforeLeave();
    await consumer.disconnect().catch(() => undefined);
  }
}
