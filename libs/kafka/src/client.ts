import { Kafka, logLevel } from 'kafkajs';
import type { KafkaConfig } from 'kafkajs';

import { brokersFromEnv } from './config';

export interface KafkaClientOptions {
  clientId: string;
  brokers?: string[];
  /** kafkajs' own logger is noisy and unstructured; apps pass their own level. */
  logLevel?: logLevel;
  retry?: KafkaConfig['retry'];
  /** Routes kafkajs' own log lines into the app's logger. */
  logCreator?: KafkaConfig['logCreator'];
}

export function createKafka(options: KafkaClientOptions): Kafka {
  return new Kafka({
    clientId: options.clientId,
    brokers: options.brokers ?? brokersFromEnv(),
    logLevel: options.logLevel ?? logLevel.WARN,
    retry: options.retry ?? { initialRetryTime: 100, retries: 8 },
    ...(options.logCreator ? { logCreator: options.logCreator } : {}),
  });
}
