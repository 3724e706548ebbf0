// How every Sluice client reaches a secured cluster (README, Security): TLS (KAFKA_SSL, a CA,
// an optional client certificate for mTLS) and SASL (PLAIN or SCRAM). Read from the environment
// once, every problem listed; secrets are read from the environment or from mounted files and
// never appear in a message.
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';

import type { SASLOptions } from 'kafkajs';

export const SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

export interface KafkaSecurity {
  /** TLS options (`true`: TLS with the system's CAs); absent: plaintext. */
  ssl?: ConnectionOptions | true;
  sasl?: SASLOptions;
}

/** Kafka security settings that do not hold together: every problem, no secret. */
export class KafkaSecurityError extends Error {
  override readonly name = 'KafkaSecurityError';
  constructor(readonly problems: string[]) {
    super(`the Kafka security settings are not usable: ${problems.join('; ')}`);
  }
}

function setting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

/** A file's contents, or a problem naming the variable and why (never the contents). */
function readSetting(
  variable: string,
  file: string,
  problems: string[],
  trim = false,
): string | undefined {
  try {
    const text = readFileSync(file, 'utf8');
    return trim ? text.trim() : text;
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    problems.push(`${variable} ${file} cannot be read: ${reason}`);
    return undefined;
  }
}

/**
 * KAFKA_SSL, KAFKA_SSL_CA_FILE, KAFKA_SSL_CERT_FILE, KAFKA_SSL_KEY_FILE, KAFKA_SASL_MECHANISM,
 * KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD (or KAFKA_SASL_PASSWORD_FILE) as kafkajs'
 * options, or every problem with them.
 */
export function kafkaSecurityFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): { security: KafkaSecurity; problems: [] } | { problems: string[] } {
  const problems: string[] = [];
  const sslFlag = setting(env, 'KAFKA_SSL')?.toLowerCase();
  if (sslFlag !== undefined && sslFlag !== 'true' && sslFlag !== 'false')
    problems.push(`KAFKA_SSL must be true or false, not ${JSON.stringify(sslFlag)}`);
  const tls = sslFlag === 'true';
  const caFile = setting(env, 'KAFKA_SSL_CA_FILE');
  const certFile = setting(env, 'KAFKA_SSL_CERT_FILE');
  const keyFile = setting(env, 'KAFKA_SSL_KEY_FILE');
  if (!tls) {
    for (const [name, value] of [
      ['KAFKA_SSL_CA_FILE', caFile],
      ['KAFKA_SSL_CERT_FILE', certFile],
      ['KAFKA_SSL_KEY_FILE', keyFile],
    ] as const)
      if (value !== undefined) problems.push(`${name} is set but KAFKA_SSL is not true`);
  }
  if ((certFile === undefined) !== (keyFile === undefined))
    problems.push('KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE go together (mTLS needs both)');
  const options: ConnectionOptions = {};
  if (tls && caFile) options.ca = readSetting('KAFKA_SSL_CA_FILE', caFile, problems);
  if (tls && certFile && keyFile) {
    options.cert = readSetting('KAFKA_SSL_CERT_FILE', certFile, problems);
    options.key = readSetting('KAFKA_SSL_KEY_FILE', keyFile, problems);
  }

  const mechanism = setting(env, 'KAFKA_SASL_MECHANISM')?.toLowerCase();
  const username = setting(env, 'KAFKA_SASL_USERNAME');
  const passwordValue = env['KAFKA_SASL_PASSWORD'];
  const passwordFile = setting(env, 'KAFKA_SASL_PASSWORD_FILE');
  let sasl: SASLOptions | undefined;
  if (mechanism === undefined) {
    if (username !== undefined || passwordValue || passwordFile !== undefined)
      problems.push('KAFKA_SASL_USERNAME and the password need KAFKA_SASL_MECHANISM');
  } else if (!(SASL_MECHANISMS as readonly string[]).includes(mechanism)) {
    problems.push(`KAFKA_SASL_MECHANISM must be one of ${SASL_MECHANISMS.join(', ')}`);
  } else {
    if (mechanism === 'plain' && !tls)
      problems.push(
        'KAFKA_SASL_MECHANISM=plain sends the password as it is: it needs KAFKA_SSL=true',
      );
    if (username === undefined) problems.push(`KAFKA_SASL_USERNAME is required with ${mechanism}`);
    let password: string | undefined;
    if (passwordValue && passwordFile !== undefined)
      problems.push('KAFKA_SASL_PASSWORD and KAFKA_SASL_PASSWORD_FILE: set one of them');
    else if (passwordFile !== undefined)
      password = readSetting('KAFKA_SASL_PASSWORD_FILE', passwordFile, problems, true);
    else if (passwordValue) password = passwordValue;
    else
      problems.push(
        `KAFKA_SASL_PASSWORD or KAFKA_SASL_PASSWORD_FILE is required with ${mechanism}`,
      );
    if (username !== undefined && password !== undefined)
      sasl = { mechanism: mechanism as SaslMechanism, username, password } as SASLOptions;
  }
  if (problems.length > 0) return { problems };
  const security: KafkaSecurity = {};
  if (tls) security.ssl = Object.keys(options).length > 0 ? options : true;
  if (sasl) security.sasl = sasl;
  return { security, problems: [] };
}

/** What kafkaSecurityFromEnv gives, or a KafkaSecurityError with every problem. */
export function requireKafkaSecurity(env: NodeJS.ProcessEnv = process.env): KafkaSecurity {
  const read = kafkaSecurityFromEnv(env);
  if (!('security' in read)) throw new KafkaSecurityError(read.problems);
  return read.security;
}

/**
 * Whether `error` says the cluster refused who this client is or what it trusts: a failed SASL
 * authentication, or a TLS certificate the client cannot trust (or that the broker refused).
 * Retrying cannot mend either; an app stops with the message instead.
 */
export function isSecurityRefusal(error: unknown): boolean {
  const TLS_CODES = new Set([
    'SELF_SIGNED_CERT_IN_CHAIN',
    'DEPTH_ZERO_SELF_SIGNED_CERT',
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
    'CERT_HAS_EXPIRED',
    'ERR_TLS_CERT_ALTNAME_INVALID',
    'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
    'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
  ]);
  for (
    let link = error as
        { name?: unknown; code?: unknown; cause?: unknown; originalError?: unknown } | undefined,
      depth = 0;
    link && depth < 8;
    depth++
  ) {
    if (link.name === 'KafkaJSSASLAuthenticationError') return true;
    if (typeof link.code === 'string' && TLS_CODES.has(link.code)) return true;
    link = (link.originalError ?? link.cause) as typeof link;
  }
  return false;
}
