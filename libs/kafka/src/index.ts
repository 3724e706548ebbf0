export { brokersFromEnv, DEFAULT_KAFKA_BROKERS } from './config';
export { createKafka } from './client';
export type { KafkaClientOptions } from './client';
export { ensureTopics } from './topics';
export type { TopicSpec } from './topics';
export { readTopicToEnd } from './read-topic-to-end';
export type { ReadToEndOptions, TopicRecord } from './read-topic-to-end';
