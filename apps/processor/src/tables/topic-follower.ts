import { fetchTopicOffsets, namingDenied, onTopics, scratchGroupId } from '@sluice/kafka';
import type { AskedFor } from '@sluice/kafka';
import type { Consumer, Kafka } from 'kafkajs';

export type FollowedRecord = (key: string, value: string | null) => void;

/**
 * Follows a compacted topic from its beginning, outside the processors' consumer group (every
 * replica needs all of it), handing each keyed record to `onRecord` in log order. `start`
 * resolves once everything the topic held when it was called has been handed over; later
 * records keep arriving live until `stop`.
 */
export class TopicFollower {
  private consumer: Consumer | undefined;
  private readonly groupId: string;

  /** `groupOwner`: the replica's CONSUMER_GROUP, which the follower's scratch group is under. */
  constructor(
    private readonly kafka: Kafka,
    readonly topic: string,
    private readonly onRecord: FollowedRecord,
    groupOwner: string,
  ) {
    this.groupId = scratchGroupId(groupOwner, 'follower');
  }

  /**
   * `timeoutMs`: how long to wait for the catch-up. Past it, without `onSlow`, start fails (a
   * lookup table's load is then retried as a failure of its pipeline); with `onSlow`, it is told
   * how long it has waited and how many partitions are left, every `timeoutMs`, and the wait
   * goes on (the definitions topic at start-up: a replica must not die while brokers move).
   */
  async start(
    timeoutMs = 60_000,
    onSlow?: (waitedMs: number, partitionsLeft: number) => void,
  ): Promise<void> {
    try {
      await this.follow(timeoutMs, onSlow);
    } catch (error) {
      throw namingDenied(error, this.asked());
    }
  }

  /** What following needs granted, named when Kafka refuses it. */
  private asked(): AskedFor {
    return {
      group: `Read and Delete on group ${this.groupId} (a prefixed grant on its owner's name)`,
      topic: onTopics('Read and Describe', [this.topic]),
    };
  }

  private async follow(
    timeoutMs: number,
    onSlow: ((waitedMs: number, partitionsLeft: number) => void) | undefined,
  ): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    let ends: Map<number, bigint>;
    try {
      ends = new Map(
        (await fetchTopicOffsets(admin, this.topic))
          .filter((p) => BigInt(p.high) > BigInt(p.low))
          .map((p) => [p.partition, BigInt(p.high)]),
      );
    } finally {
      await admin.disconnect();
    }
    let caughtUp: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (caughtUp = resolve));
    if (ends.size === 0) caughtUp();

    const consumer = this.kafka.consumer({ groupId: this.groupId, maxWaitTimeInMs: 200 });
    this.consumer = consumer;
    // Batches of transaction markers alone never reach eachBatch; this event still reports them.
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      const end = ends.get(payload.partition);
      if (end !== undefined && BigInt(payload.lastOffset) + 1n >= end) {
        ends.delete(payload.partition);
        if (ends.size === 0) caughtUp();
      }
    });
    // kafkajs joins inside run: a refused join is a crash before run returns, not a throw, and
    // one that kafkajs gives up on later would leave the follower silent: both fail the start.
    let gaveUp: unknown;
    const crashed = new Promise<never>((_, reject) =>
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        if (payload.restart) return;
        gaveUp = payload.error;
        reject(payload.error);
      }),
    );
    crashed.catch(() => undefined);
    await consumer.connect();
    await consumer.subscribe({ topic: this.topic, fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch, heartbeat }) => {
        for (const message of batch.messages) {
          const key = message.key?.toString('utf8');
          if (key) this.onRecord(key, message.value === null ? null : message.value.toString());
        }
        await heartbeat();
      },
    });
    // An empty topic is caught up at once: the race below would not see a refused join.
    if (gaveUp !== undefined) throw gaveUp;
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      const check = () => {
        if (!onSlow) {
          reject(new Error(`reading ${this.topic} took longer than ${timeoutMs} ms`));
          return;
        }
        onSlow(Date.now() - started, ends.size);
        timer = setTimeout(check, timeoutMs);
      };
      timer = setTimeout(check, timeoutMs);
    });
    await Promise.race([ready, timedOut, crashed]).finally(() => clearTimeout(timer));
  }

  async stop(): Promise<void> {
    if (!this.consumer) return;
    await this.consumer.disconnect();
    this.consumer = undefined;
    const admin = this.kafka.admin();
    await admin
      .connect()
      .then(() => admin.deleteGroups([this.groupId]))
      .catch(() => undefined)
      .finally(() => admin.disconnect());
  }
}
