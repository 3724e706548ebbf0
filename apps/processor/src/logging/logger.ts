import pino from 'pino';
import type { Logger } from 'pino';

/** Structured JSON logs; LOG_FORMAT=pretty for a readable terminal in development. */
export function createLogger(options: {
  level: string;
  format: 'json' | 'pretty';
  processorId: string;
}): Logger {
  return pino({
    level: options.level,
    base: { service: 'sluice-processor', processor_id: options.processorId },
    ...(options.format === 'pretty'
      ? { transport: { target: 'pino-pretty', options: { singleLine: true, colorize: true } } }
      : {}),
  });
}

export type { Logger };
