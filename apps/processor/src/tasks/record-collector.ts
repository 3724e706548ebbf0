// The records a task produces between two sends, per topic, cut into requests the broker takes.
import type { Message, TopicMessages } from 'kafkajs';

/**
 * kafkajs puts all of a request's records for one partition into one record batch, which the
 * broker refuses above `max.message.bytes` (1 MiB by default): requests are cut well below that
 * (string lengths count UTF-16 units, at most 3 UTF-8 bytes each).
 */
export const REQUEST_BYTES = 256 * 1024;

export class RecordCollector {
  private readonly pending = new Map<string, Message[]>();
  private count = 0;

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

  /** Everything collected, as requests of at most about REQUEST_BYTES; the collector empties. */
  drain(requestBytes = REQUEST_BYTES): TopicMessages[][] {
    const requests: TopicMessages[][] = [];
    let request: TopicMessages[] = [];
    let bytes = 0;
    for (const [topic, messages] of this.pending) {
      let current: Message[] = [];
      request.push({ topic, messages: current });
      for (const message of messages) {
        const size = sizeOf(message.key) + sizeOf(message.value) + 64;
        if (bytes + size > requestBytes && bytes > 0) {
          requests.push(request);
          current = [];
          request = [{ topic, messages: current }];
          bytes = 0;
        }
        current.push(message);
        bytes += size;
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

function sizeOf(value: Message['value'] | Message['key']): number {
  if (value === null || value === undefined) return 0;
  return value.length;
}
