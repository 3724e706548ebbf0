// kafkajs 2.2.4 filters aborted transactions assuming the broker lists them by first offset,
// and steps into at most one per record. The broker lists them in the order their markers were
// written, so with several producers writing one partition (every source task writes every
// repartition partition) an aborted transaction can be missed and its records delivered to a
// read_committed consumer, which is double counting after a failure. This replaces that one
// module with the Java consumer's rule (every aborted transaction whose first offset is reached
// is entered, in first-offset order) before kafkajs loads it. The package's index imports it
// first, so every Sluice process that reads through @sluice/kafka gets the fix; an app that
// imports kafkajs itself imports '@sluice/kafka' before it.
import { replaceKafkajsModule } from './kafkajs-module';

interface AbortedTransaction {
  firstOffset: string;
  producerId: string;
}

interface FetchedMessage {
  key: Buffer | null;
  offset: string;
  batchContext: { producerId: string; inTransaction: boolean };
  isControlRecord?: boolean;
}

const ABORT_MARKER_KEY = Buffer.from([0, 0, 0, 0]);

export function filterAbortedMessages({
  messages,
  abortedTransactions,
}: {
  messages: FetchedMessage[];
  abortedTransactions?: AbortedTransaction[];
}): FetchedMessage[] {
  if (!abortedTransactions || abortedTransactions.length === 0) return messages;
  const pending = [...abortedTransactions].sort((a, b) =>
    BigInt(a.firstOffset) < BigInt(b.firstOffset)
      ? -1
      : BigInt(a.firstOffset) > BigInt(b.firstOffset)
        ? 1
        : 0,
  );
  const aborted = new Set<string>();
  return messages.filter((message) => {
    const offset = BigInt(message.offset);
    while (pending.length > 0 && BigInt(pending[0]!.firstOffset) <= offset)
      aborted.add(String(pending.shift()!.producerId));
    const producerId = String(message.batchContext.producerId);
    if (
      message.key &&
      Buffer.from(message.key).equals(ABORT_MARKER_KEY) &&
      message.isControlRecord !== false
    ) {
      aborted.delete(producerId);
      return true;
    }
    return !(aborted.has(producerId) && message.batchContext.inTransaction);
  });
}

replaceKafkajsModule('consumer/filterAbortedMessages', 'consumer/batch', filterAbortedMessages);
