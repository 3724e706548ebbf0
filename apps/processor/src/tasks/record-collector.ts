// The records a task produces between two sends, per topic, cut into requests the broker takes.
import { placedPartition } from '@sluice/kafka';
import type { Message, TopicMessages } from 'kafkajs';

/**
 * kafkajs puts all of a request's records for one partition into one record batch, which the
 * broker refuses above `max.message.bytes` (1 MiB by default): a request carries well below that
 * for any one partition (string lengths count UTF-16 units, at most 3 UTF-8 bytes each).
 */
export const PARTITION_BYTES = 256 * 1024;

/**
 * What one request carries over all its partitions (a task's own producer's too, under
 * `exactly_once`, whose topics count as one partition each). A transaction's producer has one
 * request in flight at a time, so each costs a round trip in which no other record goes out:
 * cut at 256 KiB in all, the table join's sender was busy 78% of a run, and the join ran 1.02 to
 * 1.22 times as fast with 1 MiB in same-run pairs (README, Joins, session 31); 4 MiB gained no
 * more.
 */
export const REQUEST_BYTES = 1024 * 1024;

export interface DrainOptions {
  /**
   * How many partitions a topic has, as the producer's metadata says (kafkajs places a keyed
   * record by it, with KeyPartitioner): the records are then measured per partition. Unknown,
   * a topic's records count as if bound for one partition.
   */
  partitionsOf?: (topic: string) => number | undefined;
  requestBytes?: number;
  partitionBytes?: number;
}

export class RecordCollector {
  private readonly pending = new Map<string, Message[]>();
  private count = 0;

  /** A collector holding these records, in order. */
  static of(...topicMessages: TopicMessages[]): RecordCollector {
    const records = new RecordCollector();
    for (const { topic, messages } of topicMessages)
      for (const message of messages) records.add(topic, message);
    return records;
  }

  get isEmpty(): boolean {
    return this.pending.size === 0;
  }

  /** How many records wait. */
  get size(): number {
    return this.count;
  }

  add(topic: string, message: Message): void {
    let messages = this.pending.get(topic);
    if (!messages) {
      messages = [];
      this.pending.set(topic, messages);
    }
    messages.push(message);
    this.count += 1;
  }

  /**
   * Moves everything `other` collected behind what this one holds, topic by topic, in order;
   * `other` empties. A topic new here takes `other`'s array as it is, so no record is copied.
   */
  takeAll(other: RecordCollector): void {
    for (const [topic, messages] of other.pending) {
      const mine = this.pending.get(topic);
      if (mine === undefined) this.pending.set(topic, messages);
      else for (const message of messages) mine.push(message);
    }
    this.count += other.count;
    other.pending.clear();
    other.count = 0;
  }

  /**
   * Everything collected, in order per topic, as requests of at most about `requestBytes` in all
   * and `partitionBytes` per partition (a record larger alone goes alone); the collector empties.
   */
  drain(options: DrainOptions = {}): TopicMessages[][] {
    const {
      partitionsOf = () => undefined,
      requestBytes = REQUEST_BYTES,
      partitionBytes = PARTITION_BYTES,
    } = options;
    const requests: TopicMessages[][] = [];
    let request: TopicMessages[] = [];
    let bytes = 0;
    for (const [topic, messages] of this.pending) {
      const partitions = partitionsOf(topic) ?? 1;
      // This topic's bytes per partition in the request, and those of records kafkajs places
      // round robin, which could all land on any one.
      let perPartition = new Float64Array(partitions);
      let largest = 0;
      let unplaced = 0;
      let current: Message[] = [];
      request.push({ topic, messages: current });
      for (const message of messages) {
        const size = sizeOf(message.key) + sizeOf(message.value) + 64;
        const partition = placed(message, partitions);
        const there = partition === undefined ? largest : perPartition[partition]!;
        const full = bytes + size > requestBytes || there + unplaced + size > partitionBytes;
        if (full && bytes > 0) {
          requests.push(request);
          current = [];
          request = [{ topic, messages: current }];
          bytes = 0;
          perPartition = new Float64Array(partitions);
          largest = 0;
          unplaced = 0;
        }
        current.push(message);
        bytes += size;
        if (partition === undefined) unplaced += size;
        else largest = Math.max(largest, (perPartition[partition]! += size));
      }
    }
    requests.push(request);
    this.pending.clear();
    this.count = 0;
    return requests
      .map((topics) => topics.filter((t) => t.messages.length > 0))
      .filter((topics) => topics.length > 0);
  }

  clear(): void {
    this.pending.clear();
    this.count = 0;
  }
}

/** The partition KeyPartitioner gives the record among `partitions`; undefined: any of them. */
function placed(message: Message, partitions: number): number | undefined {
  const partition = placedPartition(message, partitions);
  return partition !== undefined && partition >= 0 && partition < partitions
    ? partition
    : undefined;
}

function sizeOf(value: Message['value'] | Message['key']): number {
  if (value === null || value === undefined) return 0;
  return value.length;
}
