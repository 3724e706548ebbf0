// The steps of a replica's start-up before its consumer joins the group: reach the broker,
// create the group's topics, connect the stats producer, and read every definition. A replica
// started while the broker is away waits for it, as a Kafka Streams application does, and a
// broker killed meanwhile makes the steps start over after a back-off; a refused password or an
// untrusted certificate, or any other error, ends the start-up.
import type { Admin, Kafka } from 'kafkajs';
import type { Logger } from 'pino';

import type { InternalTopics } from '@sluice/contracts';
import { ensureTopics, isRetriable, isSecurityRefusal } from '@sluice/kafka';

import type { ProcessorConfig } from '../config/processor-config';
import type { DefinitionApplier } from '../pipelines/definition-applier';
import type { DefinitionRegistry } from '../registry/definition-registry';
import { RegistryFollower } from '../registry/registry-follower';
import type { StatsPublisher } from '../stats/stats-publisher';
import { RECONNECT_BACKOFF, untilSucceeds } from '../support/backoff';

export interface ReplicaStartupParts {
  kafka: Kafka;
  admin: Admin;
  config: ProcessorConfig;
  topics: InternalTopics;
  stats: StatsPublisher;
  registry: DefinitionRegistry;
  definitions: DefinitionApplier;
  logger: Logger;
}

export class ReplicaStartup {
  /** Follows the definitions from start-up on, until the replica stops. */
  private follower: RegistryFollower | undefined;
  private stopped: () => boolean = () => false;

  constructor(private readonly parts: ReplicaStartupParts) {}

  /** Runs the steps; gives up (rejecting with Stopped) once `stopped()` is true. */
  async run(starting: () => boolean): Promise<void> {
    this.stopped = () => !starting();
    await this.untilConnected();
    await this.untilPrepared();
  }

  async stop(): Promise<void> {
    await this.follower?.stop().catch(() => undefined);
  }

  /**
   * The steps before the consumer joins: topics, metadata, the stats producer, every definition
   * read. A broker killed meanwhile (a closed connection, a leader moving) makes them start over
   * after a back-off, instead of ending the replica; anything else still ends the start-up.
   */
  private untilPrepared(): Promise<void> {
    return untilSucceeds(
      async () => {
        try {
          await this.prepareOnce();
        } catch (error) {
          await this.follower?.stop().catch(() => undefined);
          await this.parts.stats.disconnect();
          this.follower = undefined;
          throw error;
        }
      },
      {
        backoff: RECONNECT_BACKOFF,
        stopped: () => this.stopped(),
        // A refused password or an untrusted certificate is not a broker being away.
        fatal: (error) => !isRetriable(error) || isSecurityRefusal(error),
        onError: (error, attempt, retryInMs) =>
          this.parts.logger.warn(
            { err: error, attempt, retry_in_ms: retryInMs },
            'a start-up step failed while Kafka was unavailable; starting it over',
          ),
      },
    );
  }

  private async prepareOnce(): Promise<void> {
    const { kafka, admin, config, topics, stats, registry, definitions, logger } = this.parts;
    await ensureTopics(admin, [
      ...config.sourceTopics.map((topic) => ({ topic, numPartitions: config.sourcePartitions })),
      { topic: topics.pipelines, numPartitions: 1, compacted: true },
      { topic: topics.stats, numPartitions: 1, compacted: true },
      { topic: topics.dlq, numPartitions: 3 },
    ]);
    await stats.connect();
    this.follower = new RegistryFollower(
      kafka,
      topics.pipelines,
      registry,
      config.consumerGroup,
      (change) => definitions.enqueue(change),
    );
    await this.follower.start(10_000, (waitedMs, partitionsLeft) =>
      logger.warn(
        { topic: topics.pipelines, waited_ms: waitedMs, partitions_left: partitionsLeft },
        'still reading the definitions before processing starts',
      ),
    );
  }

  /**
   * A replica started while the broker is away (restarted, or not up yet) waits for it, as a
   * Kafka Streams application does, instead of exiting: kafkajs gives up after a few seconds.
   * A refused password or an untrusted certificate is not waited out: the start-up fails.
   */
  private untilConnected(): Promise<void> {
    return untilSucceeds(() => this.parts.admin.connect(), {
      backoff: RECONNECT_BACKOFF,
      stopped: () => this.stopped(),
      fatal: isSecurityRefusal,
      onError: (error, attempt, retryInMs) =>
        this.parts.logger.warn(
          { err: error, attempt, retry_in_ms: retryInMs },
          'Kafka is not reachable; waiting for it',
        ),
    });
  }
}
