// A source partition's task (docs/design.md §5): decodes each record once, dead-letters bad ones,
// runs the stateless nodes of every pipeline that reads this topic, publishes their results to
// their sinks, and re-keys the inputs of stateful nodes by group into their pipeline's
// repartition topic, followed by this partition's watermark marker to every repartition
// partition of the pipelines whose windows wait for it (docs/design.md §4).
import { DLQ_HEADERS } from '@sluice/contracts';
import type { EventEnvelope, ResultRecord } from '@sluice/contracts';
import { GraphRun, groupStateKey } from '@sluice/operators';
import type { Combiner, DeadLetter, LookupTables, StageInput } from '@sluice/operators';

import type { ActivePipeline, PlacedNode } from '../pipelines/active-pipeline';
import type { PipelineSet } from '../pipelines/pipeline-set';
import { encodeEvent, encodeMarker, encodePartial } from '../repartition/repartition-records';
import { decodeRecord } from '../source/decode-record';
import { Task } from './task';
import type { InputMessage, PartitionMemory, TaskContext } from './task';

export interface SourceTaskContext extends TaskContext {
  pipelines: PipelineSet;
  dlqTopic: string;
  /** What enrich looks up (kept current by the replica). */
  lookups: LookupTables;
}

interface Runner {
  pipeline: ActivePipeline;
  run: GraphRun;
  /** Its sources that read this task's topic: each record enters each of them. */
  sourceIds: string[];
  /** Whether a stateful node of it waits for this partition's event time. */
  announces: boolean;
  /** Event time last announced to the repartition partitions. */
  announced: number;
  /** Fold the batch's inputs per (window, group) before they are repartitioned. */
  combiners: Array<{ placed: PlacedNode; combiner: Combiner }>;
}

export class SourceTask extends Task {
  private runners: Runner[] = [];
  private revision = -1;
  private maxEventTime = -Infinity;
  /**
   * At least the largest event time this partition ever announced, by any owner (it is committed
   * with the offsets). A stateful partition's watermark cannot pass it minus the lateness, so an
   * input all of whose windows end later cannot be late there and may be folded.
   */
  private announcedBound = Infinity; // unknown until the committed state is adopted
  private readonly upstream: string;
  private current: InputMessage | undefined;
  /** The current record's JSON and envelope as decoded (re-keyed as is when no node changed it). */
  private currentText: string | undefined;
  private currentEnvelope: EventEnvelope | undefined;

  constructor(
    topic: string,
    partition: number,
    private readonly source: SourceTaskContext,
    memory: PartitionMemory,
  ) {
    super(topic, partition, source, memory);
    this.upstream = `${topic}/${partition}`;
  }

  protected async restoreState(): Promise<void> {
    // No state beyond event time, which restarts from what was committed (adoptCommitted) and
    // from what is read next: work that was not committed announced nothing downstream.
    this.maxEventTime = -Infinity;
    this.announcedBound = Infinity;
    this.revision = -1;
    this.runners = [];
  }

  protected writtenPartitions() {
    const topics = [this.source.dlqTopic];
    for (const pipeline of this.source.pipelines.list()) {
      const { outputs, repartition } = pipeline.topics;
      topics.push(...outputs, ...(repartition ? [repartition] : []));
    }
    return this.partitionsOf(topics);
  }

  protected refresh(): void {
    const pipelines = this.source.pipelines;
    if (pipelines.revision === this.revision) return;
    const announced = new Map(this.runners.map((r) => [r.pipeline.id, r.announced]));
    this.runners = pipelines
      .readersOf(this.topic)
      .filter((pipeline) => pipeline.plan.enabled)
      .map((pipeline) => this.runnerFor(pipeline, announced.get(pipeline.id) ?? -Infinity));
    this.revision = pipelines.revision;
  }

  protected handle(messages: InputMessage[]): void {
    const runners = this.runners;
    for (const message of messages) {
      const decoded = decodeRecord(this.topic, this.partition, message);
      if (!decoded.ok) {
        this.source.metrics.deadLetters.inc();
        this.send(this.source.dlqTopic, decoded.deadLetter);
        continue;
      }
      const event = decoded.event;
      // Every valid record advances this partition's event time, whatever its type (docs/design.md §4).
      if (event.time > this.maxEventTime) this.maxEventTime = event.time;
      this.current = message;
      this.currentText = decoded.text;
      this.currentEnvelope = event.envelope;
      for (let i = 0; i < runners.length; i++) {
        const { run, sourceIds } = runners[i]!;
        for (let j = 0; j < sourceIds.length; j++) run.process(sourceIds[j]!, event);
      }
    }
    this.current = undefined;
    this.currentText = undefined;
    this.currentEnvelope = undefined;
    for (const runner of runners) this.sendPartials(runner);
    this.announceEventTime();
  }

