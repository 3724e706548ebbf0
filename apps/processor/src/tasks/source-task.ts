// A source partition's task (docs/design.md §5): decodes each record once, dead-letters bad ones, runs
// every matching pipeline's stateless steps, publishes stateless results, and re-keys stateful
// pipelines' inputs by group into their repartition topics, followed by this partition's
// watermark marker to every repartition partition (docs/design.md §4).
import { DLQ_HEADERS } from '@sluice/contracts';
import type { ResultRecord } from '@sluice/contracts';
import { groupStateKey, PipelineRun } from '@sluice/operators';
import type { Combiner, DeadLetter, StageInput } from '@sluice/operators';

import type { ActivePipeline } from '../pipelines/active-pipeline';
import type { PipelineSet } from '../pipelines/pipeline-set';
import { encodeEvent, encodeMarker, encodePartial } from '../repartition/repartition-records';
import { decodeRecord } from '../source/decode-record';
import { Task } from './task';
import type { InputMessage, PartitionMemory, TaskContext } from './task';

export interface SourceTaskContext extends TaskContext {
  pipelines: PipelineSet;
  dlqTopic: string;
}

interface Runner {
  pipeline: ActivePipeline;
  run: PipelineRun;
  /** Event time last announced to the repartition partitions (stateful pipelines). */
  announced: number;
  /** Folds the batch's inputs per (window, group) before they are repartitioned. */
  combiner: Combiner | undefined;
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
  /** The current record's JSON as it arrived (re-keyed as it is when no step changed it). */
  private currentText: string | undefined;

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
      const { output, late, repartition } = pipeline.topics;
      topics.push(output, late, ...(repartition ? [repartition] : []));
    }
    return this.partitionsOf(topics);
  }

  protected refresh(): void {
    const pipelines = this.source.pipelines;
    if (pipelines.revision === this.revision) return;
    const announced = new Map(this.runners.map((r) => [r.pipeline.id, r.announced]));
    this.runners = pipelines
      .list()
      .filter((pipeline) => pipeline.compiled.enabled)
      .map((pipeline) => {
        const combiner = pipeline.compiled.stateful?.createCombiner?.();
        return {
          pipeline,
          combiner,
          run: this.runFor(pipeline, combiner),
          announced: announced.get(pipeline.id) ?? -Infinity,
        };
      });
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
      for (let i = 0; i < runners.length; i++) runners[i]!.run.process(event);
    }
    this.current = undefined;
    this.currentText = undefined;
    for (const runner of runners) if (runner.combiner) this.sendPartials(runner);
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

  private sendPartials(runner: Runner): void {
    const { repartition } = runner.pipeline.topics;
    const epoch = runner.pipeline.epoch;
    for (const partial of runner.combiner!.drain()) {
      this.send(repartition!, {
        key: groupStateKey(partial.route, partial.group),
        value: encodePartial(epoch, partial),
      });
    }
  }

  protected onTick(): void {
    // Idle flushes happen where the state is; a source partition has none.
  }

  /** After the batch's records, so a stateful partition sees them before the marker. */
  private announceEventTime(): void {
    const time = this.maxEventTime;
    if (time === -Infinity) return;
    for (const runner of this.runners) {
      const { repartition, repartitionPartitions } = runner.pipeline.topics;
      if (repartition === undefined || time <= runner.announced) continue;
      runner.announced = time;
      if (time > this.announcedBound) this.announcedBound = time;
      const value = encodeMarker({ epoch: runner.pipeline.epoch, upstream: this.upstream, time });
      for (let partition = 0; partition < repartitionPartitions; partition++)
        this.send(repartition, { partition, key: this.upstream, value });
    }
  }

  private runFor(pipeline: ActivePipeline, combiner: Combiner | undefined): PipelineRun {
    const { output, repartition } = pipeline.topics;
    const sink = {
      result: (key: string, record: ResultRecord) =>
        this.send(output, { key, value: JSON.stringify(record) }),
      late: () => {
        throw new Error('a source partition has no windows, so nothing can be late here');
      },
      deadLetter: (record: DeadLetter) => this.deadLetter(pipeline.id, record.reason),
    };
    if (repartition === undefined)
      return new PipelineRun(pipeline.compiled, sink, { counters: pipeline.counters });
    const epoch = pipeline.epoch;
    const mutates = pipeline.compiled.mutates;
    const lateness = pipeline.compiled.stateful!.latenessMs;
    return new PipelineRun(pipeline.compiled, sink, {
      counters: pipeline.counters,
      downstream: {
        add: (input: StageInput) => {
          if (combiner?.add(input, this.announcedBound - lateness)) return;
          const eventJson = mutates ? JSON.stringify(input.envelope) : this.currentText!;
          this.send(repartition, {
            key: groupStateKey(input.route, input.group),
            value: encodeEvent(epoch, input, eventJson),
          });
        },
      },
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
