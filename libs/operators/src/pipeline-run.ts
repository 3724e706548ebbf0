// One pipeline run in process: the stateless steps and the stateful stage together, over events
// in the order given. The test driver is built on it, and the processor uses the same compiled
// pieces split across source and repartition partitions. The reference run runs the same
// operators through the graph runner (graph/graph-run.ts); a property test holds the two equal.
import type { EventEnvelope, EventResult, ResultRecord, SluiceEvent } from '@sluice/contracts';

import type { AggregateInput } from './aggregate/aggregate-input';
import { emptyCounters } from './counters';
import type { PipelineCounters } from './counters';
import { ownEnvelope } from './paths';
import type { CompiledPipeline } from './pipeline';
import type { LateRecord, StageInput, StatefulStage } from './stateful/stage';
import { FAILED, FILTERED, PASS, SKIPPED } from './step';
import type { WorkItem } from './step';

/** An event an `error` policy rejected, with the reason; the event is as it entered the pipeline. */
export interface DeadLetter {
  pipeline_id: string | null;
  reason: string;
  event: unknown;
}

export interface RunSink {
  result(key: string, record: ResultRecord): void;
  late(key: string, record: LateRecord): void;
  deadLetter(record: DeadLetter): void;
}

/** Where a pipeline's stateful inputs go: its own stage in process, a repartition topic in the processor. */
export interface StageInputSink {
  add(input: StageInput): void;
}

export interface PipelineRunOptions {
  trackChanges?: boolean;
  /** Counters to add to (the processor shares one set per pipeline); fresh ones otherwise. */
  counters?: PipelineCounters;
  /**
   * Send stateful inputs here instead of to a stage of this run's own (the processor runs the
   * stateless steps where a record is consumed and the stage where its group's partition is).
   */
  downstream?: StageInputSink;
}

export class PipelineRun {
  readonly counters: PipelineCounters;
  readonly stage: StatefulStage | undefined;
  private readonly downstream: StageInputSink | undefined;
  private readonly item: WorkItem = { envelope: undefined as never, route: undefined, reason: '' };
  private readonly aggregate: AggregateInput = { group: null, value: 0 };
  private readonly input: StageInput = {
    group: null,
    route: undefined,
    value: 0,
    time: 0,
    envelope: undefined as never,
  };

  constructor(
    readonly pipeline: CompiledPipeline,
    private readonly sink: RunSink,
    options: PipelineRunOptions = {},
  ) {
    this.counters = options.counters ?? emptyCounters();
    this.stage = options.downstream
      ? undefined
      : pipeline.stateful?.createStage({
          emitter: sink,
          counters: this.counters,
          trackChanges: options.trackChanges,
        });
    this.downstream = options.downstream ?? this.stage;
  }

  /** Runs one decoded event through the pipeline (if enabled and its type matches). */
  process(event: SluiceEvent): void {
    const pipeline = this.pipeline;
    const original = event.envelope;
    if (!pipeline.enabled || !pipeline.accepts(original.event_type)) return;
    const counters = this.counters;
    counters.processed += 1;
    counters.last_event_time = event.time;

    const item = this.item;
    item.envelope = pipeline.mutates ? ownEnvelope(original) : original;
    item.route = undefined;
    let verdict = pipeline.runStateless(item);
    const stateful = pipeline.stateful;
    if (verdict === PASS && stateful !== undefined)
      verdict = stateful.extract(item, this.aggregate);
    switch (verdict) {
      case PASS:
        break;
      case FILTERED:
        counters.filtered += 1;
        return;
      case SKIPPED:
        counters.skipped += 1;
        return;
      case FAILED:
        counters.failed += 1;
        this.sink.deadLetter({ pipeline_id: pipeline.id, reason: item.reason, event: original });
        return;
    }

    if (this.downstream === undefined) {
      counters.emitted += 1;
      this.sink.result(
        statelessKey(pipeline.id, item.envelope),
        statelessResult(pipeline.id, item),
      );
      return;
    }
    const input = this.input;
    input.group = this.aggregate.group;
    input.route = item.route;
    input.value = this.aggregate.value;
    input.time = event.time;
    input.envelope = item.envelope;
    this.downstream.add(input);
  }

  advanceTo(eventTime: number): void {
    this.stage?.advanceTo(eventTime);
  }

  onWallClock(now: number): void {
    this.stage?.onWallClock(now);
  }

  flush(): void {
    this.stage?.flush();
  }
}

/** A stateless result keeps the event's entity as its key, so per-entity order holds downstream. */
export function statelessKey(pipelineId: string, envelope: EventEnvelope): string {
  return typeof envelope.entity_id === 'string' ? envelope.entity_id : pipelineId;
}

/** The event as a stateless pipeline publishes it. */
export function statelessResult(pipelineId: string, item: WorkItem): EventResult {
  // Not `{ ...envelope, pipeline_id }`: V8 takes a slow path for a spread followed by a new
  // property (about 15 times slower here, bench/operators.bench.ts).
  const result = Object.assign({}, item.envelope) as EventResult;
  result.pipeline_id = pipelineId;
  if (item.route !== undefined) result.route = item.route;
  return result;
}
