// A pipeline whose processing fails for a reason of its own — a topic it writes to was deleted
// under it — is held (docs/design.md §9): the other pipelines of its source partitions go on,
// it is reported failed with the reason, and its position in each source partition stays
// where its last commit left it, so that once the topic exists again (made again, or the
// definition updated) it catches up from there. Checked after a task fails, and again with
// back-off while held; a missing topic is never made here: deleting it was someone's choice.
import type { Admin } from 'kafkajs';
import type { Logger } from 'pino';

import { retryRetriable } from '@sluice/kafka';

import { backoffDelay, FAILURE_BACKOFF } from '../support/backoff';
import type { ActivePipeline } from './active-pipeline';
import type { ParkedPipeline } from './definition-applier';
import type { PipelineSet } from './pipeline-set';

export interface HeldPipelinesOptions {
  admin: Admin;
  pipelines: PipelineSet;
  logger: Logger;
}

export class HeldPipelines {
  private readonly held = new Map<string, ParkedPipeline>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private checking: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: HeldPipelinesOptions) {}

  /** The pipelines held, with why, for the stats. */
  failures(): ParkedPipeline[] {
    return [...this.held.values()];
  }

  /** After a task failed: holds each running pipeline that writes to a topic that is gone. */
  check(): Promise<void> {
    this.checking ??= this.checkOnce().finally(() => (this.checking = undefined));
    return this.checking;
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private async checkOnce(): Promise<void> {
    const { pipelines, logger } = this.options;
    const existing = await this.topics();
    for (const pipeline of pipelines.list()) {
      if (pipelines.isHeld(pipeline.id)) continue;
      const missing = missingOf(pipeline, existing);
      if (missing.length === 0) continue;
      const error = reasonFor(missing);
      pipelines.hold(pipeline.id);
      this.held.set(pipeline.id, {
        id: pipeline.id,
        version: pipeline.stored.version,
        reset_generation: pipeline.stored.reset_generation,
        error,
        attempts: 1,
      });
      logger.error(
        { pipeline_id: pipeline.id, missing },
        `${error}; the pipeline is held, the others go on`,
      );
      this.schedule(pipeline.id);
    }
  }

  private schedule(id: string): void {
    if (this.stopped) return;
    const attempts = this.held.get(id)?.attempts ?? 1;
    this.timers.set(
      id,
      setTimeout(() => void this.recheck(id), backoffDelay(attempts, FAILURE_BACKOFF)),
    );
  }

  private async recheck(id: string): Promise<void> {
    this.timers.delete(id);
    const { pipelines, logger } = this.options;
    const pipeline = pipelines.get(id);
    // Deleted, or replaced by a newer definition (whose topics the applier made): not held.
    if (!pipeline || !pipelines.isHeld(id)) {
      this.held.delete(id);
      return;
    }
    const missing = missingOf(pipeline, await this.topics().catch(() => undefined));
    const entry = this.held.get(id)!;
    if (missing.length > 0) {
      entry.attempts += 1;
      entry.error = reasonFor(missing);
      this.schedule(id);
      return;
    }
    this.held.delete(id);
    pipelines.release(id);
    logger.info({ pipeline_id: id }, 'the topics of a held pipeline exist again; it catches up');
  }

  private async topics(): Promise<Set<string>> {
    return new Set(await retryRetriable(() => this.options.admin.listTopics()));
  }
}

/** The topics `pipeline` writes that are not in `existing` (all, if that is unknown). */
function missingOf(pipeline: ActivePipeline, existing: Set<string> | undefined): string[] {
  const { outputs, repartition, changelog } = pipeline.topics;
  return [
    ...outputs,
    ...(repartition ? [repartition] : []),
    ...(changelog ? [changelog] : []),
  ].filter((topic) => !existing?.has(topic));
}

function reasonFor(missing: string[]): string {
  return `it writes to ${missing.join(', ')}, which no longer exist${missing.length === 1 ? 's' : ''}: make ${missing.length === 1 ? 'it' : 'them'} again, or point the pipeline elsewhere`;
}
