// The admin's configuration (docs/design.md §7), validated once at boot with class-validator: the app
// refuses to start on a bad environment and lists every problem, not just the first.
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, Min, MinLength } from 'class-validator';

import {
  ConfigurationError,
  integer,
  listOf,
  loadEnvironment,
  ServiceEnvironment,
  trimmed,
} from '@sluice/config';

export { ConfigurationError };

export class AdminEnvironment extends ServiceEnvironment {
  @IsOptional()
  @Transform(integer)
  @IsInt({ message: 'ADMIN_PORT must be a whole number' })
  @Min(0)
  @Max(65535)
  ADMIN_PORT: number = 3900;

  @Transform(trimmed)
  @IsString({
    message: 'SLUICE_ADMIN_TOKEN is required: the bearer token every /api request must present',
  })
  @MinLength(16, { message: 'SLUICE_ADMIN_TOKEN must be at least 16 characters' })
  SLUICE_ADMIN_TOKEN!: string;

  @IsOptional()
  @Transform(trimmed)
  @Matches(/^postgres(ql)?:\/\/[^/\s]+\/[^/\s?]+(\?\S*)?$/, {
    message: 'DATABASE_URL must look like postgres://user@host:5432/database',
  })
  DATABASE_URL: string = 'postgres://postgres@127.0.0.1:5432/sluice';

  @IsOptional()
  @Transform(integer)
  @IsInt()
  @Min(1)
  SLUICE_OUTPUT_PARTITIONS: number = 6;

  @IsOptional()
  @Transform(integer)
  @IsInt()
  @Min(1)
  SLUICE_STATS_STALE_SECONDS: number = 30;
}

export interface AdminConfig {
  port: number;
  adminToken: string;
  databaseUrl: string;
  kafkaBrokers: string[];
  logLevel: string;
  logFormat: 'json' | 'pretty';
  topicPrefix: string;
  /** The processors' default source topics (a definition may not write to them). */
  sourceTopics: string[];
  outputPartitions: number;
  statsStaleMs: number;
}

export function loadAdminConfig(env: NodeJS.ProcessEnv = process.env): AdminConfig {
  const parsed = loadEnvironment(AdminEnvironment, env, ['SLUICE_ADMIN_TOKEN']);
  return {
    port: parsed.ADMIN_PORT,
    adminToken: parsed.SLUICE_ADMIN_TOKEN,
    databaseUrl: parsed.DATABASE_URL,
    kafkaBrokers: listOf(parsed.KAFKA_BROKERS),
    logLevel: parsed.LOG_LEVEL,
    logFormat: parsed.LOG_FORMAT as 'json' | 'pretty',
    topicPrefix: parsed.SLUICE_TOPIC_PREFIX,
    sourceTopics: listOf(parsed.SOURCE_TOPICS),
    outputPartitions: parsed.SLUICE_OUTPUT_PARTITIONS,
    statsStaleMs: parsed.SLUICE_STATS_STALE_SECONDS * 1000,
  };
}

/** Injection token of the validated configuration. */
export const ADMIN_CONFIG = Symbol('ADMIN_CONFIG');
