import { KafkaAuthorizationError, namingDenied } from '@sluice/kafka';
import type { AskedFor } from '@sluice/kafka';
import pc from 'picocolors';

/** A failure the user can act on: printed as a line (and its details), never as a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly details: readonly string[] = [],
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/**
 * A Kafka failure as the user should read it: Kafka refusing an ACL says which (`asked`), anything
 * else that Kafka at `brokers` could not be reached for it.
 */
export function kafkaFailure(
  error: unknown,
  brokers: readonly string[],
  asked: AskedFor,
): CliError {
  const named = namingDenied(error, asked);
  if (named instanceof KafkaAuthorizationError) return new CliError(named.message);
  return new CliError(`cannot reach Kafka at ${brokers.join(',')}: ${(error as Error).message}`);
}

/** The last stop for every command: a friendly message and an exit code. */
export function reportAndExit(error: unknown): never {
  if (error instanceof CliError) {
    process.stderr.write(`${pc.red('error:')} ${error.message}\n`);
    for (const detail of error.details) process.stderr.write(`  ${detail}\n`);
    process.exit(error.exitCode);
  }
  // Anything else is a bug in the CLI; the stack is for whoever reports it, on request.
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`${pc.red('error:')} ${message}\n`);
  if (process.env['SLUICE_DEBUG']) process.stderr.write(`${(error as Error)?.stack ?? ''}\n`);
  process.exit(2);
}
