// Compiles a validated definition once into closures: the stateless steps, the reading side of
// a stateful operator, and a factory for its state. Nothing walks the definition per event.
import type {
  Operator,
  PipelineDefinition,
  ReduceOperator,
  WindowOperator,
} from '@sluice/contracts';
import { groupByPaths, sessionGapSecondsOf, slideSecondsOf } from '@sluice/contracts';

import { compileAggregateInput } from './aggregate/aggregate-input';
import type { AggregateExtractor } from './aggregate/aggregate-input';
import { aggregatorFor } from './aggregate/aggregators';
import type { PipelineCounters } from './counters';
import { HoppingCombiner, ReduceCombiner } from './stateful/combiner';
import type { Combiner } from './stateful/combiner';
import { HoppingWindowStage } from './stateful/hopping-window-stage';
import { ReduceStage } from './stateful/reduce-stage';
import { SessionWindowStage } from './stateful/session-window-stage';
import type { StageEmitter, StatefulStage } from './stateful/stage';
import { EVERY_RISE, NO_BOUNDARY, windowEnds } from './stateful/watermark-boundaries';
import type { WatermarkBoundaries } from './stateful/watermark-boundaries';
import { compileBranch } from './stateless/branch';
import { compileEnrich, NO_LOOKUPS } from './stateless/enrich';
import type { LookupTables } from './stateless/enrich';
import { compileFilter } from './stateless/filter';
import { compileMap } from './stateless/map';
import { PASS } from './step';
import type { Step, Verdict, WorkItem } from './step';

export interface CompileOptions {
  /** Tables for enrich operators; without them every lookup misses. */
  lookups?: LookupTables;
}

export interface StageFactoryOptions {
  emitter: StageEmitter;
  counters: PipelineCounters;
  trackChanges?: boolean;
  /**
   * The caller can feed a stage its inputs again after a restore, from an input's id on (the
   * processor re-reads its repartition topic): a stage that offers `replay` then keeps the
   * inputs it can re-derive out of its changelog.
   */
  replayInputs?: boolean;
}

/** The stateful tail of a pipeline: a reduce, or a window over a reduce. */
export interface StatefulSpec {
  readonly kind: 'reduce' | 'window';
  /** Reads an event's group and value (after the stateless steps). */
  readonly extract: AggregateExtractor;
  /** The `group_by` paths: the processor repartitions unless they are the record key already. */
  readonly groupBy: readonly string[];
  readonly latenessMs: number;
  readonly idleTimeoutMs: number | undefined;
  /** Which rises of its watermark input it acts on: where a source must announce its time. */
  readonly watermarkBoundaries: WatermarkBoundaries;
  /**
   * Whether an input alone can make it emit (a reduce's running result, a window's updates);
   * if not, it emits only when its watermark moves, and its folded inputs wait for that.
   */
  readonly emitsOnInput: boolean;
  createStage(options: StageFactoryOptions): StatefulStage;
  /**
   * A combiner for map-side pre-aggregation, where one is exact: not for sessions (they merge by
   * the gaps between events) nor with an idle timeout (a flush can fire a window early, and a
   * folded event could then no longer be reported late with its payload).
   */
  createCombiner: (() => Combiner) | undefined;
}

export interface CompiledPipeline {
  readonly id: string;
  readonly definition: PipelineDefinition;
  readonly enabled: boolean;
  /** Whether the stateless steps write to the event (they then get a copy of their own). */
  readonly mutates: boolean;
  accepts(eventType: string): boolean;
  /** Runs the stateless steps in order; stops at the first that does not pass. */
  runStateless(item: WorkItem): Verdict;
  readonly stateful: StatefulSpec | undefined;
}

export function compilePipeline(
  definition: PipelineDefinition,
  options: CompileOptions = {},
): CompiledPipeline {
  const lookups = options.lookups ?? NO_LOOKUPS;
  const steps: Step[] = [];
  let stateful: StatefulSpec | undefined;
  let mutates = false;
  definition.operators.forEach((operator, index) => {
    const label = `operators[${index}] (${operator.type})`;
    if (operator.type === 'reduce' || operator.type === 'window') {
      stateful = compileStateful(definition.id, operator, label);
      return;
    }
    mutates ||= operator.type !== 'filter';
    steps.push(compileStep(operator, label, lookups));
  });

  const types = new Set(definition.source_event_types);
  const accepts = types.size === 0 ? () => true : (eventType: string) => types.has(eventType);

  return {
    id: definition.id,
    definition,
    enabled: definition.enabled,
    mutates,
    accepts,
    runStateless: chain(steps),
    stateful,
  };
}

