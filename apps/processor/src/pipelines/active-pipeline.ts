import { createHash } from 'node:crypto';

import { canonicalJson, changelogTopic, lateTopic, repartitionTopic } from '@sluice/contracts';
import type { StoredPipeline } from '@sluice/contracts';
import { emptyCounters } from '@sluice/operators';
import type { CompiledPipeline, PipelineCounters } from '@sluice/operators';

/** A pipeline this replica runs: its definition, where it writes, and this replica's counters. */
export interface ActivePipeline {
  readonly id: string;
  readonly stored: StoredPipeline;
  readonly compiled: CompiledPipeline;
  /**
   * Identifies the pipeline's state: state and repartitioned records of another epoch are not
   * this pipeline's any more (a reset, an update that changed what the state means, or a
   * delete and re-create of the same id).
   */
  readonly epoch: string;
  readonly counters: PipelineCounters;
  readonly topics: PipelineTopics;
}

export interface PipelineTopics {
  output: string;
  late: string;
  /** Stateful pipelines only: where re-keyed records go, and where state is mirrored. */
  repartition: string | undefined;
  changelog: string | undefined;
  /** Partitions of the repartition and changelog topics (0 for a stateless pipeline). */
  repartitionPartitions: number;
}

export function activePipeline(
  stored: StoredPipeline,
  compiled: CompiledPipeline,
  topicPrefix: string,
  repartitionPartitions: number,
  counters: PipelineCounters = emptyCounters(),
): ActivePipeline {
  const stateful = compiled.stateful !== undefined;
  return {
    id: stored.id,
    stored,
    compiled,
    epoch: stateEpoch(stored),
    counters,
    topics: {
      output: stored.output,
      late: lateTopic(stored.output),
      repartition: stateful ? repartitionTopic(stored.id, topicPrefix) : undefined,
      changelog: stateful ? changelogTopic(stored.id, topicPrefix) : undefined,
      repartitionPartitions: stateful ? repartitionPartitions : 0,
    },
  };
}

/** What the state depends on: the reset generation, the operators, the event types, the creation. */
export function stateEpoch(stored: StoredPipeline): string {
  // Canonical (sorted keys): definitions keep the key order they were written in, and a
  // reordered but equal definition must not throw the state away.
  const meaning = canonicalJson([
    stored.operators,
    [...stored.source_event_types].sort(),
    stored.created_at,
  ]);
  const digest = createHash('sha256').update(meaning).digest('base64url').slice(0, 12);
  return `${stored.reset_generation}.${digest}`;
}
