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
 * The batch's messages before `position` (the task's next offset) and at or after it
 * (`undefined`: all of them after): the ones before are read again, after a restore that asked
 * for it or because kafkajs delivered them again.
 */
export function splitAt(
  batch: InputBatch,
  position: string | undefined,
): [before: InputMessage[], after: InputMessage[]] {
  const first = batch.firstOffset();
  if (first === null || position === undefined) return [[], batch.messages];
  const next = BigInt(position);
  if (BigInt(first) >= next) return [[], batch.messages];
  const at = batch.messages.findIndex((message) => BigInt(message.offset) >= next);
  return at < 0 ? [batch.messages, []] : [batch.messages.slice(0, at), batch.messages.slice(at)];
}

/**
 * The task's next offset once `batch` is handled: after its last record, never backwards (a
 * batch kafkajs delivers again must not move the position before records the state holds).
 */
export function positionAfter(batch: InputBatch, position: string | undefined): string {
  const next = BigInt(batch.lastOffset()) + 1n;
  return position === undefined || next > BigInt(position) ? next.toString() : position;
}
