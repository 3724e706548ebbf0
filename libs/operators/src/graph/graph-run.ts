// A pipeline plan run in process: every source's events pushed through its transforms to its
// sinks, with a stage of its own for each reduce or window (or, in the processor, the stateful
// inputs sent downstream). The reference run is built on it.
// Events are shared between pipelines and between the branches of a fan-out, so a path that
// writes to an event gets a copy of its own where the stream splits (and at the source).
// Each node is compiled once into a closure that pushes an event to the next: a node with one
// plain reader calls it directly, so a chain costs no more than the steps themselves.
import type {
  Operator,
  ReduceOperator,
  ResultRecord,
  SluiceEvent,
  WindowOperator,
} from '@sluice/contracts';

import type { AggregateInput } from '../aggregate/aggregate-input';
import { emptyCounters } from '../counters';
import type { PipelineCounters } from '../counters';
import { ownEnvelope } from '../paths';
import { chain, compileStateful, compileStep } from '../pipeline';
import type { CompileOptions, StatefulSpec } from '../pipeline';
import type { DeadLetter, StageInputSink } from '../pipeline-run';
import { statelessKey, statelessResult } from '../pipeline-run';
import type { LateRecord, StageInput, StatefulStage } from '../stateful/stage';
import { NO_LOOKUPS } from '../stateless/enrich';
import { FAILED, FILTERED, PASS, SKIPPED } from '../step';
import type { Verdict, WorkItem } from '../step';
import { compileJoin } from '../join/join-node';
import type { JoinSpec } from '../join/join-node';
import type { JoinSide } from '../join/interval-join';
import { sourcesOf } from './plan';
import type { PipelinePlan, PlanInput, PlanJoin } from './plan';

type StepOperator = Exclude<Operator, ReduceOperator | WindowOperator>;

/** Filter, map and enrich: a step that passes an event on or not, and sets no route. */
function isPlainStep(operator: Operator): boolean {
  return operator.type === 'filter' || operator.type === 'map' || operator.type === 'enrich';
}

export interface GraphRunSink {
  result(sinkId: string, key: string, record: ResultRecord): void;
  late(sinkId: string, key: string, record: LateRecord): void;
  deadLetter(record: DeadLetter): void;
}

export interface GraphRunOptions extends CompileOptions {
  trackChanges?: boolean;
  counters?: PipelineCounters;
  /**
   * Where a stateful node's inputs go instead of a stage of this run's own: the processor runs
   * the stateless nodes where a record is consumed and each stage where its group's partition is.
   */
  downstream?: (nodeId: string) => StageInputSink;
}

/** Takes an event at a node; `routed` is the route a branch just set (route readers take only theirs). */
type Push = (item: WorkItem, routed: string | undefined) => void;

/** What moves with a source's event time: a stage, or a join (which waits for both sides). */
interface Clocked {
  advanceTo(eventTime: number): void;
}

/** A reader of a node's output. */
interface Edge {
  /** Only records on this route of a branch; undefined: all. */
  route: string | undefined;
  push: Push;
  /** Whether anything from the reader on writes to the event. */
  mutates: boolean;
  /** The stages of this run's own from the reader on. */
  stages: Clocked[];
}

interface GraphSource {
  accepts(eventType: string): boolean;
  /** Whether the event gets a copy of its own on entry: one path only, and it writes. */
  copies: boolean;
  next: Push;
  stages: Clocked[];
}

/** A node's reader: a transform or sink by its one input, or one side of a join. */
interface Reader {
  input: PlanInput;
  id: string;
  side?: JoinSide;
}

export class GraphRun {
  readonly counters: PipelineCounters;
  private readonly sources = new Map<string, GraphSource>();
  private readonly stageByNode = new Map<string, StatefulStage>();
  /** The largest event time each source has seen (what a join's two sides wait on). */
  private readonly sourceTime = new Map<string, number>();
  /** The record in hand's id as given, if one was (see `currentRecordId`). */
  private givenRecordId: string | undefined;
  private sequence = 0;
  private readonly aggregate: AggregateInput = { group: null, value: 0 };
  private readonly input: StageInput = {
    group: null,
    route: undefined,
    value: 0,
    time: 0,
    envelope: undefined as never,
  };
  private readonly entry: WorkItem = { envelope: undefined as never, route: undefined, reason: '' };
  private original: unknown;
  private time = 0;
  private lastSourceId: string | undefined;
  private lastSource: GraphSource | undefined;
  private readonly enabled: boolean;

