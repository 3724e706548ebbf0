// What a task writes its transactions with (docs/design.md §5, PROCESSING_GUARANTEE): a producer
// of its own (TaskProducer, `exactly_once`: a transactional id per input partition) or its share
// of the replica's one producer (ReplicaTaskProducer, `exactly_once_v2`). Calls queue behind
// the task and return at once; `idle` waits for them.
import type { RecordCollector } from './record-collector';
import type { OffsetToCommit } from './task-producer';

export interface TaskTransactions {
  /** The transactional id the task's writes go out under. */
  readonly id: string;
  /** Why the task's transactions cannot go on, if they cannot: the task is replaced. */
  readonly error: unknown;
  /** Calls queued and not finished yet (the task slows its input down when this grows). */
  readonly backlog: number;
  /** Settles what came before and makes the producer ready; the task's recovery starts here. */
  fence(): Promise<void>;
  /** Takes the records collected into the open transaction (`records` empties). */
  send(records: RecordCollector): void;
  /** Queues the commit, with `offset` in it; `onCommitted` runs once the coordinator accepts. */
  commit(offset: OffsetToCommit | undefined, onCommitted: () => void): void;
  /** Resolves once every call queued so far has finished, whether or not it succeeded. */
  idle(): Promise<void>;
  /** The task is done: what it wrote and did not commit is never read committed. */
  close(): Promise<void>;
}
