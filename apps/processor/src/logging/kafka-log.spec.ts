import { logLevel } from 'kafkajs';
import pino from 'pino';

import { kafkaLogCreator } from './kafka-log';

function capture() {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino(
    { level: 'debug' },
    { write: (line: string) => lines.push(JSON.parse(line)) },
  );
  return { lines, log: kafkaLogCreator(logger)(logLevel.DEBUG) };
}

describe('kafkaLogCreator', () => {
  it('keeps real errors as errors', () => {
    const { lines, log } = capture();
    log({
      namespace: 'x',
      level: logLevel.ERROR,
      label: 'ERROR',
      log: { timestamp: '', message: 'Connection timeout' },
    });
    expect(lines).toEqual([expect.objectContaining({ level: 50, msg: 'Connection timeout' })]);
  });

  it('demotes CONCURRENT_TRANSACTIONS, which kafkajs retries, whether in the message or the error field', () => {
    const { lines, log } = capture();
    const concurrent =
      'The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing';
    log({
      namespace: 'x',
      level: logLevel.ERROR,
      label: 'ERROR',
      log: { timestamp: '', message: concurrent },
    });
    log({
      namespace: 'x',
      level: logLevel.ERROR,
      label: 'ERROR',
      log: {
        timestamp: '',
        message: 'Response AddPartitionsToTxn(key: 24, version: 1)',
        error: concurrent,
      } as never,
    });
    expect(lines.map((line) => line.level)).toEqual([20, 20]);
  });
});
