// The records of a pipeline's repartition topic (docs/design.md §4, §5). Three kinds share it, in log
// order: a re-keyed event contribution, a partial aggregate a source partition folded from
// several events (see the operator library's combiner), and an upstream partition's watermark
// marker.
//
// An event record is a small JSON header, a newline, then the event's JSON: the header is all a
// stateful partition parses per record; the event is parsed only when it turns out to be late.
import type { Accumulator, PartialAggregate, StageInput } from '@sluice/operators';

/**
 * What a record says of the definition its source ran: the state epoch (records of another
 * epoch are not the state's), and the definition's generation, `<reset generation>.<version>`,
 * which orders definitions: a record of a later one than the reader knows must wait for it.
 */
export interface RecordStamp {
  epoch: string;
  generation: string;
}

export interface EventContribution extends Stamped {
  /** The stateful node it is for, when the pipeline has several (see PlacedNode.tag). */
  node: string | undefined;
  group: string | null;
  route: string | undefined;
  /** A join's input: the side it enters. */
  side: 'left' | 'right' | undefined;
  value: number;
  time: number;
  /** The event's JSON, read only if the event is late (or joined). */
  eventJson: string;
}

export interface WatermarkMarker extends Stamped {
  /** `<topic>/<partition>` of the source partition that sent it. */
  upstream: string;
  /** The largest event time that partition has seen, epoch ms. */
  time: number;
}

/** A decoded record's stamp: records from before generations carry none. */
export interface Stamped {
  epoch: string;
  generation: string | undefined;
}

export type RepartitionRecord =
  | ({ kind: 'event' } & EventContribution)
  | ({ kind: 'partial'; node: string | undefined; partial: PartialAggregate } & Stamped)
  | ({ kind: 'marker' } & WatermarkMarker);

interface EventHeader {
  e: string;
  d?: string;
  n?: string;
  g: string | null;
  r?: string;
  /** A join's side: `l` or `r`. */
  s?: 'l' | 'r';
  v: number;
  t: number;
}

interface PartialBody {
  e: string;
  d?: string;
  n?: string;
  g: string | null;
  r?: string;
  s?: number;
  a: Accumulator;
}

interface MarkerBody {
  m: string;
  e: string;
  d?: string;
  t: number;
}

export function encodeEvent(
  stamp: RecordStamp,
  node: string | undefined,
  input: StageInput,
  eventJson: string,
): string {
  const header: EventHeader = {
    e: stamp.epoch,
    d: stamp.generation,
    g: input.group,
    v: input.value,
    t: input.time,
  };
  if (node !== undefined) header.n = node;
  if (input.route !== undefined) header.r = input.route;
  if (input.side !== undefined) header.s = input.side === 'left' ? 'l' : 'r';
  return `${JSON.stringify(header)}\n${eventJson}`;
}

export function encodePartial(
  stamp: RecordStamp,
  node: string | undefined,
  partial: PartialAggregate,
): string {
  const body: PartialBody = {
    e: stamp.epoch,
    d: stamp.generation,
    g: partial.group,
    a: partial.acc,
  };
  if (node !== undefined) body.n = node;
  if (partial.route !== undefined) body.r = partial.route;
  if (partial.start !== null) body.s = partial.start;
  return JSON.stringify(body);
}

export function encodeMarker(stamp: RecordStamp, upstream: string, time: number): string {
  const body: MarkerBody = { m: upstream, e: stamp.epoch, d: stamp.generation, t: time };
  return JSON.stringify(body);
}

/**
 * Whether `generation` (a record's) is of a later definition than `current` (the reader's):
 * the reader has not been told of it yet.
 */
export function isLaterGeneration(generation: string | undefined, current: string): boolean {
  if (generation === undefined) return false;
  const [resets, version] = generation.split('.').map(Number);
  const [currentResets, currentVersion] = current.split('.').map(Number);
  if (resets !== currentResets) return resets! > currentResets!;
  return version! > currentVersion!;
}

/** Decodes a record; `undefined` for one that is not ours (nothing else should write there). */
export function decodeRepartitionRecord(value: string): RepartitionRecord | undefined {
  const newline = value.indexOf('\n');
  try {
    if (newline < 0) {
      const body = JSON.parse(value) as Partial<MarkerBody & PartialBody>;
      if (isAccumulator(body.a)) {
        return {
          kind: 'partial',
          epoch: String(body.e),
          generation: typeof body.d === 'string' ? body.d : undefined,
          node: typeof body.n === 'string' ? body.n : undefined,
          partial: {
            start: typeof body.s === 'number' ? body.s : null,
            route: body.r,
            group: body.g ?? null,
            acc: body.a,
          },
        };
      }
      if (typeof body.m !== 'string' || typeof body.t !== 'number') return undefined;
      return {
        kind: 'marker',
        epoch: String(body.e),
        generation: typeof body.d === 'string' ? body.d : undefined,
        upstream: body.m,
        time: body.t,
      };
    }
    const header = JSON.parse(value.slice(0, newline)) as EventHeader;
    if (typeof header.v !== 'number' || typeof header.t !== 'number') return undefined;
    return {
      kind: 'event',
      epoch: String(header.e),
      generation: typeof header.d === 'string' ? header.d : undefined,
      node: typeof header.n === 'string' ? header.n : undefined,
      group: header.g ?? null,
      route: header.r,
      side: header.s === 'l' ? 'left' : header.s === 'r' ? 'right' : undefined,
      value: header.v,
      time: header.t,
      eventJson: value.slice(newline + 1),
    };
  } catch {
    return undefined;
  }
}

function isAccumulator(value: unknown): value is Accumulator {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Accumulator).n === 'number' &&
    ((value as Accumulator).p === undefined || Array.isArray((value as Accumulator).p))
  );
}
