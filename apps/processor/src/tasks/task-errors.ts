// What a task's failure means for the partition (Kafka Streams draws the same lines):
// - task-migrated: the task's producer is no longer this partition's (another owner fenced
//   it, or the partition moved while the task opened), or the group coordinator refused its
//   offset commit for a generation a rebalance has ended. Nothing is wrong with the data: the
//   task is closed at once and, if the partition is still ours, opened again (fencing anew).
// - retriable: the broker could not answer as needed for now (a coordinator moving, a leader
//   election, a transaction still open, the broker away). Opened again after a back-off.
// - fatal: anything else (a bug, a record the code cannot handle). Also opened again after a
//   back-off, so one bad partition never stops the others, and logged as an error.
export type TaskErrorKind = 'task-migrated' | 'retriable' | 'fatal';

/** Broker answers that mean another producer with this transactional id took over. */
const FENCED = new Set([
  'INVALID_PRODUCER_EPOCH',
  'PRODUCER_FENCED',
  'INVALID_PRODUCER_ID_MAPPING',
  'UNKNOWN_PRODUCER_ID',
]);

/**
 * Group coordinator answers to a transactional offset commit that names a generation or member
 * the group has moved on from (KIP-447): the partition may be another member's now.
 */
const GROUP_FENCED = new Set(['ILLEGAL_GENERATION', 'UNKNOWN_MEMBER_ID', 'FENCED_INSTANCE_ID']);

/** kafkajs errors about the connection rather than the request. */
const CONNECTION_ERRORS = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSGroupCoordinatorNotFound',
  'KafkaJSNoBrokerAvailableError',
]);

/** The partition moved to another replica while its task was being opened. */
export class TaskMigratedError extends Error {
  override readonly name: string = 'TaskMigratedError';
}

interface ErrorLike {
  name?: unknown;
  type?: unknown;
  retriable?: unknown;
  cause?: unknown;
  originalError?: unknown;
}

/** The error and what it wraps (kafkajs wraps the last error when its retries run out). */
function chain(error: unknown): ErrorLike[] {
  const links: ErrorLike[] = [];
  let current = error;
  while (current !== null && typeof current === 'object' && links.length < 8) {
    const link = current as ErrorLike;
    links.push(link);
    current = link.originalError ?? link.cause;
  }
  return links;
}

export function classifyTaskError(error: unknown): TaskErrorKind {
  const links = chain(error);
  if (
    links.some(
      (e) =>
        e instanceof TaskMigratedError ||
        FENCED.has(String(e.type)) ||
        GROUP_FENCED.has(String(e.type)),
    )
  )
    return 'task-migrated';
  if (links.some((e) => e.retriable === true || CONNECTION_ERRORS.has(String(e.name))))
    return 'retriable';
  return 'fatal';
}