  constructor(
    readonly plan: PipelinePlan,
    private readonly sink: GraphRunSink,
    options: GraphRunOptions = {},
  ) {
    this.counters = options.counters ?? emptyCounters();
    this.enabled = plan.enabled;
    const edgesOf = this.compileNodes(options);
    for (const source of plan.sources) {
      const edges = edgesOf(source.id);
      const types = new Set(source.eventTypes);
      this.sources.set(source.id, {
        accepts: types.size === 0 ? () => true : (type) => types.has(type),
        copies: edges.length === 1 && edges[0]!.mutates,
        next: this.dispatcher(edges),
        stages: edges.flatMap((edge) => edge.stages),
      });
    }
  }

  /**
   * Runs one decoded event read by `sourceId` (if the plan is enabled and the type matches).
   * `recordId` names the record among its source's (a join ignores a record it has seen): the
   * test driver gives one; without one (the processor, the reference run), the order of arrival.
   */
  process(sourceId: string, event: SluiceEvent, recordId?: string): void {
    const source = this.sourceOf(sourceId);
    const original = event.envelope;
    if (!this.enabled || !source.accepts(original.event_type)) return;
    this.counters.processed += 1;
    this.counters.last_event_time = event.time;
    this.original = original;
    this.time = event.time;
    this.givenRecordId = recordId;
    // Counted, as before, only for records that come without an id.
    if (recordId === undefined) this.sequence += 1;
    const item = this.entry;
    item.envelope = source.copies ? ownEnvelope(original) : original;
    item.route = undefined;
    source.next(item, undefined);
  }

  /** `sourceId`'s event time advanced: the stages below it may fire windows. */
  advanceTo(sourceId: string, eventTime: number): void {
    this.sourceTime.set(sourceId, eventTime);
    for (const stage of this.sourceOf(sourceId).stages) stage.advanceTo(eventTime);
  }

  onWallClock(now: number): void {
    for (const stage of this.stageByNode.values()) stage.onWallClock(now);
  }

  flush(): void {
    for (const stage of this.stageByNode.values()) stage.flush();
  }

  /** The stage of a reduce, window or join node. */
  stageOf(nodeId: string): StatefulStage | undefined {
    return this.stageByNode.get(nodeId);
  }

  /** The ids of the nodes with a stage of this run's own. */
  statefulNodeIds(): string[] {
    return [...this.stageByNode.keys()];
  }

  /** Passes an event on to a node's readers: directly to a lone plain one, else each its own. */
  private dispatcher(edges: Edge[]): Push {
    if (edges.length === 0) return () => undefined;
    if (edges.length === 1) {
      const { route, push } = edges[0]!;
      if (route === undefined) return push;
      return (item, routed) => {
        if (routed === route) push(item, undefined);
      };
    }
    return (item, routed) => {
      for (const edge of edges) {
        if (edge.route !== undefined && edge.route !== routed) continue;
        const envelope = edge.mutates ? ownEnvelope(item.envelope) : item.envelope;
        edge.push({ envelope, route: item.route, reason: '' }, undefined);
      }
    };
  }

  private count(verdict: Verdict, item: WorkItem): void {
    const counters = this.counters;
    if (verdict === FILTERED) counters.filtered += 1;
    else if (verdict === SKIPPED) counters.skipped += 1;
    else if (verdict === FAILED) {
      counters.failed += 1;
      this.sink.deadLetter({
        pipeline_id: this.plan.id,
        reason: item.reason,
        event: this.original,
      });
    }
  }

  /**
   * The record in hand's id: as given, else its source's id and its place in order of arrival.
   * Built only here, for a join: the processor runs every record through every pipeline, and
   * a string per record and pipeline would be garbage for all plans that have no join.
   */
  private currentRecordId(): string {
    return this.givenRecordId ?? `${this.lastSourceId!}#${this.sequence}`;
  }

