// A pipeline plan run in process: every source's events pushed through its transforms to its
// sinks, with a stage of its own for each reduce or window. The reference run is built on it.
// Events are shared between pipelines and between the branches of a fan-out, so a path that
// writes to an event gets a copy of its own where the stream splits (and at the source).
import type { ResultRecord, SluiceEvent } from '@sluice/contracts';

import type { AggregateInput } from '../aggregate/aggregate-input';
import { emptyCounters } from '../counters';
import type { PipelineCounters } from '../counters';
import { ownEnvelope } from '../paths';
import { compileStateful, compileStep } from '../pipeline';
import type { CompileOptions, StatefulSpec } from '../pipeline';
import type { DeadLetter, StageInputSink } from '../pipeline-run';
import { statelessKey, statelessResult } from '../pipeline-run';
import type { LateRecord, StageInput, StatefulStage } from '../stateful/stage';
import { NO_LOOKUPS } from '../stateless/enrich';
import { FAILED, FILTERED, PASS, SKIPPED } from '../step';
import type { Step, Verdict, WorkItem } from '../step';
import type { PipelinePlan, PlanInput } from './plan';

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

interface Edge {
  /** Only records on this route of a branch; undefined: all. */
  route: string | undefined;
  node: GraphNode;
  /** Whether anything from here on writes to the event. */
  mutates: boolean;
}

type GraphNode =
  | { kind: 'step'; id: string; step: Step; branch: boolean; writes: boolean; edges: Edge[] }
  | { kind: 'stateful'; id: string; spec: StatefulSpec; stage: StageInputSink }
  | { kind: 'sink'; id: string };

interface GraphSource {
  accepts(eventType: string): boolean;
  edges: Edge[];
  stages: StatefulStage[];
}

export class GraphRun {
  readonly counters: PipelineCounters;
  private readonly sources = new Map<string, GraphSource>();
  private readonly stageByNode = new Map<string, StatefulStage>();
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

  constructor(
    readonly plan: PipelinePlan,
    private readonly sink: GraphRunSink,
    options: GraphRunOptions = {},
  ) {
    this.counters = options.counters ?? emptyCounters();
    const nodes = this.compileNodes(options);
    for (const source of plan.sources) {
      const edges = nodes.edgesOf(source.id);
      const types = new Set(source.eventTypes);
      this.sources.set(source.id, {
        accepts: types.size === 0 ? () => true : (type) => types.has(type),
        edges,
        stages: stagesBelow(edges, this.stageByNode),
      });
    }
  }

  /** Runs one decoded event read by `sourceId` (if the plan is enabled and the type matches). */
  process(sourceId: string, event: SluiceEvent): void {
    const source = this.sourceOf(sourceId);
    const original = event.envelope;
    if (!this.plan.enabled || !source.accepts(original.event_type)) return;
    this.counters.processed += 1;
    this.counters.last_event_time = event.time;
    this.original = original;
    this.time = event.time;
    const item = this.entry;
    const only = source.edges.length === 1 ? source.edges[0]! : undefined;
    item.envelope = only?.mutates ? ownEnvelope(original) : original;
    item.route = undefined;
    this.fanOut(source.edges, item);
  }

  /** `sourceId`'s event time advanced: the stages below it may fire windows. */
  advanceTo(sourceId: string, eventTime: number): void {
    for (const stage of this.sourceOf(sourceId).stages) stage.advanceTo(eventTime);
  }

  onWallClock(now: number): void {
    for (const stage of this.stageByNode.values()) stage.onWallClock(now);
  }

  flush(): void {
    for (const stage of this.stageByNode.values()) stage.flush();
  }

  /** The stage of a reduce or window node. */
  stageOf(nodeId: string): StatefulStage | undefined {
    return this.stageByNode.get(nodeId);
  }

  /** `routed`: the route the branch just run set (route edges read only that); else none. */
  private fanOut(edges: Edge[], item: WorkItem, routed?: string): void {
    if (edges.length === 1) {
      const edge = edges[0]!;
      if (edge.route === undefined || edge.route === routed) this.run(edge.node, item);
      return;
    }
    for (const edge of edges) {
      if (edge.route !== undefined && edge.route !== routed) continue;
      const envelope = edge.mutates ? ownEnvelope(item.envelope) : item.envelope;
      this.run(edge.node, { envelope, route: item.route, reason: '' });
    }
  }

