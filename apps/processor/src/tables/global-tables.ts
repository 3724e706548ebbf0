// Enrich's lookup tables (docs/design.md §2): each is a compacted topic of JSON records keyed by the
// lookup key, read in full by every replica and kept current, like a Kafka Streams GlobalKTable.
import type { Kafka } from 'kafkajs';
import type { Logger } from 'pino';

import type { LookupTables } from '@sluice/operators';

import { TopicFollower } from './topic-follower';

type Row = Readonly<Record<string, unknown>>;

export class GlobalTables implements LookupTables {
  private readonly rows = new Map<string, Map<string, Row>>();
  private readonly followers = new Map<string, { follower: TopicFollower; ready: Promise<void> }>();

  /** `groupOwner`: the replica's CONSUMER_GROUP, which the tables' scratch groups are under. */
  constructor(
    private readonly kafka: Kafka,
    private readonly logger: Logger,
    private readonly groupOwner: string,
  ) {}

  get(source: string, key: string): Row | undefined {
    return this.rows.get(source)?.get(key);
  }

  /** Starts following `topic` unless already followed; resolves once it is fully loaded. */
  load(topic: string): Promise<void> {
    const known = this.followers.get(topic);
    if (known) return known.ready;
    const table = new Map<string, Row>();
    this.rows.set(topic, table);
    const follower = new TopicFollower(
      this.kafka,
      topic,
      (key, value) => {
        const row = value === null ? undefined : parseRow(value);
        if (row === undefined) {
          table.delete(key);
          if (value !== null)
            this.logger.warn({ table: topic, key }, 'lookup record is not a JSON object; ignored');
        } else {
          table.set(key, row);
        }
      },
      this.groupOwner,
    );
    const started = Date.now();
    const ready = follower.start().then(() => {
      this.logger.info(
        { table: topic, rows: table.size, ms: Date.now() - started },
        'lookup table loaded',
      );
    });
    this.followers.set(topic, { follower, ready });
    return ready;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.followers.values()].map(({ follower }) => follower.stop()));
    this.followers.clear();
  }
}

function parseRow(value: string): Row | undefined {
  try {
    const parsed: unknown = JSON.parse(value);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Row)
      : undefined;
  } catch {
    return undefined;
  }
}
