import { logLevel } from 'kafkajs';
import type { logCreator } from 'kafkajs';
import type { Logger } from 'pino';

/** kafkajs' log lines as structured entries of the app's logger (warnings and errors only). */
export function kafkaLogCreator(logger: Logger): logCreator {
  const kafkaLogger = logger.child({ component: 'kafkajs' });
  return () =>
    ({ level, log }) => {
      const { message, ...extra } = log;
      if (level === logLevel.ERROR) kafkaLogger.error(extra, message);
      else if (level === logLevel.WARN) kafkaLogger.warn(extra, message);
    };
}
