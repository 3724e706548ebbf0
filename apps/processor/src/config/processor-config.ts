// The processor's configuration (docs/design.md §7), read and validated like the admin's: a bad
// environment stops the replica with every problem listed.
import { hostname } from 'node:os';

import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength } from 'class-validator';

import {
  ConfigurationError,
  integer,
  listOf,
  loadEnvironment,
  ServiceEnvironment,
  trimmed,
} from '@sluice/config';

import { kafkaSecurityFromEnv } from '@sluice/kafka';
import type { KafkaSecurity } from '@sluice/kafka';

export { ConfigurationError };

const NAME = /^[a-zA-Z0-9._-]+$/;

export const PROCESSING_GUARANTEES = ['exactly_once', 'exactly_once_v2'] as const;
/**
 * One, as Kafka Streams' one stream thread: four (the default until session 28) let one commit
 * while the others send, but each commit and its check cost requests of their own, and one
 * pipeline ran 20% to 28% faster with one in same-hour runs (README, Performance).
 */
export const DEFAULT_REPLICA_TRANSACTIONS = 1;
export type ProcessingGuarantee = (typeof PROCESSING_GUARANTEES)[number];

export class ProcessorEnvironment extends ServiceEnvironment {
  @IsOptional()
  @Transform(trimmed)
  @Matches(NAME, { message: 'CONSUMER_GROUP may hold letters, digits, ., _ and -' })
  CONSUMER_GROUP: string = 'sluice-processor';

  @IsOptional()
  @Transform(trimmed)
  @Matches(NAME, { message: 'PROCESSOR_ID may hold letters, digits, ., _ and -' })
  PROCESSOR_ID: string = hostname();

  @IsOptional()
  @Transform(integer)
  @IsInt({ message: 'METRICS_PORT must be a whole number' })
  @Min(0)
  @Max(65535)
  METRICS_PORT: number = 9464;

  /** When set, GET /metrics requires `Authorization: Bearer $METRICS_TOKEN` (the admin's too). */
  @IsOptional()
  @Transform(trimmed)
  @IsString()
  @MinLength(16, { message: 'METRICS_TOKEN must be at least 16 characters' })
  METRICS_TOKEN?: string;

  /**
   * How long a transaction collects batches before it commits (docs/design.md §5: about 100 ms).
   * At most half of kafkajs' transaction timeout (60 s), past which the coordinator would abort
   * every transaction.
   */
  @IsOptional()
  @Transform(integer)
  @IsInt({ message: 'COMMIT_INTERVAL_MS must be a whole number' })
  @Min(1)
  @Max(30_000, { message: 'COMMIT_INTERVAL_MS must be at most 30000 (30 s)' })
  COMMIT_INTERVAL_MS: number = 100;

  /**
   * How long a transaction that no reader waits for (state changes, positions, partials of
   * windows that fire on the watermark) collects before it commits; never below
   * COMMIT_INTERVAL_MS. Unset: 1 s, which halves the broker's work for many stateful pipelines
   * (README, Benchmarks) and delays no result. At most half of kafkajs' transaction timeout
   * (60 s), past which the coordinator would abort every quiet transaction.
   */
  @IsOptional()
  @Transform(integer)
  @IsInt({ message: 'QUIET_COMMIT_INTERVAL_MS must be a whole number' })
  @Min(1)
  @Max(30_000, { message: 'QUIET_COMMIT_INTERVAL_MS must be at most 30000 (30 s)' })
  QUIET_COMMIT_INTERVAL_MS?: number;

  /**
   * How the replica's writes and offset commits are made atomic (docs/design.md §5):
   * `exactly_once_v2` (the default, Kafka Streams' own), one transaction per replica for all
   * its tasks, fenced by the group's generation (KIP-447), which needs a PROCESSOR_ID of its own
   * for every replica of the group; `exactly_once`, a transactional producer per task (input
   * partition), fenced by its transactional id (EOS-v1): a transaction per task and commit, so
   * the broker's work grows with the number of tasks.
   */
  @IsOptional()
  @Transform(trimmed)
  @IsIn(PROCESSING_GUARANTEES, {
    message: `PROCESSING_GUARANTEE must be one of ${PROCESSING_GUARANTEES.join(', ')}`,
  })
  PROCESSING_GUARANTEE: ProcessingGuarantee = 'exactly_once_v2';

