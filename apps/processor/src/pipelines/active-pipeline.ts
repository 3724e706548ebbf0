import {
  changelogTopic,
  lateTopic,
  pipelineRun,
  repartitionTopic,
  stateEpoch,
} from '@sluice/contracts';
import type { StoredPipeline } from '@sluice/contracts';
import { emptyCounters, statefulNodesOf } from '@sluice/operators';
import type { PipelineCounters, PipelinePlan, StatefulNode } from '@sluice/operators';

import { epochSuffix } from './result-value';

/** A pipeline this replica runs: its plan, where it reads and writes, and this replica's counters. */
export interface ActivePipeline {
  readonly id: string;
  readonly stored: StoredPipeline;
  /** The graph both definition forms compile to (docs/design.md §9). */
  readonly plan: PipelinePlan;
  /**
   * Identifies the pipeline's state: state and repartitioned records of another epoch are not
   * this pipeline's any more (a reset, an update that changed what the state means, or a
   * delete and re-create of the same id).
   */
  readonly epoch: string;
  /**
   * `<reset generation>.<version>` of its definition: it orders definitions, so a repartition
   * record of a later one than a replica knows waits for it (repartition-records.ts).
   */
  readonly generation: string;
  /** Closes each of its values, carrying the epoch (result-value.ts). */
  readonly epochSuffix: string;
  /** Its run (pipelineRun): a source partition that has not seen it starts it at `starts`. */
  readonly run: string;
  /** Where the run starts in each source partition (`<topic>/<partition>` → offset). */
  readonly starts: ReadonlyMap<string, number>;
  readonly counters: PipelineCounters;
  readonly topics: PipelineTopics;
  /** Its reduces and windows, run by the tasks of its repartition partitions. */
  readonly stateful: readonly PlacedNode[];
}

export interface SinkTopics {
  topic: string;
  late: string;
}

export interface PipelineTopics {
  /** The topics its sources read. */
  sources: readonly string[];
  /** Each sink's topic and its `.late`, by sink id. */
  sinks: ReadonlyMap<string, SinkTopics>;
  /** Every topic it publishes results or late records to. */
  outputs: readonly string[];
  /** Pipelines with a reduce or window only: where re-keyed records go, and where state is mirrored. */
  repartition: string | undefined;
  changelog: string | undefined;
  /** Partitions of the repartition and changelog topics (0 for a stateless pipeline). */
  repartitionPartitions: number;
}

/** A stateful node where the processor runs it. */
export interface PlacedNode {
  readonly node: StatefulNode;
  /** Where its results and late records go (`undefined`: it feeds no sink). */
  readonly sink: SinkTopics | undefined;
  /** `<topic>/<partition>` of every source partition whose event time its watermark waits for. */
  readonly upstreams: readonly string[];
  /**
   * Names it in repartition records, and prefixes its state keys in the changelog, when the
   * pipeline has several stateful nodes; the only one goes untagged, so a linear pipeline's
   * records and changelog read as they always did.
   */
  readonly tag: string | undefined;
  /** `<tag>|`, or '' untagged. */
  readonly keyPrefix: string;
}

/**
 * `partitionsOf` answers a source topic's partition count and `starts` where the run starts in
 * each source partition (the applier read both from the broker); the internal topics get as
 * many partitions as the pipeline's largest source.
 */
export function activePipeline(
  stored: StoredPipeline,
  plan: PipelinePlan,
  topicPrefix: string,
  partitionsOf: (topic: string) => number,
  starts: ReadonlyMap<string, number> = new Map(),
  counters: PipelineCounters = emptyCounters(),
): ActivePipeline {
  const sources = [...new Set(plan.sources.flatMap((source) => source.topics))];
  const sinks = new Map(
    plan.sinks.map((sink) => [sink.id, { topic: sink.topic, late: lateTopic(sink.topic) }]),
  );
  const nodes = statefulNodesOf(plan);
  const epoch = stateEpoch(stored);
  const stateful = nodes.length > 0;
  return {
    id: stored.id,
    stored,
    plan,
    epoch,
    generation: `${stored.reset_generation}.${stored.version}`,
    epochSuffix: epochSuffix(epoch),
    run: pipelineRun(stored),
    starts,
    counters,
    topics: {
      sources,
      sinks,
      outputs: [...new Set([...sinks.values()].flatMap(({ topic, late }) => [topic, late]))],
      repartition: stateful ? repartitionTopic(stored.id, topicPrefix) : undefined,
      changelog: stateful ? changelogTopic(stored.id, topicPrefix) : undefined,
      repartitionPartitions: stateful ? Math.max(1, ...sources.map(partitionsOf)) : 0,
    },
    stateful: nodes.map((node) => ({
      node,
      sink: node.sink && sinks.get(node.sink.id),
      upstreams: node.sources
        .flatMap((source) => source.topics)
        .flatMap((topic) =>
          Array.from({ length: partitionsOf(topic) }, (_, partition) => `${topic}/${partition}`),
        ),
      tag: nodes.length === 1 ? undefined : node.id,
      keyPrefix: nodes.length === 1 ? '' : `${node.id}|`,
    })),
  };
}
