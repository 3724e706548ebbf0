// What every task of a replica shares: its clients, group, topic prefix, logger and metrics.
import type { Admin, Kafka } from 'kafkajs';
import type { Logger } from 'pino';

import type { ProcessorMetrics } from '../observability/processor-metrics';
import type { ReplicaTransactions } from './replica-transactions';
import type { CommitIntervals } from './task-output';

export interface TaskContext {
  kafka: Kafka;
  admin: Admin;
  consumerGroup: string;
  /** SLUICE_TOPIC_PREFIX: the pipelines' internal topics are under it. */
  topicPrefix: string;
  logger: Logger;
  metrics: ProcessorMetrics;
  commitIntervals: CommitIntervals;
  /** PROCESSING_GUARANTEE=exactly_once_v2: the replica's transactions the tasks write in. */
  replicaTransactions?: ReplicaTransactions | undefined;
}