  /**
   * exactly_once_v2: how many transactions the replica runs at once, each with a producer of
   * its own and a share of the tasks (docs/design.md §5).
   */
  @IsOptional()
  @Transform(integer)
  @IsInt({ message: 'REPLICA_TRANSACTIONS must be a whole number' })
  @Min(1)
  @Max(16, { message: 'REPLICA_TRANSACTIONS must be at most 16' })
  REPLICA_TRANSACTIONS: number = DEFAULT_REPLICA_TRANSACTIONS;

  /** Partitions of a source topic the processor has to create because it does not exist. */
  @IsOptional()
  @Transform(integer)
  @IsInt()
  @Min(1)
  SOURCE_PARTITIONS: number = 6;

  @IsOptional()
  @Transform(integer)
  @IsInt()
  @Min(100)
  STATS_INTERVAL_MS: number = 5000;

  /** How long the group waits for a silent replica before its partitions move (kill -9). */
  @IsOptional()
  @Transform(integer)
  @IsInt()
  @Min(1000)
  CONSUMER_SESSION_TIMEOUT_MS: number = 30_000;
}

const DEFAULT_QUIET_COMMIT_INTERVAL_MS = 1000;

export interface ProcessorConfig {
  kafkaBrokers: string[];
  /** TLS and SASL to Kafka (secrets included: never logged). */
  kafkaSecurity: KafkaSecurity;
  sourceTopics: string[];
  consumerGroup: string;
  processorId: string;
  metricsPort: number;
  /** Required of /metrics' readers when set (never logged). */
  metricsToken: string | undefined;
  logLevel: string;
  logFormat: 'json' | 'pretty';
  topicPrefix: string;
  commitIntervalMs: number;
  /** At least commitIntervalMs. */
  quietCommitIntervalMs: number;
  processingGuarantee: ProcessingGuarantee;
  /** exactly_once_v2: transactions at once per replica. */
  replicaTransactions: number;
  sourcePartitions: number;
  statsIntervalMs: number;
  sessionTimeoutMs: number;
}

export function loadProcessorConfig(env: NodeJS.ProcessEnv = process.env): ProcessorConfig {
  // Every problem at once: the environment's and the Kafka security settings'.
  const problems: string[] = [];
  let parsed: ProcessorEnvironment | undefined;
  try {
    parsed = loadEnvironment(ProcessorEnvironment, env);
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    problems.push(...error.problems);
  }
  const kafka = kafkaSecurityFromEnv(env);
  if (!('security' in kafka)) problems.push(...kafka.problems);
  if (parsed === undefined || !('security' in kafka)) throw new ConfigurationError(problems);
  return {
    kafkaBrokers: listOf(parsed.KAFKA_BROKERS),
    kafkaSecurity: kafka.security,
    sourceTopics: listOf(parsed.SOURCE_TOPICS),
    consumerGroup: parsed.CONSUMER_GROUP,
    processorId: parsed.PROCESSOR_ID,
    metricsPort: parsed.METRICS_PORT,
    metricsToken: parsed.METRICS_TOKEN,
    logLevel: parsed.LOG_LEVEL,
    logFormat: parsed.LOG_FORMAT as 'json' | 'pretty',
    topicPrefix: parsed.SLUICE_TOPIC_PREFIX,
    commitIntervalMs: parsed.COMMIT_INTERVAL_MS,
    quietCommitIntervalMs: Math.max(
      parsed.COMMIT_INTERVAL_MS,
      parsed.QUIET_COMMIT_INTERVAL_MS ?? DEFAULT_QUIET_COMMIT_INTERVAL_MS,
    ),
    processingGuarantee: parsed.PROCESSING_GUARANTEE,
    replicaTransactions: parsed.REPLICA_TRANSACTIONS,
    sourcePartitions: parsed.SOURCE_PARTITIONS,
    statsIntervalMs: parsed.STATS_INTERVAL_MS,
    sessionTimeoutMs: parsed.CONSUMER_SESSION_TIMEOUT_MS,
  };
}
