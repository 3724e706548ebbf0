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
