// A repartition record as a stateful task takes it: of its pipeline's current epoch or not, and
// as the input its node's stage adds.
import type { EventEnvelope } from '@sluice/contracts';
import type { StageInput } from '@sluice/operators';

import type { ActivePipeline } from '../pipelines/active-pipeline';
import { isLaterGeneration } from '../repartition/repartition-records';
import type { RepartitionRecord } from '../repartition/repartition-records';
import { NOT_PARSED } from './stage-outputs';

/** A record of a later definition than this replica knows: retried once it has caught up. */
export class DefinitionBehindError extends Error {
  override readonly name = 'DefinitionBehindError';
  readonly retriable = true;
}

/**
 * Whether the record is of the pipeline's current epoch. One of a later definition than this
 * replica knows (a reset, an update, a replay that has not reached it yet) throws: dropping it
 * would lose it for that epoch, so the task waits. One written before a reset, an update or a
 * replay is not this epoch's.
 */
export function ofEpoch(
  record: RepartitionRecord,
  pipeline: ActivePipeline,
  epoch: string | undefined,
): boolean {
  if (record.epoch === epoch) return true;
  if (isLaterGeneration(record.generation, pipeline.generation))
    throw new DefinitionBehindError(
      `a record of definition ${record.generation} of pipeline ${pipeline.id}, which has not reached this replica yet (it has ${pipeline.generation})`,
    );
  return false;
}

type EventRecord = Extract<RepartitionRecord, { kind: 'event' }>;

/** Fills the (reused) stage input from an event record read at `offset`. */
export function fillInput(input: StageInput, record: EventRecord, offset: string): void {
  input.group = record.group;
  input.route = record.route;
  input.value = record.value;
  input.time = record.time;
  if (record.side === undefined) {
    input.side = undefined;
    // An aggregate parses the event only if it turns out late (stage-outputs.ts).
    input.envelope = NOT_PARSED;
  } else {
    // A join keeps the event; the repartition offset names the record across restores.
    input.side = record.side;
    input.id = offset;
    input.envelope = JSON.parse(record.eventJson) as EventEnvelope;
  }
}
