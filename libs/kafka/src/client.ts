import { Kafka, logLevel } from 'kafkajs';
import type { KafkaConfig } from 'kafkajs';

import { brokersFromEnv } from './config';
import { assertPatchedKafkajs } from './kafkajs/patched-kafkajs';

export interface KafkaClientOptions {
  clientId: string;
  brokers?: string[];
  /** kafkajs' own logger is noisy and unstructured; apps pass their own level. */
  logLevel?: logLevel;
  retry?: KafkaConfig['retry'];
  /** Routes kafkajs' own log lines into the app's logger. */
  logCreator?: KafkaConfig['logCreator'];
}

let patchChecked = false;

/** A kafkajs client; throws UnpatchedKafkajsError first if kafkajs lacks Sluice's patch. */
export function createKafka(options: KafkaClientOptions): Kafka {
  if (!patchChecked) {
    assertPatchedKafkajs();
    patchChecked = true;
  }
  return new Kafka({
    clientId: options.clientId,
    brokers: options.brokers ?? brokersFromEnv(),
    logLevel: options.logLevel ?? logLevel.WARN,
    retry: options.retry ?? { initialRetryTime: 100, retries: 8 },
    ...(options.logCreator ? { logCreator: options.logCreator } : {}),
  });
}
