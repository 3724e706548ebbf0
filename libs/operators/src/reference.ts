import { toEvent } from '@sluice/contracts';
import type { PipelineDefinition, ResultRecord, SluiceEvent } from '@sluice/contracts';

import type { PipelineCounters } from './counters';
import { GraphRun } from './graph/graph-run';
import { LINEAR_SINK_ID, LINEAR_SOURCE_ID, planOfLinear } from './graph/plan';
import type { PipelinePlan } from './graph/plan';
import type { CompileOptions } from './pipeline';
import type { DeadLetter } from './pipeline-run';
import type { LateRecord } from './stateful/stage';

export interface KeyedRecord<T> {
  key: string;
  value: T;
}

export interface ReferenceResult {
  results: Array<KeyedRecord<ResultRecord>>;
  late: Array<KeyedRecord<LateRecord>>;
  dead_letters: DeadLetter[];
  stats: PipelineCounters;
}

/** What one sink of a graph received. */
export interface SinkOutput {
  topic: string;
  results: Array<KeyedRecord<ResultRecord>>;
  late: Array<KeyedRecord<LateRecord>>;
}

export interface GraphReferenceResult {
  /** By sink id. */
  sinks: Record<string, SinkOutput>;
  dead_letters: DeadLetter[];
  stats: PipelineCounters;
}

/** An event as one of a graph's sources read it. */
export interface SourcedEvent {
  source: string;
  event: unknown;
}

/**
 * The in-process reference run (docs/design.md §4): the events in the order given, every valid event
 * advancing event time whatever its type, every open window flushed at the end of input. It is
 * the oracle that every distributed run is compared against, and what the admin's preview shows.
 * Events are envelopes as producers write them; an invalid one is a dead letter with its reason
 * (`pipeline_id: null`), exactly as the processor would dead-letter the record.
 */
export function runReference(
  definition: PipelineDefinition,
  events: Iterable<unknown>,
  options: CompileOptions = {},
): ReferenceResult {
  const plan = planOfLinear(definition, []);
  const run = runGraphReference(plan, sourced(events), options);
  const { results, late } = run.sinks[LINEAR_SINK_ID]!;
  return { results, late, dead_letters: run.dead_letters, stats: run.stats };
}

/**
 * The reference run of a graph (docs/design.md §9): each event enters the source it is tagged
 * with; a stateful node's event time is the largest its own source has seen, so a quiet source
 * holds back only the nodes below it. Results come per sink.
 */
export function runGraphReference(
  plan: PipelinePlan,
  events: Iterable<SourcedEvent>,
  options: CompileOptions = {},
): GraphReferenceResult {
  const sinks: Record<string, SinkOutput> = {};
  for (const sink of plan.sinks) sinks[sink.id] = { topic: sink.topic, results: [], late: [] };
  const output: GraphReferenceResult = { sinks, dead_letters: [], stats: undefined as never };
  const run = new GraphRun(
    plan,
    {
      result: (sinkId, key, value) => sinks[sinkId]!.results.push({ key, value }),
      late: (sinkId, key, value) => sinks[sinkId]!.late.push({ key, value }),
      deadLetter: (record) => output.dead_letters.push(record),
    },
    options,
  );
  const eventTime = new Map(plan.sources.map((source) => [source.id, -Infinity]));
  for (const { source, event: raw } of events) {
    if (!eventTime.has(source)) throw new Error(`the pipeline has no source ${source}`);
    const decoded = isDecoded(raw) ? { ok: true as const, event: raw } : toEvent(raw);
    if (!decoded.ok) {
      output.dead_letters.push({ pipeline_id: null, reason: decoded.reason, event: raw });
      continue;
    }
    run.process(source, decoded.event);
    if (decoded.event.time > eventTime.get(source)!) {
      eventTime.set(source, decoded.event.time);
      run.advanceTo(source, decoded.event.time);
    }
  }
  run.flush();
  output.stats = { ...run.counters };
  return output;
}

function* sourced(events: Iterable<unknown>): Iterable<SourcedEvent> {
  for (const event of events) yield { source: LINEAR_SOURCE_ID, event };
}

function isDecoded(value: unknown): value is SluiceEvent {
  return (
    typeof value === 'object' &&
    value !== null &&
    'envelope' in value &&
    'time' in value &&
    typeof (value as SluiceEvent).time === 'number'
  );
}
