// One pipeline as a source partition runs it: its compiled graph over the sources that read the
// partition's topic, its own position there, the event time it has read and announced, and the
// combiners that fold its stateful nodes' inputs over a transaction (docs/design.md §4, §9).
import type { Message } from 'kafkajs';

import type { ResultRecord } from '@sluice/contracts';
import { GraphRun, groupStateKey } from '@sluice/operators';
import type { Combiner, DeadLetter, LookupTables, StageInput } from '@sluice/operators';

import type { ActivePipeline, PlacedNode } from '../pipelines/active-pipeline';
import { resultValue } from '../pipelines/result-value';
import { encodePartial } from '../repartition/repartition-records';

export interface Runner {
  pipeline: ActivePipeline;
  graph: GraphRun;
  /** Its sources that read this task's topic: each record enters each of them. */
  sourceIds: string[];
  /** The first offset it takes (the records before it are not its own). */
  position: number;
  /** Held (held-pipelines.ts): it takes nothing, and its position stays. */
  held: boolean;
  /** The largest event time among the records it took: its markers' time. */
  maxEventTime: number;
  /** The stateful nodes this partition feeds: its event time moves their watermarks. */
  fed: PlacedNode[];
  /** Event time last announced to the repartition partitions. */
  announced: number;
  /** Fold the batch's inputs per (window, group) before they are repartitioned. */
  combiners: Array<{ placed: PlacedNode; combiner: Combiner }>;
}

export interface RunnerContext {
  /** The source partition's topic. */
  topic: string;
  lookups: LookupTables;
  /** The pipeline's position in the partition, and whether it is held. */
  position: number;
  held: boolean;
  send(topic: string, message: Message): void;
  /** An `error` policy rejected the record in hand. */
  deadLetter(reason: string): void;
  /** A stateful node's input, with the combiner that may fold it. */
  repartition(placed: PlacedNode, combiner: Combiner | undefined, input: StageInput): void;
}

/** `before`: the pipeline's runner under the previous definition (its event times carry over). */
export function createRunner(
  pipeline: ActivePipeline,
  before: Runner | undefined,
  context: RunnerContext,
): Runner {
  const sourceIds = pipeline.plan.sources
    .filter((source) => source.topics.includes(context.topic))
    .map((source) => source.id);
  const fed = pipeline.stateful.filter((placed) =>
    placed.node.sources.some((source) => sourceIds.includes(source.id)),
  );
  const combiners: Runner['combiners'] = [];
  for (const placed of fed) {
    const combiner = placed.node.spec.createCombiner?.();
    if (combiner) combiners.push({ placed, combiner });
  }
  const { sinks } = pipeline.topics;
  const graph = new GraphRun(
    pipeline.plan,
    {
      result: (sinkId: string, key: string, record: ResultRecord) =>
        context.send(sinks.get(sinkId)!.topic, {
          key,
          value: resultValue(record, pipeline.epochSuffix),
        }),
      late: () => {
        throw new Error('a source partition has no windows, so nothing can be late here');
      },
      deadLetter: (record: DeadLetter) => context.deadLetter(record.reason),
    },
    {
      counters: pipeline.counters,
      lookups: context.lookups,
      downstream: (nodeId) => {
        const placed = pipeline.stateful.find((p) => p.node.id === nodeId)!;
        const combiner = combiners.find((c) => c.placed === placed)?.combiner;
        return { add: (input) => context.repartition(placed, combiner, input) };
      },
    },
  );
  return {
    pipeline,
    graph,
    sourceIds,
    position: context.position,
    held: context.held,
    // Its event time starts afresh after a restart: only what it reads moves its markers.
    maxEventTime: before?.maxEventTime ?? -Infinity,
    fed,
    // Under a new epoch (a reset, or an update that changed what the state means) the time was
    // announced under the old definition's boundaries, or dropped by a stateful side that had
    // already moved on: announced again at once (source-task.ts `refresh`).
    announced: before?.pipeline.epoch === pipeline.epoch ? before.announced : -Infinity,
    combiners,
  };
}

/** What the runner's combiners folded since the last drain, as repartition records. */
export function drainPartials(runner: Runner): Array<{ key: string; value: string }> {
  const records: Array<{ key: string; value: string }> = [];
  for (const { placed, combiner } of runner.combiners) {
    for (const partial of combiner.drain()) {
      records.push({
        key: groupStateKey(partial.route, partial.group),
        value: encodePartial(runner.pipeline, placed.tag, partial),
      });
    }
  }
  return records;
}

/**
 * Whether the runner's event time crossed a boundary one of its nodes acts on since it last
 * announced it (watermark-boundaries.ts): in between, a marker would change nothing downstream.
 */
export function markerDue(runner: Runner): boolean {
  const { announced, maxEventTime } = runner;
  return runner.fed.some((placed) => placed.node.spec.watermarkBoundaries(announced, maxEventTime));
}

/**
 * Whether what the runner holds for the next commit is waited for downstream: a marker due, or
 * folded partials of a node that emits on its inputs (a reduce, a window's updates). A window
 * that fires on the watermark needs its partials only before the marker that fires it, and the
 * commit that carries that marker brings them.
 */
export function holdsAwaited(runner: Runner): boolean {
  if (markerDue(runner)) return true;
  return runner.combiners.some(
    ({ placed, combiner }) => placed.node.spec.emitsOnInput && !combiner.isEmpty,
  );
}