export function compileStep(
  operator: Exclude<Operator, ReduceOperator | WindowOperator>,
  label: string,
  lookups: LookupTables,
): Step {
  switch (operator.type) {
    case 'filter':
      return compileFilter(operator, label);
    case 'map':
      return compileMap(operator, label);
    case 'branch':
      return compileBranch(operator, label);
    case 'enrich':
      return compileEnrich(operator, label, lookups);
  }
}

/** One function for the whole chain, unrolled for the short chains most pipelines have. */
export function chain(steps: Step[]): (item: WorkItem) => Verdict {
  const [a, b, c] = steps;
  switch (steps.length) {
    case 0:
      return () => PASS;
    case 1:
      return a!;
    case 2:
      return (item) => {
        const verdict = a!(item);
        return verdict === PASS ? b!(item) : verdict;
      };
    case 3:
      return (item) => {
        let verdict = a!(item);
        if (verdict !== PASS) return verdict;
        verdict = b!(item);
        return verdict === PASS ? c!(item) : verdict;
      };
    default:
      return (item) => {
        for (let i = 0; i < steps.length; i++) {
          const verdict = steps[i]!(item);
          if (verdict !== PASS) return verdict;
        }
        return PASS;
      };
  }
}

const SECOND = 1000;

export function compileStateful(
  pipelineId: string,
  operator: ReduceOperator | WindowOperator,
  label: string,
): StatefulSpec {
  const reduce = operator.type === 'reduce' ? operator : operator.aggregation;
  const reduceLabel =
    operator.type === 'reduce' ? label : `${label.replace(' (window)', '')}.aggregation (reduce)`;
  const aggregator = aggregatorFor(reduce.function);
  const groupBy = groupByPaths(reduce);
  const extract = compileAggregateInput(reduce, reduceLabel);

  if (operator.type === 'reduce') {
    return {
      kind: 'reduce',
      extract,
      groupBy,
      latenessMs: 0,
      idleTimeoutMs: undefined,
      watermarkBoundaries: NO_BOUNDARY,
      emitsOnInput: true,
      createStage: (options) => new ReduceStage({ ...options, pipelineId, aggregator }),
      createCombiner: () => new ReduceCombiner(aggregator),
    };
  }

  const { config } = operator;
  const latenessMs = Math.round((config.allowed_lateness_seconds ?? 0) * SECOND);
  const idleTimeoutMs =
    config.idle_timeout_seconds === undefined
      ? undefined
      : Math.round(config.idle_timeout_seconds * SECOND);
  const emitUpdates = operator.emit === 'update';
  const base = { pipelineId, aggregator, latenessMs, idleTimeoutMs, emitUpdates };
  const spec = {
    kind: 'window' as const,
    extract,
    groupBy,
    latenessMs,
    idleTimeoutMs,
    emitsOnInput: emitUpdates,
  };
  if (config.window_type === 'session') {
    const gapMs = Math.round(sessionGapSecondsOf(config) * SECOND);
    return {
      ...spec,
      watermarkBoundaries: EVERY_RISE,
      createStage: (options) => new SessionWindowStage({ ...options, ...base, gapMs }),
      createCombiner: undefined,
    };
  }
  const sizeMs = Math.round(config.size_seconds! * SECOND);
  // A null slide is AllSource's "slide by the size" (docs/design.md §2).
  const slideMs =
    config.window_type === 'sliding' ? Math.round(slideSecondsOf(config)! * SECOND) : sizeMs;
  return {
    ...spec,
    // An idle timeout acts on the wall clock since the last rise: each one keeps a source alive.
    watermarkBoundaries:
      idleTimeoutMs === undefined ? windowEnds(sizeMs, slideMs, latenessMs) : EVERY_RISE,
    createStage: (options) => new HoppingWindowStage({ ...options, ...base, sizeMs, slideMs }),
    createCombiner:
      idleTimeoutMs === undefined
        ? () => new HoppingCombiner(aggregator, sizeMs, slideMs)
        : undefined,
  };
}
