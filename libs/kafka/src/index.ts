// First: it must replace a kafkajs module before kafkajs is loaded (see the file).
import './read-committed-fix';

export { brokersFromEnv, DEFAULT_KAFKA_BROKERS } from './config';
export { createKafka } from './client';
export type { KafkaClientOptions } from './client';
export { ensureTopics } from './topics';
export type { TopicSpec } from './topics';
export { readTopicToEnd } from './read-topic-to-end';
export type { ReadToEndOptions, TopicRecord } from './read-topic-to-end';
export { fetchTopicOffsets, retryRetriable } from './retry';
export { filterAbortedMessages } from './read-committed-fix';
