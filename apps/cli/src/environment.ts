import { DEFAULT_TOPIC_PREFIX } from '@sluice/contracts';
import type { DefinitionValidationOptions } from '@sluice/contracts';
import { brokersFromEnv, kafkaSecurityFromEnv } from '@sluice/kafka';
import type { KafkaSecurity } from '@sluice/kafka';

import { CliError } from './errors';

export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:3900';

/** What the CLI reads from the environment (docs/design.md §7, §8); nothing comes from flags or files. */
export interface CliEnvironment {
  adminUrl: string;
  adminToken: string | undefined;
}

/** `KAFKA_BROKERS`, read only by the commands that talk to Kafka. */
export function kafkaBrokers(env: NodeJS.ProcessEnv = process.env): string[] {
  try {
    return brokersFromEnv(env);
  } catch (error) {
    throw new CliError((error as Error).message);
  }
}

/** TLS and SASL to Kafka (KAFKA_SSL…, KAFKA_SASL_…), for the same commands; every problem. */
export function kafkaSecurity(env: NodeJS.ProcessEnv = process.env): KafkaSecurity {
  const read = kafkaSecurityFromEnv(env);
  if (!('security' in read))
    throw new CliError('the Kafka security settings are not usable', read.problems);
  return read.security;
}

function configuredSources(env: NodeJS.ProcessEnv): string[] {
  return (env['SOURCE_TOPICS'] ?? '')
    .split(',')
    .map((topic) => topic.trim())
    .filter((topic) => topic !== '');
}

/** The processors' SOURCE_TOPICS, as they have them (default `events`). */
export function sourceTopics(env: NodeJS.ProcessEnv = process.env): string[] {
  const sources = configuredSources(env);
  return sources.length > 0 ? sources : ['events'];
}

/** SLUICE_TOPIC_PREFIX, as the admin and the processors have it (default `sluice`). */
export function topicPrefix(env: NodeJS.ProcessEnv = process.env): string {
  return (env['SLUICE_TOPIC_PREFIX'] ?? '').trim() || DEFAULT_TOPIC_PREFIX;
}

export function readEnvironment(env: NodeJS.ProcessEnv = process.env): CliEnvironment {
  const adminUrl = (env['SLUICE_URL'] ?? '').trim() || DEFAULT_ADMIN_URL;
  try {
    new URL(adminUrl);
  } catch {
    throw new CliError(`SLUICE_URL is not a URL: ${adminUrl}`);
  }
  return {
    adminUrl: adminUrl.replace(/\/+$/, ''),
    adminToken: (env['SLUICE_ADMIN_TOKEN'] ?? '').trim() || undefined,
  };
}

/**
 * The installation's topic names, which definitions are checked against offline as the admin
 * checks them: SLUICE_TOPIC_PREFIX and the processors' SOURCE_TOPICS (defaults as theirs).
 */
export function definitionRules(env: NodeJS.ProcessEnv = process.env): DefinitionValidationOptions {
  const prefix = (env['SLUICE_TOPIC_PREFIX'] ?? '').trim();
  const sources = configuredSources(env);
  return {
    ...(prefix ? { topicPrefix: prefix } : {}),
    ...(sources.length > 0 ? { sourceTopics: sources } : {}),
  };
}
