import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';

import { outputTopicsOf } from '@sluice/contracts';
import { isPermanentRefusal, onTopics, refusalReason, withDenialsNamed } from '@sluice/kafka';
import type { EntityManager } from 'typeorm';

import { DatabaseService } from '../database/database.service';
import { OutboxRow } from '../database/entities';
import { KafkaService } from '../kafka/kafka.service';
import { MetricsService } from '../metrics/metrics.service';

// One relay at a time across admin replicas: two would interleave versions on the topic.
const RELAY_LOCK = 7_405_112_001;
const BATCH = 200;
const IDLE_POLL_MS = 500;
const MAX_BACKOFF_MS = 10_000;

/** An outbox record Kafka refused for good, whose pipeline has sent nothing newer since. */
export interface RefusedRecord {
  id: string;
  pipeline_id: string;
  error: string | null;
  refused_at: string;
}

/**
 * Publishes outbox rows to `sluice.pipelines` in id order and marks them sent, inside one
 * PostgreSQL transaction holding an advisory lock. A row is marked sent only after Kafka
 * acknowledged it, so a crash anywhere means a re-send (harmless on a compacted topic: the same
 * key and value), never a loss. While Kafka is away it retries with exponential backoff. A row
 * Kafka refuses for a reason no retry changes (its output topic collides with an existing one,
 * it is over the size limit) is marked refused and passed over, so it cannot block the rows
 * after it; it stays listed (refused()) until a newer record of its pipeline is sent.
 */
