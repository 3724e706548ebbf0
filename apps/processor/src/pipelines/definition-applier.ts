// Applies definition changes from `sluice.pipelines` to the pipelines this replica runs, one at
// a time, in log order: a create or update first makes the topics the pipeline writes and loads
// the lookup tables it reads, then takes effect; the topics the group reads are re-derived.
import type { Admin } from 'kafkajs';
import type { Logger } from 'pino';

import { ensureTopics } from '@sluice/kafka';
import type { TopicSpec } from '@sluice/kafka';
import { resetCounters } from '@sluice/operators';

import type { RegistryChange } from '../registry/definition-registry';
import { FAILURE_BACKOFF, untilSucceeds } from '../support/backoff';
import type { GlobalTables } from '../tables/global-tables';
import { activePipeline } from './active-pipeline';
import type { ActivePipeline } from './active-pipeline';
import type { PipelineSet } from './pipeline-set';

export interface DefinitionApplierOptions {
  admin: Admin;
  pipelines: PipelineSet;
  tables: GlobalTables;
  logger: Logger;
  topicPrefix: string;
  /** Partitions of the topics the processor creates (its source topics' count). */
  partitions: () => number;
  /** After every change that took effect: the topics the group reads may have changed. */
  onApplied: () => Promise<void>;
  stopped: () => boolean;
}

export class DefinitionApplier {
  private changes: Promise<void> = Promise.resolve();

  constructor(private readonly options: DefinitionApplierOptions) {}

  /** Resolves once every change enqueued so far has been applied (or given up at stop). */
  settled(): Promise<void> {
    return this.changes;
  }

  /**
   * Changes apply one at a time, in log order, each until it succeeds: a replica that skipped
   * one would run without a pipeline its peers run (and lose that pipeline's share of events).
   */
  enqueue(change: RegistryChange): void {
    const { logger } = this.options;
    this.changes = this.changes.then(() =>
      untilSucceeds(() => this.apply(change), {
        backoff: FAILURE_BACKOFF,
        stopped: this.options.stopped,
        onError: (error, attempt, retryInMs) =>
          logger.error(
            { err: error, pipeline_id: change.id, attempt, retry_in_ms: retryInMs },
            'applying a definition failed; retrying',
          ),
      }).catch(() => undefined),
    );
  }

  private async apply(change: RegistryChange): Promise<void> {
    const { pipelines, logger } = this.options;
    if (change.kind === 'ignored') {
      logger.warn({ pipeline_id: change.id, reason: change.reason }, 'definition ignored');
      return;
    }
    if (change.kind === 'deleted') {
      pipelines.delete(change.id);
      logger.info({ pipeline_id: change.id }, 'pipeline deleted');
    } else {
      const { stored, compiled } = change.pipeline;
      const partitions = this.options.partitions();
      for (const operator of stored.operators) {
        if (operator.type !== 'enrich') continue;
        // A table nobody has written yet is an empty table, not a failed pipeline: enrich
        // misses until its rows arrive (a Kafka Streams GlobalKTable would refuse to start).
        await ensureTopics(this.options.admin, [
          { topic: operator.source, numPartitions: partitions, compacted: true },
        ]);
        await this.options.tables.load(operator.source);
      }
      const next = activePipeline(
        stored,
        compiled,
        this.options.topicPrefix,
        partitions,
        pipelines.get(change.id)?.counters,
      );
      if (change.kind === 'reset') resetCounters(next.counters);
      await this.ensurePipelineTopics(next, partitions);
      pipelines.set(next);
      logger.info(
        { pipeline_id: change.id, change: change.kind, version: stored.version, epoch: next.epoch },
        `pipeline ${change.kind}`,
      );
    }
    await this.options.onApplied();
  }

  private async ensurePipelineTopics(pipeline: ActivePipeline, partitions: number) {
    const { topics } = pipeline;
    const specs: TopicSpec[] = [
      { topic: topics.output, numPartitions: partitions },
      { topic: topics.late, numPartitions: partitions },
    ];
    if (topics.repartition && topics.changelog) {
      specs.push(
        { topic: topics.repartition, numPartitions: partitions },
        { topic: topics.changelog, numPartitions: partitions, compacted: true },
      );
    }
    await ensureTopics(this.options.admin, specs);
  }
}