  private sourceOf(sourceId: string): GraphSource {
    // Most events come from the source the last one came from.
    if (sourceId === this.lastSourceId) return this.lastSource!;
    const source = this.sources.get(sourceId);
    if (!source) throw new Error(`pipeline ${this.plan.id} has no source ${sourceId}`);
    this.lastSourceId = sourceId;
    this.lastSource = source;
    return source;
  }

  /**
   * Every node compiled once into a push, wired to what reads it; answers the readers of a node
   * (what a source reaches is a tree: every node has one input).
   */
  private compileNodes(options: GraphRunOptions): (id: string) => Edge[] {
    const plan = this.plan;
    const lookups = options.lookups ?? NO_LOOKUPS;
    const all: Reader[] = [
      ...[...plan.transforms, ...plan.sinks].map(({ id, input }) => ({ id, input })),
      ...plan.joins.flatMap(({ id, left, right }) => [
        { id, input: left, side: 'left' as const },
        { id, input: right, side: 'right' as const },
      ]),
    ];
    const readers = new Map<string, Reader[]>();
    for (const reader of all) {
      const list = readers.get(reader.input.node) ?? [];
      list.push(reader);
      readers.set(reader.input.node, list);
    }
    for (const { id, input } of all) {
      const known =
        plan.transforms.some((t) => t.id === input.node) ||
        plan.joins.some((j) => j.id === input.node) ||
        plan.sources.some((s) => s.id === input.node);
      if (!known)
        throw new Error(`pipeline ${plan.id}: ${id} reads ${input.node}, which is not there`);
    }
    const transforms = new Map(plan.transforms.map((t) => [t.id, t]));
    const joins = new Map(plan.joins.map((join) => [join.id, join]));
    const sinkIds = new Set(plan.sinks.map((sink) => sink.id));

    const edgesOf = (id: string): Edge[] =>
      (readers.get(id) ?? []).map(({ input, id: reader, side }) => ({
        route: input.route,
        ...(side === undefined
          ? nodeOf(reader)
          : this.joinSide(joins.get(reader)!, side, readers, options)),
      }));

    const nodeOf = (id: string): Omit<Edge, 'route'> => {
      if (sinkIds.has(id)) return { push: this.sinkPush(id), mutates: false, stages: [] };
      const { operator, label } = transforms.get(id)!;
      if (operator.type === 'reduce' || operator.type === 'window') {
        const after = readers.get(id) ?? [];
        if (after.some((reader) => !sinkIds.has(reader.id)))
          throw new Error(`pipeline ${plan.id}: ${after[0]!.id} reads the results of ${id}`);
        return this.statefulNode(
          id,
          compileStateful(plan.id, operator, label),
          after[0]?.id,
          options,
        );
      }
      if (operator.type !== 'branch') {
        // A run of plain steps, each the only reader of the one before, runs as one step.
        const run = [transforms.get(id)!];
        for (;;) {
          const after = readers.get(run.at(-1)!.id) ?? [];
          const reader = after.length === 1 ? transforms.get(after[0]!.id) : undefined;
          if (!reader || after[0]!.input.route !== undefined || !isPlainStep(reader.operator))
            break;
          run.push(reader);
        }
        const edges = edgesOf(run.at(-1)!.id);
        const next = this.dispatcher(edges);
        const step = chain(
          run.map((t) => compileStep(t.operator as StepOperator, t.label, lookups)),
        );
        const writes = run.some((t) => t.operator.type !== 'filter');
        return {
          mutates: writes || edges.some((e) => e.mutates),
          stages: edges.flatMap((e) => e.stages),
          push: (item) => {
            const verdict = step(item);
            if (verdict === PASS) next(item, undefined);
            else this.count(verdict, item);
          },
        };
      }
      const edges = edgesOf(id);
      const next = this.dispatcher(edges);
      const step = compileStep(operator, label, lookups);
      return {
        mutates: true,
        stages: edges.flatMap((e) => e.stages),
        push: (item) => {
          // A branch that matches nothing leaves an earlier branch's route on the event: that
          // route is the event's still, but not one this branch sent it to.
          const before = item.route;
          item.route = undefined;
          const verdict = step(item);
          const routed = item.route;
          if (routed === undefined) item.route = before;
          if (verdict === PASS) next(item, routed);
          else this.count(verdict, item);
        },
      };
    };
    return edgesOf;
  }

