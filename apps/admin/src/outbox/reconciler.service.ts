import { Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { readTopicToEnd } from '@sluice/kafka';
import type { StoredPipeline } from '@sluice/contracts';

import { DatabaseService } from '../database/database.service';
import { OutboxRow, PipelineRow } from '../database/entities';
import { KafkaService } from '../kafka/kafka.service';
import { OutboxRelayService } from './outbox-relay.service';
import { enqueueOutbox } from '../pipelines/pipelines.service';
import { storedPipelineOf } from '../pipelines/stored-pipeline';

/**
 * At start, makes `sluice.pipelines` agree with the table (docs/design.md §6): every current definition
 * is on the topic at its version and reset generation, every deleted or unknown one has a
 * tombstone. Differences are queued in the outbox, so the relay publishes them in order. Retries
 * until PostgreSQL and Kafka are both reachable.
 */
@Injectable()
export class ReconcilerService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Reconciler');
  private stopped = false;
  private done: Promise<void> | undefined;

  constructor(
    private readonly database: DatabaseService,
    private readonly kafka: KafkaService,
    private readonly relay: OutboxRelayService,
  ) {}

  onApplicationBootstrap(): void {
    this.done = this.runUntilDone();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    await this.done;
  }

  private async runUntilDone(): Promise<void> {
    for (let attempt = 1; !this.stopped; attempt++) {
      try {
        await this.database.connect();
        const queued = await this.reconcile();
        this.logger.log(
          queued === 0
            ? 'the pipelines topic matches the table'
            : `queued ${queued} record(s) to bring the pipelines topic up to date`,
        );
        if (queued > 0) this.relay.wake();
        return;
      } catch (error) {
        if (attempt === 1 || attempt % 10 === 0)
          this.logger.warn(`cannot reconcile yet (${(error as Error).message}); retrying`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(10_000, 500 * attempt)));
      }
    }
  }

  /** Returns how many records it queued. */
  async reconcile(): Promise<number> {
    await this.kafka.ensureInternalTopics();
    const onTopic = new Map<string, Pick<StoredPipeline, 'version' | 'reset_generation'> | null>();
    await readTopicToEnd(
      this.kafka.kafka,
      this.kafka.topics.pipelines,
      ({ key, value }) => {
        if (key === null) return;
        onTopic.set(key, value === null ? null : (JSON.parse(value) as StoredPipeline));
      },
      { groupOwner: this.kafka.groupOwner },
    );
    return this.database.transaction(async (manager) => {
      const rows = await manager.getRepository(PipelineRow).find();
      const pending = new Set(
        (
          await manager
            .getRepository(OutboxRow)
            .createQueryBuilder('o')
            .select('o.pipeline_id', 'id')
            .where('o.sent_at IS NULL AND o.refused_at IS NULL')
            .getRawMany<{ id: string }>()
        ).map((r) => r.id),
      );
      // A version Kafka refused for good is not queued again at every start: only a newer one.
      const refused = new Set(
        (
          await manager.query(
            `SELECT pipeline_id, payload->>'version' AS version, payload->>'reset_generation' AS generation
             FROM outbox WHERE refused_at IS NOT NULL AND payload IS NOT NULL`,
          )
        ).map(
          (r: { pipeline_id: string; version: string; generation: string }) =>
            `${r.pipeline_id}/${r.version}/${r.generation}`,
        ),
      );
      const queue: Array<Pick<OutboxRow, 'pipeline_id' | 'payload'>> = [];
      const known = new Set<string>();
      for (const row of rows) {
        known.add(row.id);
        if (pending.has(row.id)) continue;
        const published = onTopic.get(row.id);
        if (row.deleted_at !== null) {
          if (published) queue.push({ pipeline_id: row.id, payload: null });
        } else if (
          (!published ||
            published.version !== row.version ||
            published.reset_generation !== row.reset_generation) &&
          !refused.has(`${row.id}/${row.version}/${row.reset_generation}`)
        ) {
          queue.push({ pipeline_id: row.id, payload: storedPipelineOf(row) });
        }
      }
      for (const [id, published] of onTopic) {
        if (!known.has(id) && published !== null) queue.push({ pipeline_id: id, payload: null });
      }
      for (const entry of queue) await enqueueOutbox(manager, entry.pipeline_id, entry.payload);
      return queue.length;
    });
  }
}
