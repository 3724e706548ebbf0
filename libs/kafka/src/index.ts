export { brokersFromEnv, DEFAULT_KAFKA_BROKERS } from './config';
export { createKafka } from './client';
export type { KafkaClientOptions } from './client';
export { ensureTopics } from './topics';
export type { TopicSpec } from './topics';
