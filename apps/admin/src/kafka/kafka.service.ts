import { Inject, Injectable, Logger } from '@nestjs/common';
import type { OnApplicationShutdown } from '@nestjs/common';
import { createKafka, ensureTopics, groupOwner, isSecurityRefusal } from '@sluice/kafka';
import type { TopicSpec } from '@sluice/kafka';
import { internalTopics } from '@sluice/contracts';
import type { InternalTopics } from '@sluice/contracts';
import { logLevel } from 'kafkajs';
import type { Admin, Kafka, Producer } from 'kafkajs';

import { ADMIN_CONFIG } from '../config/admin-config';
import type { AdminConfig } from '../config/admin-config';

/**
 * The admin's Kafka clients. Connections are made on first use and made again after a failure,
 * so the admin starts and serves while the broker is away.
 */
@Injectable()
export class KafkaService implements OnApplicationShutdown {
  private readonly logger = new Logger('Kafka');
  readonly kafka: Kafka;
  readonly topics: InternalTopics;
  /** The name the admin's consumer groups are under (`<SLUICE_TOPIC_PREFIX>.admin`). */
  readonly groupOwner: string;
  private producerPromise: Promise<Producer> | undefined;
  private adminPromise: Promise<Admin> | undefined;
  private readonly knownTopics = new Set<string>();
  private closed = false;

  constructor(@Inject(ADMIN_CONFIG) private readonly config: AdminConfig) {
    this.kafka = createKafka({
      clientId: 'sluice-admin',
      brokers: config.kafkaBrokers,
      security: config.kafkaSecurity,
      logLevel: logLevel.NOTHING,
      retry: { initialRetryTime: 200, retries: 3 },
    });
    this.topics = internalTopics(config.topicPrefix);
    this.groupOwner = groupOwner('admin', config.topicPrefix);
  }

  /** After every worker stopped in onModuleDestroy (Nest runs shutdown hooks after those). */
  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    const producer = await this.producerPromise?.catch(() => undefined);
    const admin = await this.adminPromise?.catch(() => undefined);
    await Promise.allSettled([producer?.disconnect(), admin?.disconnect()]);
  }

  producer(): Promise<Producer> {
    this.producerPromise ??= this.connectOnce(
      () => {
        // Idempotent with one request in flight: retries never reorder or duplicate definitions.
        const producer = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
        return producer.connect().then(() => producer);
      },
      () => (this.producerPromise = undefined),
    );
    return this.producerPromise;
  }

  admin(): Promise<Admin> {
    this.adminPromise ??= this.connectOnce(
      () => {
        const admin = this.kafka.admin();
        return admin.connect().then(() => admin);
      },
      () => (this.adminPromise = undefined),
    );
    return this.adminPromise;
  }

  /** Creates the internal topics if missing: definitions and stats compacted (docs/design.md §5). */
  async ensureInternalTopics(): Promise<void> {
    await this.ensure([
      { topic: this.topics.pipelines, numPartitions: 1, compacted: true },
      { topic: this.topics.stats, numPartitions: 1, compacted: true },
      { topic: this.topics.dlq, numPartitions: 3 },
    ]);
  }

  /** A pipeline's output topic and its `.late` sibling. */
  /** A pipeline's result topics and each one's `.late` (outputTopicsOf). */
  async ensureOutputTopics(topics: readonly string[]): Promise<void> {
    await this.ensure(
      topics.map((topic) => ({ topic, numPartitions: this.config.outputPartitions })),
    );
  }

  private async ensure(specs: TopicSpec[]): Promise<void> {
    const missing = specs.filter((spec) => !this.knownTopics.has(spec.topic));
    if (missing.length === 0) return;
    const created = await ensureTopics(await this.admin(), missing);
    if (created.length > 0) this.logger.log(`created topics ${created.join(', ')}`);
    for (const spec of missing) this.knownTopics.add(spec.topic);
  }

  private async connectOnce<T>(connect: () => Promise<T>, forget: () => void): Promise<T> {
    // After shutdown, a late caller must not open a connection that nothing would close.
    if (this.closed) throw new Error('the Kafka clients are closed');
    try {
      return await connect();
    } catch (error) {
      forget();
      if (isSecurityRefusal(error)) this.stopOnRefusal(error);
      throw error;
    }
  }

  /**
   * The cluster refused who the admin is (a wrong password) or the admin cannot trust the
   * cluster (its certificate): no retry mends that, and a retry loop would hide it. One line,
   * then exit 77 (EX_NOPERM).
   */
  private stopOnRefusal(error: unknown): never {
    this.logger.fatal(
      `Kafka refused the admin's credentials or certificate: ${(error as Error).message}; check KAFKA_SASL_* and KAFKA_SSL_*`,
    );
    process.exit(77);
  }
}
