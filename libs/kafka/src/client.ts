import { Kafka, logLevel } from 'kafkajs';
import type { KafkaConfig } from 'kafkajs';

import { brokersFromEnv } from './config';
import { requireKafkaSecurity } from './security';
import type { KafkaSecurity } from './security';
import { assertPatchedKafkajs } from './kafkajs/patched-kafkajs';

export interface KafkaClientOptions {
  clientId: string;
  brokers?: string[];
  /** kafkajs' own logger is noisy and unstructured; apps pass their own level. */
  logLevel?: logLevel;
  retry?: KafkaConfig['retry'];
  /** Routes kafkajs' own log lines into the app's logger. */
  logCreator?: KafkaConfig['logCreator'];
  /** TLS and SASL; read from the environment (KAFKA_SSL…, KAFKA_SASL_…) when omitted. */
  security?: KafkaSecurity;
}

let patchChecked = false;

/**
 * A kafkajs client; throws UnpatchedKafkajsError first if kafkajs lacks Sluice's patch, and
 * KafkaSecurityError if the security settings do not hold together.
 */
export function createKafka(options: KafkaClientOptions): Kafka {
  if (!patchChecked) {
    assertPatchedKafkajs();
    patchChecked = true;
  }
  return new Kafka({
    clientId: options.clientId,
    brokers: options.brokers ?? brokersFromEnv(),
    ...(options.security ?? requireKafkaSecurity()),
    logLevel: options.logLevel ?? logLevel.WARN,
    retry: options.retry ?? { initialRetryTime: 100, retries: 8 },
    ...(options.logCreator ? { logCreator: options.logCreator } : {}),
  });
}
