export { aggregateAll, aggregatorFor } from './aggregate/aggregators';
export type { Accumulator, Aggregator } from './aggregate/aggregators';
export { DEFAULT_GROUP, NO_GROUP } from './aggregate/aggregate-input';
export type { AggregateExtractor, AggregateInput } from './aggregate/aggregate-input';
export { exactSumAdd, exactSumValue } from './aggregate/exact-sum';
export { emptyCounters, resetCounters } from './counters';
export type { PipelineCounters } from './counters';
export { compileGetter, compileSetter, ownEnvelope } from './paths';
export { compilePipeline } from './pipeline';
export type {
  CompiledPipeline,
  CompileOptions,
  StageFactoryOptions,
  StatefulSpec,
} from './pipeline';
export { PipelineRun, statelessKey } from './pipeline-run';
export type { DeadLetter, PipelineRunOptions, RunSink, StageInputSink } from './pipeline-run';
export { runReference } from './reference';
export type { KeyedRecord, ReferenceResult } from './reference';
export { HoppingCombiner, ReduceCombiner } from './stateful/combiner';
export type { Combiner, PartialAggregate } from './stateful/combiner';
export { JsonText, parsedStateValue, parseJsonText } from './stateful/json-text';
export { WATERMARK_KEY, groupStateKey, resultKey } from './stateful/stage';
export { EVERY_RISE, NO_BOUNDARY, windowEnds } from './stateful/watermark-boundaries';
export type { WatermarkBoundaries } from './stateful/watermark-boundaries';
export type {
  LateRecord,
  StageEmitter,
  StageInput,
  StateEntry,
  StatefulStage,
} from './stateful/stage';
export { DEFAULT_ENRICH_KEY, lookupTablesFrom, NO_LOOKUPS } from './stateless/enrich';
export type { LookupTables } from './stateless/enrich';
export { FAILED, FILTERED, PASS, SKIPPED } from './step';
export type { Verdict, WorkItem } from './step';
export { GraphRun } from './graph/graph-run';
export type { GraphRunOptions, GraphRunSink } from './graph/graph-run';
export { LINEAR_SINK_ID, LINEAR_SOURCE_ID, planOfGraph, planOfLinear } from './graph/plan';
export type { PipelinePlan, PlanInput, PlanSink, PlanSource, PlanTransform } from './graph/plan';
export { runGraphReference } from './reference';
export type { GraphReferenceResult, SinkOutput, SourcedEvent } from './reference';
export { statefulNodesOf } from './graph/stateful-nodes';
export type { StatefulNode } from './graph/stateful-nodes';
export { IntervalJoin } from './join/interval-join';
export type {
  IntervalJoinOptions,
  JoinedRecord,
  JoinEmitter,
  JoinInput,
  JoinKind,
  JoinSide,
} from './join/interval-join';
export { TableJoin } from './join/table-join';
export type {
  OnMissing,
  StreamRecord,
  TableJoined,
  TableJoinEmitter,
  TableJoinOptions,
  TableRow,
} from './join/table-join';
