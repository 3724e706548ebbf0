// First: they replace kafkajs modules before kafkajs is loaded (see kafkajs-module.ts).
import './read-committed-fix';
import './fast-record-decoder';

export { brokersFromEnv, DEFAULT_KAFKA_BROKERS } from './config';
export { createKafka } from './client';
export type { KafkaClientOptions } from './client';
export { ensureTopics } from './topics';
export type { TopicSpec } from './topics';
export { readTopicToEnd } from './read-topic-to-end';
export type { ReadToEndOptions, TopicRecord } from './read-topic-to-end';
export { fetchTopicOffsets, retryRetriable } from './retry';
export { filterAbortedMessages } from './read-committed-fix';
