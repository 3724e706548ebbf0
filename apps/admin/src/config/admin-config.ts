// The admin's configuration (DESIGN §7), validated once at boot with class-validator: the app
// refuses to start on a bad environment and lists every problem, not just the first.
import { plainToInstance, Transform } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
  validateSync,
} from 'class-validator';

const trimmed = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim() : value;
const integer = ({ value }: { value: unknown }) =>
  typeof value === 'string' && value.trim() !== '' ? Number(value) : value;

export class AdminEnvironment {
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
  @Transform(trimmed)
  @Matches(/^\s*[^\s:,]+:\d{1,5}(\s*,\s*[^\s:,]+:\d{1,5})*\s*$/, {
    message: 'KAFKA_BROKERS must be a comma-separated list of host:port',
  })
  KAFKA_BROKERS: string = '127.0.0.1:9092';

  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL: string = 'info';

  @IsOptional()
  @IsIn(['json', 'pretty'])
  LOG_FORMAT: string = 'json';

  @IsOptional()
  @Matches(/^[a-zA-Z0-9._-]+$/, {
    message: 'SLUICE_TOPIC_PREFIX may hold letters, digits, ., _ and -',
  })
  SLUICE_TOPIC_PREFIX: string = 'sluice';

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
  outputPartitions: number;
  statsStaleMs: number;
}

export class ConfigurationError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export function loadAdminConfig(env: NodeJS.ProcessEnv = process.env): AdminConfig {
  const known = Object.keys(new AdminEnvironment());
  const input = Object.fromEntries(
    [...known, 'SLUICE_ADMIN_TOKEN']
      .filter((key) => env[key] !== undefined && env[key] !== '')
      .map((key) => [key, env[key]]),
  );
  const parsed = plainToInstance(AdminEnvironment, input, { exposeDefaultValues: true });
  const errors = validateSync(parsed, { forbidUnknownValues: false });
  if (errors.length > 0) {
    throw new ConfigurationError(errors.flatMap((error) => Object.values(error.constraints ?? {})));
  }
  return {
    port: parsed.ADMIN_PORT,
    adminToken: parsed.SLUICE_ADMIN_TOKEN,
    databaseUrl: parsed.DATABASE_URL,
    kafkaBrokers: parsed.KAFKA_BROKERS.split(',').map((broker) => broker.trim()),
    logLevel: parsed.LOG_LEVEL,
    logFormat: parsed.LOG_FORMAT as 'json' | 'pretty',
    topicPrefix: parsed.SLUICE_TOPIC_PREFIX,
    outputPartitions: parsed.SLUICE_OUTPUT_PARTITIONS,
    statsStaleMs: parsed.SLUICE_STATS_STALE_SECONDS * 1000,
  };
}

/** Injection token of the validated configuration. */
export const ADMIN_CONFIG = Symbol('ADMIN_CONFIG');
