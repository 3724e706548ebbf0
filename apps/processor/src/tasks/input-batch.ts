// What a task reads of a kafkajs batch, and which of its records are new to the task.

/** The part of a kafkajs batch a task reads. */
export interface InputBatch {
  messages: InputMessage[];
  firstOffset(): string | null;
  lastOffset(): string;
  offsetLag(): string;
}

export interface InputMessage {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  timestamp: string;
}

/**
 * The batch's messages at or after `position` (the task's next offset; `undefined`: all of
 * them): kafkajs may deliver some again.
 */
export function unprocessed(batch: InputBatch, position: string | undefined): InputMessage[] {
  const first = batch.firstOffset();
  if (first === null || position === undefined) return batch.messages;
  const next = BigInt(position);
  if (BigInt(first) >= next) return batch.messages;
  return batch.messages.filter((message) => BigInt(message.offset) >= next);
}

/**
 * The task's next offset once `batch` is handled: after its last record, never backwards (a
 * batch kafkajs delivers again must not move the position before records the state holds).
 */
export function positionAfter(batch: InputBatch, position: string | undefined): string {
  const next = BigInt(batch.lastOffset()) + 1n;
  return position === undefined || next > BigInt(position) ? next.toString() : position;
}
