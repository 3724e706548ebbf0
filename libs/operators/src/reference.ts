import { toEvent } from '@sluice/contracts';
import type { PipelineDefinition, ResultRecord, SluiceEvent } from '@sluice/contracts';

import type { PipelineCounters } from './counters';
import { compilePipeline } from './pipeline';
import type { CompileOptions } from './pipeline';
import { PipelineRun } from './pipeline-run';
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
  const output: ReferenceResult = {
    results: [],
    late: [],
    dead_letters: [],
    stats: undefined as never,
  };
  const run = new PipelineRun(compilePipeline(definition, options), {
    result: (key, value) => output.results.push({ key, value }),
    late: (key, value) => output.late.push({ key, value }),
    deadLetter: (record) => output.dead_letters.push(record),
  });
  let eventTime = -Infinity;
  for (const raw of events) {
    const decoded = isDecoded(raw) ? { ok: true as const, event: raw } : toEvent(raw);
    if (!decoded.ok) {
      output.dead_letters.push({ pipeline_id: null, reason: decoded.reason, event: raw });
      continue;
    }
    run.process(decoded.event);
    if (decoded.event.time > eventTime) {
      eventTime = decoded.event.time;
      run.advanceTo(eventTime);
    }
  }
  run.flush();
  output.stats = { ...run.counters };
  return output;
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
