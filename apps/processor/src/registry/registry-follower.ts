import type { Kafka } from 'kafkajs';

import { TopicFollower } from '../tables/topic-follower';
import type { DefinitionRegistry, RegistryChange } from './definition-registry';

/**
 * Applies `sluice.pipelines` to the registry from its beginning and then live. `start` resolves
 * once the registry holds every definition the topic held, so processing starts with all of them.
 */
export class RegistryFollower {
  private readonly follower: TopicFollower;

  constructor(
    kafka: Kafka,
    topic: string,
    registry: DefinitionRegistry,
    groupOwner: string,
    onChange: (change: RegistryChange) => void = () => undefined,
  ) {
    this.follower = new TopicFollower(
      kafka,
      topic,
      (key, value) => onChange(registry.apply(key, value)),
      groupOwner,
    );
  }

  start(timeoutMs?: number, onSlow?: (waitedMs: number, partitionsLeft: number) => void) {
    return this.follower.start(timeoutMs, onSlow);
  }

  stop(): Promise<void> {
    return this.follower.stop();
  }
}
