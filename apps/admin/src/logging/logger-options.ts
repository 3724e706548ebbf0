import type { Params } from 'nestjs-pino';

import type { AdminConfig } from '../config/admin-config';

/** Structured JSON logs; LOG_FORMAT=pretty for a readable terminal in development. */
export function loggerOptions(config: AdminConfig): Params {
  return {
    pinoHttp: {
      level: config.logLevel,
      base: { service: 'sluice-admin' },
      redact: ['req.headers.authorization'],
      customLogLevel: (_request, response, error) =>
        error || response.statusCode >= 500
          ? 'error'
          : response.statusCode >= 400
            ? 'warn'
            : 'info',
      autoLogging: {
        ignore: (request) => request.url === '/health/live' || request.url === '/metrics',
      },
      ...(config.logFormat === 'pretty'
        ? { transport: { target: 'pino-pretty', options: { singleLine: true, colorize: true } } }
        : {}),
    },
  };
}
