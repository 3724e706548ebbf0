import { randomUUID } from 'node:crypto';

import type { Consumer, Kafka } from 'kafkajs';

import type { DefinitionRegistry, RegistryChange } from './definition-registry';

/**
 * Follows the pipelines topic from its beginning, outside the processors' consumer group (every
 * replica needs every definition), applying each record to the registry. `start` resolves once
 * the registry holds everything the topic held when it was called, so processing starts with the
 * full set of definitions; later records keep applying live.
 */
export class RegistryFollower {
  private consumer: Consumer | undefined;
  private readonly groupId = `sluice-registry-${randomUUID()}`;

  constructor(
    private readonly kafka: Kafka,
    private readonly topic: string,
    private readonly registry: DefinitionRegistry,
    private readonly onChange: (change: RegistryChange) => void = () => undefined,
  ) {}

  async start(timeoutMs = 60_000): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    let ends: Map<number, bigint>;
    try {
      ends = new Map(
        (await admin.fetchTopicOffsets(this.topic))
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
    await consumer.connect();
    await consumer.subscribe({ topic: this.topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        const key = message.key?.toString('utf8');
        if (key)
          this.onChange(
            this.registry.apply(
              key,
              message.value === null ? null : message.value.toString('utf8'),
            ),
          );
        const end = ends.get(partition);
        if (end !== undefined && BigInt(message.offset) + 1n >= end) {
          ends.delete(partition);
          if (ends.size === 0) caughtUp();
        }
      },
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`reading ${this.topic} took longer than ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    await Promise.race([ready, timedOut]).finally(() => clearTimeout(timer));
  }

  async stop(): Promise<void> {
    if (!this.consumer) return;
    await this.consumer.disconnect();
    const admin = this.kafka.admin();
    await admin
      .connect()
      .then(() => admin.deleteGroups([this.groupId]))
      .catch(() => undefined)
      .finally(() => admin.disconnect());
  }
}