  private run(node: GraphNode, item: WorkItem): void {
    switch (node.kind) {
      case 'step': {
        if (!node.branch) {
          const verdict = node.step(item);
          if (verdict === PASS) this.fanOut(node.edges, item);
          else this.count(verdict, item);
          return;
        }
        // A branch that matches nothing leaves an earlier branch's route on the event: that
        // route is the event's still, but not one this branch sent it to.
        const before = item.route;
        item.route = undefined;
        const verdict = node.step(item);
        const routed = item.route;
        if (routed === undefined) item.route = before;
        if (verdict === PASS) this.fanOut(node.edges, item, routed);
        else this.count(verdict, item);
        return;
      }
      case 'stateful': {
        const verdict = node.spec.extract(item, this.aggregate);
        if (verdict !== PASS) {
          this.count(verdict, item);
          return;
        }
        const input = this.input;
        input.group = this.aggregate.group;
        input.route = item.route;
        input.value = this.aggregate.value;
        input.time = this.time;
        input.envelope = item.envelope;
        node.stage.add(input);
        return;
      }
      case 'sink':
        this.counters.emitted += 1;
        this.sink.result(
          node.id,
          statelessKey(this.plan.id, item.envelope),
          statelessResult(this.plan.id, item),
        );
        return;
    }
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

  private sourceOf(sourceId: string): GraphSource {
    const source = this.sources.get(sourceId);
    if (!source) throw new Error(`pipeline ${this.plan.id} has no source ${sourceId}`);
    return source;
  }

  /** Every node compiled once, wired to what reads it. */
  private compileNodes(options: GraphRunOptions): { edgesOf(id: string): Edge[] } {
    const plan = this.plan;
    const lookups = options.lookups ?? NO_LOOKUPS;
    const readers = new Map<string, Array<{ input: PlanInput; id: string }>>();
    for (const node of [...plan.transforms, ...plan.sinks]) {
      const list = readers.get(node.input.node) ?? [];
      list.push({ input: node.input, id: node.id });
      readers.set(node.input.node, list);
    }
    const sinkOf = (id: string) => readers.get(id)?.[0]?.id;
    const compiled = new Map<string, GraphNode>();
    for (const sink of plan.sinks) compiled.set(sink.id, { kind: 'sink', id: sink.id });
    for (const { id, operator, label } of plan.transforms) {
      if (operator.type === 'reduce' || operator.type === 'window') {
        const spec = compileStateful(plan.id, operator, label);
        if (options.downstream) {
          compiled.set(id, { kind: 'stateful', id, spec, stage: options.downstream(id) });
          continue;
        }
        const sinkId = sinkOf(id);
        const stage = spec.createStage({
          emitter: {
            result: (key, record) => sinkId !== undefined && this.sink.result(sinkId, key, record),
            late: (key, record) => sinkId !== undefined && this.sink.late(sinkId, key, record),
          },
          counters: this.counters,
          trackChanges: options.trackChanges,
        });
        this.stageByNode.set(id, stage);
        compiled.set(id, { kind: 'stateful', id, spec, stage });
      } else {
        const step = compileStep(operator, label, lookups);
        compiled.set(id, {
          kind: 'step',
          id,
          step,
          branch: operator.type === 'branch',
          writes: operator.type !== 'filter',
          edges: [],
        });
      }
    }
    // One input per node: what a source reaches is a tree, wired from its leaves up.
    const edgesOf = (id: string): Edge[] =>
      (readers.get(id) ?? []).map(({ input, id: reader }) => {
        const node = compiled.get(reader)!;
        if (node.kind === 'step') node.edges = edgesOf(reader);
        return { route: input.route, node, mutates: mutates(node) };
      });
    for (const { id, input } of [...plan.transforms, ...plan.sinks]) {
      const upstream = compiled.get(input.node);
      if (!upstream && !plan.sources.some((s) => s.id === input.node))
        throw new Error(`pipeline ${plan.id}: ${id} reads ${input.node}, which is not there`);
      if (upstream?.kind === 'stateful' && compiled.get(id)?.kind !== 'sink')
        throw new Error(`pipeline ${plan.id}: ${id} reads the results of ${input.node}`);
    }
    return { edgesOf };
  }
}

function mutates(node: GraphNode): boolean {
  return node.kind === 'step' && (node.writes || node.edges.some((edge) => edge.mutates));
}

/** The stages of this run's own below `edges` (none when its stateful inputs go downstream). */
function stagesBelow(edges: Edge[], own: ReadonlyMap<string, StatefulStage>): StatefulStage[] {
  const stages: StatefulStage[] = [];
  const visit = (edge: Edge) => {
    const { node } = edge;
    const stage = node.kind === 'stateful' ? own.get(node.id) : undefined;
    if (stage) stages.push(stage);
    if (node.kind === 'step') node.edges.forEach(visit);
  };
  edges.forEach(visit);
  return stages;
}
