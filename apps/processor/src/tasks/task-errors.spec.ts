import { OpenTransactionError } from '@sluice/kafka';

import { classifyTaskError, TaskMigratedError } from './task-errors';

/** Errors shaped as kafkajs 2.2.4 makes them. */
const protocolError = (type: string, retriable: boolean) =>
  Object.assign(new Error(type), { name: 'KafkaJSProtocolError', type, retriable });
const retriesExceeded = (cause: Error) =>
  Object.assign(new Error(cause.message), {
    name: 'KafkaJSNumberOfRetriesExceeded',
    retriable: false,
    originalError: cause,
  });

describe('classifyTaskError', () => {
  it('calls a fenced producer task-migrated, however deep kafkajs wrapped it', () => {
    expect(classifyTaskError(protocolError('INVALID_PRODUCER_EPOCH', false))).toBe('task-migrated');
    expect(classifyTaskError(protocolError('PRODUCER_FENCED', false))).toBe('task-migrated');
    expect(classifyTaskError(retriesExceeded(protocolError('INVALID_PRODUCER_EPOCH', false)))).toBe(
      'task-migrated',
    );
    expect(classifyTaskError(new TaskMigratedError('events/3 was revoked'))).toBe('task-migrated');
  });

  it('calls an offset commit refused for an ended generation or an unknown member task-migrated', () => {
    expect(classifyTaskError(protocolError('ILLEGAL_GENERATION', false))).toBe('task-migrated');
    expect(classifyTaskError(retriesExceeded(protocolError('UNKNOWN_MEMBER_ID', false)))).toBe(
      'task-migrated',
    );
    expect(classifyTaskError(protocolError('FENCED_INSTANCE_ID', false))).toBe('task-migrated');
  });

  it('calls what the broker may answer differently later retriable', () => {
    expect(classifyTaskError(protocolError('CONCURRENT_TRANSACTIONS', true))).toBe('retriable');
    expect(
      classifyTaskError(retriesExceeded(protocolError('NOT_LEADER_FOR_PARTITION', true))),
    ).toBe('retriable');
    const closed = Object.assign(new Error('Closed connection'), {
      name: 'KafkaJSConnectionClosedError',
    });
    expect(classifyTaskError(closed)).toBe('retriable');
    expect(
      classifyTaskError(
        new OpenTransactionError('sluice.p.changelog', { partition: 0, high: '9', stable: '4' }),
      ),
    ).toBe('retriable');
  });

  it('calls everything else fatal', () => {
    expect(classifyTaskError(new TypeError('x is undefined'))).toBe('fatal');
    expect(classifyTaskError(protocolError('TOPIC_AUTHORIZATION_FAILED', false))).toBe('fatal');
    expect(classifyTaskError('a string')).toBe('fatal');
  });
});
