import { logLevel } from 'kafkajs';
import type { logCreator } from 'kafkajs';
import type { Logger } from 'pino';

/** kafkajs' log lines as structured entries of the app's logger (warnings and errors only). */
export function kafkaLogCreator(logger: Logger): logCreator {
  const kafkaLogger = logger.child({ component: 'kafkajs' });
  return () =>
    ({ level, log }) => {
      const { message, ...extra } = log;
      // The broker answers CONCURRENT_TRANSACTIONS to a write right after a commit, and kafkajs
      // retries it (after logging it as an error): expected, so not worth an error line.
      if (
        /another concurrent operation on the same transaction/.test(
          `${message} ${String(extra['error'] ?? '')}`,
        )
      ) {
        kafkaLogger.debug(extra, message);
        return;
      }
      if (level === logLevel.ERROR) kafkaLogger.error(extra, message);
      else if (level === logLevel.WARN) kafkaLogger.warn(extra, message);
    };
}
