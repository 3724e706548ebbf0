// exactly_once_v2's transactions of one replica (docs/design.md §5): REPLICA_TRANSACTIONS of
// them (one by default), each with a producer of its own, and every task in one of them, chosen
// by its partition so that a task reopened joins the same one. A producer sends and commits one
// request at a time, so with one transaction every task's records wait behind each commit;
// several let one commit while the others send, as Kafka Streams' stream threads each have
// their own, at the price of a commit and its check each. A failure aborts only the
// transaction it is in, and replaces only its tasks.
import type { ReplicaTaskProducer, ReplicaTransactionOptions } from './replica-transaction';
import { ReplicaTransaction, replicaTransactionalId } from './replica-transaction';

export class ReplicaTransactions {
  private readonly transactions: ReplicaTransaction[];

  constructor(
    options: Omit<ReplicaTransactionOptions, 'id' | 'journal'> & {
      group: string;
      processorId: string;
      /** REPLICA_TRANSACTIONS. */
      count: number;
    },
  ) {
    const { group, processorId, count, ...shared } = options;
    this.transactions = Array.from(
      { length: count },
      (_, index) =>
        new ReplicaTransaction({
          ...shared,
          id: replicaTransactionalId(group, processorId, index),
        }),
    );
  }

  /** The share of the task `key` (`topic/partition`) in its transaction. */
  forTask(key: string, prepareCommit: () => void): ReplicaTaskProducer {
    return this.transactions[indexOf(key, this.transactions.length)]!.forTask(key, prepareCommit);
  }

  /** The replica stops: what is open is aborted. */
  async close(): Promise<void> {
    await Promise.all(this.transactions.map((transaction) => transaction.close()));
  }
}

/** A stable spread of task keys over `count` transactions (FNV-1a). */
export function indexOf(key: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % count;
}
