// The admin's configuration (docs/design.md §7), validated once at boot with class-validator: the app
// refuses to start on a bad environment and lists every problem, not just the first.
import { readFileSync } from 'node:fs';

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

import { kafkaSecurityFromEnv } from '@sluice/kafka';
import type { KafkaSecurity } from '@sluice/kafka';

import { ADMIN_TOKEN_NAME, digestOf, parseTokensFile } from '../auth/api-tokens';
import { postgresConnection } from '../database/postgres-tls';
import type { PostgresConnection } from '../database/postgres-tls';

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/sluice';
import type { ApiToken } from '../auth/api-tokens';

export { ConfigurationError };

export class AdminEnvironment extends ServiceEnvironment {
  @IsOptional()
  @Transform(integer)
  @IsInt({ message: 'ADMIN_PORT must be a whole number' })
  @Min(0)
  @Max(65535)
  ADMIN_PORT: number = 3900;

  /** An admin token; optional when SLUICE_API_TOKENS_FILE names the tokens. */
  @IsOptional()
  @Transform(trimmed)
  @IsString()
  @MinLength(16, { message: 'SLUICE_ADMIN_TOKEN must be at least 16 characters' })
  SLUICE_ADMIN_TOKEN?: string;

  /** The CA that signs PostgreSQL's certificate (with sslmode=verify-full in DATABASE_URL). */
  @IsOptional()
  @Transform(trimmed)
  @IsString()
  DATABASE_CA_FILE?: string;

  /** A YAML list of { name, token_sha256, role }: README, Security. */
  @IsOptional()
  @Transform(trimmed)
  @IsString()
  SLUICE_API_TOKENS_FILE?: string;

  /** When set, GET /metrics requires `Authorization: Bearer $METRICS_TOKEN`. */
  @IsOptional()
  @Transform(trimmed)
  @IsString()
  @MinLength(16, { message: 'METRICS_TOKEN must be at least 16 characters' })
  METRICS_TOKEN?: string;

  @IsOptional()
  @Transform(trimmed)
  @Matches(/^postgres(ql)?:\/\/[^/\s]+\/[^/\s?]+(\?\S*)?$/, {
    message: 'DATABASE_URL must look like postgres://user@host:5432/database',
  })
  DATABASE_URL: string = DEFAULT_DATABASE_URL;

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
  /** SLUICE_ADMIN_TOKEN's, which a SIGHUP does not change (the environment stays). */
  adminToken: ApiToken | undefined;
  /** SLUICE_ADMIN_TOKEN's and the tokens file's, as loaded at boot. */
  tokens: ApiToken[];
  /** Re-read on SIGHUP. */
  tokensFile: string | undefined;
  metricsToken: string | undefined;
  databaseUrl: string;
  /** The URL without its sslmode, and the TLS options that sslmode and DATABASE_CA_FILE mean. */
  database: PostgresConnection;
  kafkaBrokers: string[];
  /** TLS and SASL to Kafka (secrets included: never logged). */
  kafkaSecurity: KafkaSecurity;
  logLevel: string;
  logFormat: 'json' | 'pretty';
  topicPrefix: string;
  /** The processors' default source topics (a definition may not write to them). */
  sourceTopics: string[];
  outputPartitions: number;
  statsStaleMs: number;
}

export function loadAdminConfig(env: NodeJS.ProcessEnv = process.env): AdminConfig {
  // Every problem at once: the environment's and the tokens'.
  const problems: string[] = [];
  let parsed: AdminEnvironment | undefined;
  try {
    parsed = loadEnvironment(AdminEnvironment, env);
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    problems.push(...error.problems);
  }
  const database = postgresConnection(
    setting(env['DATABASE_URL']) ?? DEFAULT_DATABASE_URL,
    setting(env['DATABASE_CA_FILE']),
  );
  if (!('connection' in database)) problems.push(...database.problems);
  const kafka = kafkaSecurityFromEnv(env);
  if (!('security' in kafka)) problems.push(...kafka.problems);
  const adminToken = environmentToken(setting(env['SLUICE_ADMIN_TOKEN']));
  const tokens = loadTokens(adminToken, setting(env['SLUICE_API_TOKENS_FILE']));
  if ('problems' in tokens) problems.push(...tokens.problems);
  if (
    parsed === undefined ||
    'problems' in tokens ||
    !('connection' in database) ||
    !('security' in kafka)
  )
    throw new ConfigurationError(problems);
  return {
    port: parsed.ADMIN_PORT,
    adminToken,
    tokens: tokens.tokens,
    tokensFile: parsed.SLUICE_API_TOKENS_FILE,
    metricsToken: parsed.METRICS_TOKEN,
    databaseUrl: parsed.DATABASE_URL,
    database: database.connection,
    kafkaBrokers: listOf(parsed.KAFKA_BROKERS),
    kafkaSecurity: kafka.security,
    logLevel: parsed.LOG_LEVEL,
    logFormat: parsed.LOG_FORMAT as 'json' | 'pretty',
    topicPrefix: parsed.SLUICE_TOPIC_PREFIX,
    sourceTopics: listOf(parsed.SOURCE_TOPICS),
    outputPartitions: parsed.SLUICE_OUTPUT_PARTITIONS,
    statsStaleMs: parsed.SLUICE_STATS_STALE_SECONDS * 1000,
  };
}

/** A variable's value, trimmed; unset when empty. */
function setting(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/** SLUICE_ADMIN_TOKEN as the `admin` token. */
export function environmentToken(adminToken: string | undefined): ApiToken | undefined {
  if (adminToken === undefined) return undefined;
  return { name: ADMIN_TOKEN_NAME, role: 'admin', digest: digestOf(adminToken) };
}

/**
 * The API's tokens: SLUICE_ADMIN_TOKEN's and the tokens file's entries. At least one is
 * required; a file that cannot be read or holds a bad entry is every problem in it.
 */
export function loadTokens(
  fromEnvironment: ApiToken | undefined,
  file: string | undefined,
): { tokens: ApiToken[] } | { problems: string[] } {
  const tokens = fromEnvironment === undefined ? [] : [fromEnvironment];
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      return { problems: [`SLUICE_API_TOKENS_FILE ${file} cannot be read: ${reason}`] };
    }
    const parsed = parseTokensFile(text, file);
    if (parsed.tokens === undefined) return { problems: parsed.problems };
    if (fromEnvironment && parsed.tokens.some((token) => token.name === fromEnvironment.name))
      return { problems: [`${file}: the name ${fromEnvironment.name} is SLUICE_ADMIN_TOKEN's`] };
    tokens.push(...parsed.tokens);
  }
  if (tokens.length === 0)
    return {
      problems: [
        'SLUICE_ADMIN_TOKEN or SLUICE_API_TOKENS_FILE is required: the bearer tokens /api requests present',
      ],
    };
  return { tokens };
}

/** Injection token of the validated configuration. */
export const ADMIN_CONFIG = Symbol('ADMIN_CONFIG');
