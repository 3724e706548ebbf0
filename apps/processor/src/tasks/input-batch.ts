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