@Injectable()
export class OutboxRelayService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('OutboxRelay');
  private stopped = false;
  private wakeUp: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly database: DatabaseService,
    private readonly kafka: KafkaService,
    private readonly metrics: MetricsService,
  ) {}

  onApplicationBootstrap(): void {
    this.loop = this.run();
  }

  /** Set by a refusal: the gauge of refused records is counted again after the batch. */
  private refusedSince = true;

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop;
  }

  /** A change was committed: publish now rather than at the next poll. */
  wake(): void {
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    let backoff = 0;
    let failures = 0;
    while (!this.stopped) {
      let published = 0;
      try {
        await this.database.connect();
        const outcome = await this.publishBatch();
        if (this.refusedSince) {
          this.refusedSince = false;
          await this.refused().catch(() => (this.refusedSince = true));
        }
        if (outcome.error) throw outcome.error;
        published = outcome.published;
        if (failures > 0) this.logger.log(`publishing again after ${failures} failed attempt(s)`);
        backoff = 0;
        failures = 0;
      } catch (error) {
        failures += 1;
        backoff = Math.min(MAX_BACKOFF_MS, backoff === 0 ? 250 : backoff * 2);
        if (failures === 1 || failures % 10 === 0) {
          this.logger.warn(
            `cannot publish definitions yet (${(error as Error).message}); retrying in ${backoff} ms`,
          );
        }
      }
      if (published < BATCH || backoff > 0) await this.sleep(backoff || IDLE_POLL_MS);
    }
  }

  /** Publishes up to one batch; says how many rows it published, or why it could not. */
  async publishBatch(): Promise<{ published: number; error?: Error }> {
    return this.database.transaction(async (manager) => {
      const [{ locked }] = await manager.query(`SELECT pg_try_advisory_xact_lock($1) AS locked`, [
        RELAY_LOCK,
      ]);
      if (!locked) return { published: 0 };
      let rows = await manager
        .getRepository(OutboxRow)
        .createQueryBuilder('o')
        .where('o.sent_at IS NULL AND o.refused_at IS NULL')
        .orderBy('o.id', 'ASC')
        .limit(BATCH)
        .getMany();
      this.metrics.outboxPending.set(rows.length);
      if (rows.length === 0) return { published: 0 };
      let sendable: OutboxRow[];
      try {
        await this.kafka.ensureInternalTopics();
        sendable = await this.withOutputTopics(manager, rows);
        sendable = await this.send(manager, sendable);
      } catch (error) {
        // Committed with the transaction (the rows stay unsent): operators see why in the table.
        await manager.query(
          `UPDATE outbox SET attempts = attempts + 1, last_error = $2 WHERE id = ANY($1::bigint[]) AND refused_at IS NULL`,
          [rows.map((row) => row.id), (error as Error).message.slice(0, 500)],
        );
        return { published: 0, error: error as Error };
      }
      rows = sendable;
      await manager.query(`UPDATE outbox SET sent_at = now() WHERE id = ANY($1::bigint[])`, [
        rows.map((row) => row.id),
      ]);
      this.metrics.outboxPublished.inc(rows.length);
      return { published: rows.length };
    });
  }

  /** The refused records whose pipeline has sent nothing newer (for /health/ready). */
  async refused(limit = 20): Promise<RefusedRecord[]> {
    // Refused, and not superseded by a newer record of the same pipeline that was sent.
    const standing = `FROM outbox o WHERE o.refused_at IS NOT NULL AND NOT EXISTS (
      SELECT 1 FROM outbox n WHERE n.pipeline_id = o.pipeline_id AND n.id > o.id AND n.sent_at IS NOT NULL)`;
    const [rows, [{ count }]] = await this.database.query((manager) =>
      Promise.all([
        manager.query(
          `SELECT o.id, o.pipeline_id, o.last_error, o.refused_at ${standing} ORDER BY o.id DESC LIMIT $1`,
          [limit],
        ) as Promise<
          Array<{ id: string; pipeline_id: string; last_error: string | null; refused_at: Date }>
        >,
        manager.query(`SELECT count(*)::int AS count ${standing}`) as Promise<[{ count: number }]>,
      ]),
    );
    this.metrics.outboxRefused.set(count);
    return rows.map((row) => ({
      id: String(row.id),
      pipeline_id: row.pipeline_id,
      error: row.last_error,
      refused_at: new Date(row.refused_at).toISOString(),
    }));
  }

  /** Makes each row's output topics; a row whose topics Kafka refuses is refused itself. */
  private async withOutputTopics(manager: EntityManager, rows: OutboxRow[]): Promise<OutboxRow[]> {
    const sendable: OutboxRow[] = [];
    for (const row of rows) {
      try {
        if (row.payload) await this.kafka.ensureOutputTopics(outputTopicsOf(row.payload));
        sendable.push(row);
      } catch (error) {
        if (!isPermanentRefusal(error)) throw error;
        await this.refuse(manager, row, `its output topics: ${refusalReason(error)}`);
      }
    }
    return sendable;
  }

  /**
   * Sends `rows` in one request; if Kafka refuses it for good, one by one, so that only the
   * rows it refuses are refused. Returns the rows sent.
   */
  private async send(manager: EntityManager, rows: OutboxRow[]): Promise<OutboxRow[]> {
    if (rows.length === 0) return rows;
    const producer = await this.kafka.producer();
    const topic = this.kafka.topics.pipelines;
    const sendRows = (batch: OutboxRow[]) =>
      withDenialsNamed({ topic: onTopics('Write', [topic]) }, () =>
        producer.send({
          topic,
          acks: -1,
          messages: batch.map((row) => ({
            key: row.pipeline_id,
            value: row.payload === null ? null : JSON.stringify(row.payload),
          })),
        }),
      );
    try {
      await sendRows(rows);
      return rows;
    } catch (error) {
      if (!isPermanentRefusal(error)) throw error;
    }
    const sent: OutboxRow[] = [];
    for (const row of rows) {
      try {
        await sendRows([row]);
        sent.push(row);
      } catch (error) {
        if (!isPermanentRefusal(error)) throw error;
        await this.refuse(manager, row, refusalReason(error));
      }
    }
    return sent;
  }

  private async refuse(manager: EntityManager, row: OutboxRow, reason: string): Promise<void> {
    this.refusedSince = true;
    this.logger.error(
      `Kafka refused outbox record ${row.id} of pipeline ${row.pipeline_id} for good (${reason}); it is passed over`,
    );
    await manager.query(
      `UPDATE outbox SET refused_at = now(), attempts = attempts + 1, last_error = $2 WHERE id = $1`,
      [row.id, `refused: ${reason}`.slice(0, 500)],
    );
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = done;
    });
  }
}