  protected override commitMetadata(): string | undefined {
    return Number.isFinite(this.maxEventTime)
      ? JSON.stringify({ t: this.maxEventTime })
      : undefined;
  }

  protected override adoptCommitted(metadata: string | undefined): void {
    // Nothing committed with an event time: no owner ever announced one.
    let committed = -Infinity;
    if (metadata !== undefined && metadata !== '') {
      try {
        const time = (JSON.parse(metadata) as { t?: unknown }).t;
        committed = typeof time === 'number' ? time : Infinity;
      } catch {
        committed = Infinity; // not ours: no bound is known, so nothing is folded
      }
    }
    if (committed !== Infinity && committed > this.maxEventTime) this.maxEventTime = committed;
    this.announcedBound = Math.max(
      committed,
      this.announcedBound === Infinity ? -Infinity : this.announcedBound,
    );
  }

  protected onTick(): void {
    // Idle flushes happen where the state is; a source partition has none.
  }

  private sendPartials(runner: Runner): void {
    const { repartition } = runner.pipeline.topics;
    const epoch = runner.pipeline.epoch;
    for (const { placed, combiner } of runner.combiners) {
      for (const partial of combiner.drain()) {
        this.send(repartition!, {
          key: groupStateKey(partial.route, partial.group),
          value: encodePartial(epoch, placed.tag, partial),
        });
      }
    }
  }

  /** After the batch's records, so a stateful partition sees them before the marker. */
  private announceEventTime(): void {
    const time = this.maxEventTime;
    if (time === -Infinity) return;
    for (const runner of this.runners) {
      if (!runner.announces || time <= runner.announced) continue;
      const { repartition, repartitionPartitions } = runner.pipeline.topics;
      runner.announced = time;
      if (time > this.announcedBound) this.announcedBound = time;
      const value = encodeMarker({ epoch: runner.pipeline.epoch, upstream: this.upstream, time });
      for (let partition = 0; partition < repartitionPartitions; partition++)
        this.send(repartition!, { partition, key: this.upstream, value });
    }
  }

  private runnerFor(pipeline: ActivePipeline, announced: number): Runner {
    const sourceIds = pipeline.plan.sources
      .filter((source) => source.topics.includes(this.topic))
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
    const run = new GraphRun(
      pipeline.plan,
      {
        result: (sinkId: string, key: string, record: ResultRecord) =>
          this.send(sinks.get(sinkId)!.topic, { key, value: JSON.stringify(record) }),
        late: () => {
          throw new Error('a source partition has no windows, so nothing can be late here');
        },
        deadLetter: (record: DeadLetter) => this.deadLetter(pipeline.id, record.reason),
      },
      {
        counters: pipeline.counters,
        lookups: this.source.lookups,
        downstream: (nodeId) => {
          const placed = pipeline.stateful.find((p) => p.node.id === nodeId)!;
          const combiner = combiners.find((c) => c.placed === placed)?.combiner;
          return { add: (input) => this.repartition(pipeline, placed, combiner, input) };
        },
      },
    );
    return { pipeline, run, sourceIds, announces: fed.length > 0, announced, combiners };
  }

  /** A stateful node's input: folded into the batch's partials when it cannot be late, else sent. */
  private repartition(
    pipeline: ActivePipeline,
    placed: PlacedNode,
    combiner: Combiner | undefined,
    input: StageInput,
  ): void {
    if (combiner?.add(input, this.announcedBound - placed.node.spec.latenessMs)) return;
    // A node on the way that wrote to the event gave it a copy of its own.
    const eventJson =
      input.envelope === this.currentEnvelope ? this.currentText! : JSON.stringify(input.envelope);
    this.send(pipeline.topics.repartition!, {
      key: groupStateKey(input.route, input.group),
      value: encodeEvent(pipeline.epoch, placed.tag, input, eventJson),
    });
  }

  /** An `error` policy rejected the event: the record goes to the DLQ unchanged (docs/design.md §2). */
  private deadLetter(pipelineId: string, reason: string): void {
    const message = this.current!;
    this.send(this.source.dlqTopic, {
      key: message.key,
      value: message.value,
      headers: {
        [DLQ_HEADERS.error]: reason,
        [DLQ_HEADERS.pipelineId]: pipelineId,
        [DLQ_HEADERS.sourceTopic]: this.topic,
        [DLQ_HEADERS.sourcePartition]: String(this.partition),
        [DLQ_HEADERS.sourceOffset]: message.offset,
      },
    });
  }
}