  /**
   * One side of a join: its records enter the join's one stage (made at the first side), or go
   * downstream keyed by the join key. In process, the stage's watermark is the smaller of the
   * event times of the sources the two sides descend from.
   */
  private joinSide(
    join: PlanJoin,
    side: JoinSide,
    readers: Map<string, Reader[]>,
    options: GraphRunOptions,
  ): Omit<Edge, 'route'> {
    const spec = compileJoin(this.plan.id, join);
    const stages: Clocked[] = [];
    let target: StageInputSink;
    if (options.downstream) target = options.downstream(join.id);
    else {
      const stage = this.stageByNode.get(join.id) ?? this.joinStage(spec, join, readers, options);
      const sources = sourcesOf(this.plan, join.id);
      stages.push({
        advanceTo: () => {
          let time = Infinity;
          for (const source of sources)
            time = Math.min(time, this.sourceTime.get(source) ?? -Infinity);
          if (time > -Infinity) stage.advanceTo(time);
        },
      });
      target = stage;
    }
    const input: StageInput = { ...this.input, side, group: null };
    return {
      mutates: false,
      stages,
      push: (item) => {
        const key = spec.keyOf(side, item.envelope);
        if (key === undefined) {
          this.counters.skipped += 1;
          return;
        }
        input.group = key;
        input.time = this.time;
        input.id = this.currentRecordId();
        input.envelope = item.envelope;
        target.add(input);
      },
    };
  }

  private joinStage(
    spec: JoinSpec,
    join: PlanJoin,
    readers: Map<string, Reader[]>,
    options: GraphRunOptions,
  ) {
    const sinkId = readers.get(join.id)?.[0]?.id;
    const stage = spec.createStage({
      counters: this.counters,
      trackChanges: options.trackChanges,
      emitter: {
        result: (key, record) => sinkId !== undefined && this.sink.result(sinkId, key, record),
        late: (key, record) => sinkId !== undefined && this.sink.late(sinkId, key, record),
        refused: ({ reason, event }) =>
          this.sink.deadLetter({ pipeline_id: this.plan.id, reason, event }),
      },
    });
    this.stageByNode.set(join.id, stage);
    return stage;
  }

  private sinkPush(sinkId: string): Push {
    return (item) => {
      this.counters.emitted += 1;
      this.sink.result(
        sinkId,
        statelessKey(this.plan.id, item.envelope),
        statelessResult(this.plan.id, item),
      );
    };
  }

  /** A reduce or window: its inputs to a stage of this run's own, or downstream. */
  private statefulNode(
    id: string,
    spec: StatefulSpec,
    sinkId: string | undefined,
    options: GraphRunOptions,
  ): Omit<Edge, 'route'> {
    let target: StageInputSink;
    const stages: StatefulStage[] = [];
    if (options.downstream) target = options.downstream(id);
    else {
      const stage = spec.createStage({
        emitter: {
          result: (key, record) => sinkId !== undefined && this.sink.result(sinkId, key, record),
          late: (key, record) => sinkId !== undefined && this.sink.late(sinkId, key, record),
        },
        counters: this.counters,
        trackChanges: options.trackChanges,
      });
      this.stageByNode.set(id, stage);
      stages.push(stage);
      target = stage;
    }
    const aggregate = this.aggregate;
    const input = this.input;
    return {
      mutates: false,
      stages,
      push: (item) => {
        const verdict = spec.extract(item, aggregate);
        if (verdict !== PASS) {
          this.count(verdict, item);
          return;
        }
        input.group = aggregate.group;
        input.route = item.route;
        input.value = aggregate.value;
        input.time = this.time;
        input.envelope = item.envelope;
        target.add(input);
      },
    };
  }
}
