// Applies definition changes from `sluice.pipelines` to the pipelines this replica runs. A
// create or update first makes the topics the pipeline writes and loads the lookup tables it
// reads, then takes effect; the topics the group reads are re-derived. Each pipeline's changes
// apply in log order, and only its latest one matters. A change that cannot be applied (its
// topics cannot be made, a lookup table cannot be read, it breaks this replica's rules) parks
// that pipeline alone: it is reported failed with the reason (stats), retried with back-off
// unless only a newer definition can mend it, and every other pipeline and change goes on.
// While a change is retried, the pipeline's earlier definition, if it had one, keeps running; a
// definition that breaks this replica's rules stops the pipeline until a newer one.
import type { Admin } from 'kafkajs';
import type { Logger } from 'pino';

import { ensureTopics, isPermanentRefusal, refusalReason } from '@sluice/kafka';
import { resetCounters } from '@sluice/operators';

import type { RegistryChange } from '../registry/definition-registry';
import { backoffDelay, FAILURE_BACKOFF } from '../support/backoff';
import type { GlobalTables } from '../tables/global-tables';
import { activePipeline } from './active-pipeline';
import { ensurePipelineTopics, sourcePartitionsOf, startsOf } from './pipeline-topics';
import type { PipelineSet } from './pipeline-set';

export interface DefinitionApplierOptions {
  admin: Admin;
  pipelines: PipelineSet;
  tables: GlobalTables;
  logger: Logger;
  topicPrefix: string;
  /** After every change that took effect: the topics the group reads may have changed. */
  onApplied: () => Promise<void>;
}

/** A pipeline whose latest definition this replica could not apply. */
export interface ParkedPipeline {
  id: string;
  version: number;
  reset_generation: number;
  error: string;
  attempts: number;
}

type Applicable = Exclude<RegistryChange, { kind: 'ignored' } | { kind: 'elsewhere' }>;

export class DefinitionApplier {
  /** Each pipeline's latest change not applied yet. */
  private readonly pending = new Map<string, Applicable>();
  /** A reset superseded before it applied still resets the counters. */
  private readonly resetPending = new Set<string>();
  private readonly parked = new Map<string, ParkedPipeline>();
  private readonly retries = new Map<string, NodeJS.Timeout>();
  private readonly running = new Map<string, Promise<void>>();
  private stopped = false;

  constructor(private readonly options: DefinitionApplierOptions) {}

  /** The pipelines this replica could not apply, for its stats. */
  failures(): ParkedPipeline[] {
    return [...this.parked.values()];
  }

  /** Resolves once every change enqueued so far has been tried at least once. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running.values());
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.retries.values()) clearTimeout(timer);
    this.retries.clear();
  }

  enqueue(change: RegistryChange): void {
    if (change.kind === 'elsewhere') {
      this.options.logger.debug(
        { pipeline_id: change.id, processor_group: change.group },
        "another processor group's pipeline; not run here",
      );
      return;
    }
    if (change.kind === 'ignored') {
      this.options.logger.warn(
        { pipeline_id: change.id, reason: change.reason },
        'definition ignored',
      );
      return;
    }
    // A replay's counters start afresh as a reset's do: they count the new run.
    if (change.kind === 'reset' || change.kind === 'replayed') this.resetPending.add(change.id);
    this.pending.set(change.id, change);
    this.schedule(change.id);
  }

  /** Applies the pipeline's latest pending change now, after the one in progress, if any. */
  private schedule(id: string): void {
    const retry = this.retries.get(id);
    if (retry) clearTimeout(retry);
    this.retries.delete(id);
    const previous = this.running.get(id) ?? Promise.resolve();
    const next = previous.then(() => this.applyPending(id));
    this.running.set(id, next);
    void next.finally(() => {
      if (this.running.get(id) === next) this.running.delete(id);
    });
  }

  private async applyPending(id: string): Promise<void> {
    const change = this.pending.get(id);
    if (!change || this.stopped) return;
    this.pending.delete(id);
    const { logger } = this.options;
    try {
      await this.apply(change);
      this.parked.delete(id);
      this.resetPending.delete(id);
      await this.options.onApplied();
    } catch (error) {
      // A newer change arrived meanwhile: it is the one that matters now.
      if (this.pending.has(id) || this.stopped) return;
      const attempts = (this.parked.get(id)?.attempts ?? 0) + 1;
      const reason = isPermanentRefusal(error)
        ? refusalReason(error)
        : error instanceof Error
          ? error.message
          : String(error);
      this.parked.set(id, { id, ...generationOf(change), error: reason, attempts });
      if (change.kind === 'invalid') {
        // Stopped everywhere alike: a replica started now sees only this record (the topic is
        // compacted) and could not run the earlier definition that others still would.
        this.options.pipelines.delete(id);
        logger.error(
          { pipeline_id: id, reason },
          'a definition this replica cannot run; the pipeline is stopped and parked until a newer one',
        );
        await this.options.onApplied().catch(() => undefined);
        return;
      }
      const retryInMs = backoffDelay(attempts, FAILURE_BACKOFF);
      logger.error(
        { err: error, pipeline_id: id, attempt: attempts, retry_in_ms: retryInMs },
        'applying a definition failed; the pipeline is parked and retried',
      );
      this.pending.set(id, change);
      this.retries.set(
        id,
        setTimeout(() => this.schedule(id), retryInMs),
      );
    }
  }

  private async apply(change: Applicable): Promise<void> {
    const { pipelines, logger } = this.options;
    if (change.kind === 'invalid') throw new Error(change.reason);
    if (change.kind === 'deleted') {
      pipelines.delete(change.id);
      logger.info({ pipeline_id: change.id }, 'pipeline deleted');
      return;
    }
    const { stored, plan } = change.pipeline;
    const sourcePartitions = await sourcePartitionsOf(this.options.admin, plan);
    // What the pipeline creates gets as many partitions as its largest source.
    const partitions = Math.max(1, ...sourcePartitions.values());
    for (const { operator } of plan.transforms) {
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
      plan,
      this.options.topicPrefix,
      (topic) => sourcePartitions.get(topic)!,
      await startsOf(this.options.admin, stored, plan),
      pipelines.get(change.id)?.counters,
    );
    if (this.resetPending.has(change.id)) resetCounters(next.counters);
    await ensurePipelineTopics(this.options.admin, next, partitions);
    pipelines.set(next);
    logger.info(
      {
        pipeline_id: change.id,
        change: change.kind,
        version: stored.version,
        epoch: next.epoch,
        ...(change.kind === 'updated' ? { state: change.freshState ? 'reset' : 'kept' } : {}),
      },
      `pipeline ${change.kind}`,
    );
  }
}

function generationOf(change: Applicable): { version: number; reset_generation: number } {
  if (change.kind === 'invalid' || change.kind === 'deleted')
    return change.kind === 'invalid'
      ? { version: change.version, reset_generation: change.reset_generation }
      : { version: 0, reset_generation: 0 };
  return {
    version: change.pipeline.stored.version,
    reset_generation: change.pipeline.stored.reset_generation,
  };
}
