import { Inject, Injectable, Logger } from '@nestjs/common';
import type { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type {
  PipelineStatsView,
  ProcessorStats,
  ProcessorStatsView,
  StoredPipeline,
} from '@sluice/contracts';
import type { Consumer } from 'kafkajs';

import { namingDenied, onTopics, scratchGroupId } from '@sluice/kafka';
import type { AskedFor } from '@sluice/kafka';

import { ADMIN_CONFIG } from '../config/admin-config';
import type { AdminConfig } from '../config/admin-config';
import { KafkaService } from '../kafka/kafka.service';

/**
 * Follows `sluice.stats`, where every processor replica reports its counters per pipeline. The
 * latest report per (replica, pipeline) is kept; a replica silent for SLUICE_STATS_STALE_SECONDS
 * is listed as stale and no longer summed, and reports from before a reset are ignored.
 */
@Injectable()
export class StatsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Stats');
  private readonly latest = new Map<string, ProcessorStats>();
  private consumer: Consumer | undefined;
  private readonly groupId: string;
  private stopped = false;
  private started: Promise<void> | undefined;

  constructor(
    private readonly kafka: KafkaService,
    @Inject(ADMIN_CONFIG) private readonly config: AdminConfig,
  ) {
    this.groupId = scratchGroupId(kafka.groupOwner, 'stats');
  }

  onApplicationBootstrap(): void {
    this.started = this.follow();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    await this.started;
    if (this.consumer) {
      await this.consumer.disconnect().catch(() => undefined);
      // A client of its own: the shared one may already be closed at this point of shutdown.
      const admin = this.kafka.kafka.admin();
      await admin
        .connect()
        .then(() => admin.deleteGroups([this.groupId]))
        .catch(() => undefined)
        .finally(() => admin.disconnect());
    }
  }

  private async follow(): Promise<void> {
    for (let attempt = 1; !this.stopped; attempt++) {
      try {
        await this.kafka.ensureInternalTopics();
        const consumer = this.kafka.kafka.consumer({ groupId: this.groupId, maxWaitTimeInMs: 500 });
        await consumer.connect();
        await consumer.subscribe({ topic: this.kafka.topics.stats, fromBeginning: true });
        await consumer.run({
          eachMessage: async ({ message }) => {
            const key = message.key?.toString('utf8');
            if (!key) return;
            if (message.value === null) {
              this.latest.delete(key);
              return;
            }
            try {
              this.latest.set(key, JSON.parse(message.value.toString('utf8')) as ProcessorStats);
            } catch {
              this.logger.warn(`ignoring a stats record that is not JSON (key ${key})`);
            }
          },
        });
        this.consumer = consumer;
        return;
      } catch (error) {
        if (attempt === 1 || attempt % 10 === 0)
          this.logger.warn(
            `cannot follow the stats topic yet (${(namingDenied(error, this.asked()) as Error).message}); retrying`,
          );
        await new Promise((resolve) => setTimeout(resolve, Math.min(10_000, 500 * attempt)));
      }
    }
  }

  /** What following the stats needs granted, named when Kafka refuses it. */
  private asked(): AskedFor {
    return {
      group: `Read and Delete on group ${this.groupId} (a prefixed grant on ${this.kafka.groupOwner}.)`,
      topic: onTopics('Read and Describe', [this.kafka.topics.stats]),
    };
  }

  statsFor(
    pipeline: Pick<StoredPipeline, 'id' | 'reset_generation'>,
    now = Date.now(),
  ): PipelineStatsView {
    const processors: ProcessorStatsView[] = [];
    for (const report of this.latest.values()) {
      if (
        report.pipeline_id !== pipeline.id ||
        report.reset_generation !== pipeline.reset_generation
      )
        continue;
      processors.push({
        ...report,
        stale: now - Date.parse(report.reported_at) > this.config.statsStaleMs,
      });
    }
    processors.sort((a, b) => a.processor_id.localeCompare(b.processor_id));
    const live = processors.filter((p) => !p.stale);
    const sum = (field: keyof ProcessorStats) =>
      live.reduce((total, p) => total + (p[field] as number), 0);
    const lastProcessed =
      live
        .map((p) => p.last_processed)
        .filter((t): t is string => t !== null)
        .sort()
        .at(-1) ?? null;
    const failed = live.find((p) => p.state === 'failed');
    return {
      pipeline_id: pipeline.id,
      state: failed ? 'failed' : live.length > 0 ? 'running' : 'unknown',
      error: failed ? `${failed.processor_id}: ${failed.error ?? 'unknown error'}` : null,
      events_processed: sum('events_processed'),
      events_filtered: sum('events_filtered'),
      events_failed: sum('events_failed'),
      last_processed: lastProcessed,
      results_emitted: sum('results_emitted'),
      late_events: sum('late_events'),
      dead_lettered: sum('dead_lettered'),
      lag: sum('lag'),
      processors,
    };
  }
}
