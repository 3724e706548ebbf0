// How the apps read their environment (docs/design.md §7): a class per app whose properties are the
// variables, validated once at boot with class-validator; a bad environment stops the app with
// every problem listed, not just the first.
import { plainToInstance, Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, Matches, validateSync } from 'class-validator';

export class ConfigurationError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export const trimmed = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.trim() : value;

export const integer = ({ value }: { value: unknown }) =>
  typeof value === 'string' && value.trim() !== '' ? Number(value) : value;

/** A comma-separated list, trimmed, without empty items. */
export function listOf(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

/** What every Sluice service reads. */
export class ServiceEnvironment {
  @IsOptional()
  @Transform(trimmed)
  @Matches(/^\s*[^\s:,]+:\d{1,5}(\s*,\s*[^\s:,]+:\d{1,5})*\s*$/, {
    message: 'KAFKA_BROKERS must be a comma-separated list of host:port',
  })
  KAFKA_BROKERS: string = '127.0.0.1:9092';

  // TLS and SASL to Kafka (README, Security). Declared here so that every app names them
  // alike; @sluice/kafka's kafkaSecurityFromEnv checks how they go together.
  @IsOptional()
  @IsString()
  KAFKA_SSL?: string;

  @IsOptional()
  @IsString()
  KAFKA_SSL_CA_FILE?: string;

  @IsOptional()
  @IsString()
  KAFKA_SSL_CERT_FILE?: string;

  @IsOptional()
  @IsString()
  KAFKA_SSL_KEY_FILE?: string;

  @IsOptional()
  @IsString()
  KAFKA_SASL_MECHANISM?: string;

  @IsOptional()
  @IsString()
  KAFKA_SASL_USERNAME?: string;

  @IsOptional()
  @IsString()
  KAFKA_SASL_PASSWORD?: string;

  @IsOptional()
  @IsString()
  KAFKA_SASL_PASSWORD_FILE?: string;

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

  /**
   * The processors' source topics: what they read, and (in the admin) topics a definition may
   * not write to, since its pipeline would read its own results.
   */
  @IsOptional()
  @Transform(trimmed)
  @Matches(/^\s*[a-zA-Z0-9._-]+(\s*,\s*[a-zA-Z0-9._-]+)*\s*$/, {
    message: 'SOURCE_TOPICS must be a comma-separated list of topic names',
  })
  SOURCE_TOPICS: string = 'events';
}

/**
 * Reads the variables `Environment` declares (plus `required` ones, which have no default) from
 * `env` and validates them; empty strings count as unset.
 */
export function loadEnvironment<T extends object>(
  Environment: new () => T,
  env: NodeJS.ProcessEnv,
  required: string[] = [],
): T {
  const known = [...Object.keys(new Environment()), ...required];
  const input = Object.fromEntries(
    known.filter((key) => env[key] !== undefined && env[key] !== '').map((key) => [key, env[key]]),
  );
  const parsed = plainToInstance(Environment, input, { exposeDefaultValues: true });
  const errors = validateSync(parsed, { forbidUnknownValues: false });
  if (errors.length > 0) {
    throw new ConfigurationError(errors.flatMap((error) => Object.values(error.constraints ?? {})));
  }
  return parsed;
}
