// A join node of a plan, compiled: how each side's record gets its join key, and a stage that
// holds the join's state and emits result records (docs/design.md §9 "Joins"). An interval join
// when both inputs are streams; a temporal stream-table join when the right input is a table.
// The stage is a StatefulStage like a window's, so the processor places, repartitions, mirrors
// and restores it as it does any stateful node: a join's input is a StageInput whose `group` is
// the join key and whose `side` says which input it came from. Records carry their envelopes
// into the state, so a late one is reported with its event.
import { joinInterval } from '@sluice/contracts';
import type { EventEnvelope, JoinOperator, JoinResult } from '@sluice/contracts';

import { compileGetter } from '../paths';
import type { Getter } from '../paths';
import type { StageFactoryOptions } from '../pipeline';
import type { PartialAggregate } from '../stateful/combiner';
import type { LateRecord, StageInput, StateEntry, StatefulStage } from '../stateful/stage';
import { iso } from '../stateful/stage';
import { EVERY_RISE } from '../stateful/watermark-boundaries';
import type { WatermarkBoundaries } from '../stateful/watermark-boundaries';
import { IntervalJoin } from './interval-join';
import type { JoinSide } from './interval-join';
import type { JoinState } from './join-state';
import { TableJoin } from './table-join';
import type { StreamRecord, TableRow } from './table-join';

export interface JoinNodeSpec {
  readonly id: string;
  readonly label: string;
  readonly operator: JoinOperator;
  /** The right input is a table source: each left record joins the row current at its time. */
  readonly table: boolean;
  /** The key path of each side (a table's rows by the source's `key`). */
  readonly keyPaths: { left: string; right: string };
}

/** A join as the processor hosts a stateful node (compare StatefulSpec). */
export interface JoinSpec {
  readonly kind: 'join';
  readonly latenessMs: number;
  /** After this long without records an upstream stops holding the join's watermark back. */
  readonly idleTimeoutMs: number | undefined;
  /** Every rise: an interval expires, or a table version is released, at any event time. */
  readonly watermarkBoundaries: WatermarkBoundaries;
  /** A record can match at once. */
  readonly emitsOnInput: true;
  /** Joins fold nothing upstream. */
  readonly createCombiner: undefined;
  /** The record's join key as a string; `undefined`: it has none (the record is skipped). */
  keyOf(side: JoinSide, envelope: EventEnvelope): string | undefined;
  createStage(options: StageFactoryOptions): StatefulStage;
}

export function compileJoin(pipelineId: string, node: JoinNodeSpec): JoinSpec {
  const getters: Record<JoinSide, Getter> = {
    left: compileGetter(node.keyPaths.left),
    right: compileGetter(node.keyPaths.right),
  };
  const { allowed_lateness_seconds: lateness, idle_timeout_seconds: idle } = node.operator;
  const latenessMs = Math.round((lateness ?? 0) * 1000);
  const context: StageContext = {
    pipelineId,
    node,
    latenessMs,
    shape: shapeOf(pipelineId, node),
  };
  return {
    kind: 'join',
    latenessMs,
    idleTimeoutMs: idle === undefined ? undefined : Math.round(idle * 1000),
    watermarkBoundaries: EVERY_RISE,
    emitsOnInput: true,
    createCombiner: undefined,
    keyOf: (side, envelope) => joinKey(getters[side](envelope)),
    createStage: (options) =>
      node.table ? new TableJoinStage(context, options) : new IntervalJoinStage(context, options),
  };
}

/** Scalars join by their text, as Kafka keys would; objects and arrays are no key. */
function joinKey(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/**
 * What the join keeps of a record and how it shapes a result: without a `select`, each side's
 * payload; with one, only the fields it names of that side, so state and changelog hold no more
 * than the results need. A table join that dead-letters a record with no row keeps its left
 * records whole, since the dead letter carries the event. A late record is reported from the
 * envelope in hand as it arrives.
 */
interface Shape {
  keep(side: JoinSide, envelope: EventEnvelope): unknown;
  result(key: string, time: number, left: unknown, right: unknown): JoinResult;
}

interface StageContext {
  pipelineId: string;
  node: JoinNodeSpec;
  latenessMs: number;
  shape: Shape;
}

type Project = (side: JoinSide, envelope: EventEnvelope) => unknown;
type Fill = (result: JoinResult, left: unknown, right: unknown) => void;

function shapeOf(pipelineId: string, node: JoinNodeSpec): Shape {
  const [project, fill] = node.operator.select
    ? selected(node.operator.select)
    : ([
        (_side, envelope) => envelope.payload,
        (result, left, right) => {
          result.left = (left ?? null) as JoinResult['left'];
          result.right = (right ?? null) as JoinResult['right'];
        },
      ] satisfies [Project, Fill]);
  const whole = node.table && node.operator.on_missing === 'error';
  return {
    keep: (side, envelope) => (whole && side === 'left' ? envelope : project(side, envelope)),
    result: (key, time, left, right) => {
      const result: JoinResult = {
        pipeline_id: pipelineId,
        join: node.id,
        key,
        event_time: iso(time),
      };
      const kept = whole && left !== null ? project('left', left as EventEnvelope) : left;
      fill(result, kept, right);
      return result;
    },
  };
}

/** A `select`: each side keeps the fields named of it; a result lists them in the select's order. */
function selected(select: Record<string, string>): [Project, Fill] {
  const picks = Object.entries(select).map(([name, path]) => {
    const dot = path.indexOf('.');
    return { name, side: path.slice(0, dot) as JoinSide, get: compileGetter(path.slice(dot + 1)) };
  });
  const sides = {
    left: picks.filter((pick) => pick.side === 'left'),
    right: picks.filter((pick) => pick.side === 'right'),
  };
  return [
    (side, envelope) => {
      const kept: Record<string, unknown> = {};
      for (const { name, get } of sides[side]) kept[name] = get(envelope) ?? null;
      return kept;
    },
    (result, left, right) => {
      for (const { name, side } of picks) {
        const kept = (side === 'left' ? left : right) as Record<string, unknown> | null;
        result[name] = kept === null ? null : kept[name];
      }
    },
  ];
}

/** What both stages share: emitting, and everything but how a record enters the join's state. */
abstract class JoinStage<State extends JoinState> implements StatefulStage {
  protected readonly state: State;
  /** The envelope of the record being added: what a record found late is reported with. */
  protected arriving: EventEnvelope | undefined;

  constructor(
    protected readonly context: StageContext,
    protected readonly options: StageFactoryOptions,
  ) {
    this.state = this.createState();
  }

  abstract add(input: StageInput): void;
  protected abstract createState(): State;

  addPartial(_partial: PartialAggregate): void {
    throw new Error(`${this.context.node.label}: a join takes no partial aggregates`);
  }
  onWallClock(_now: number): void {}
  advanceTo(eventTime: number): void {
    this.state.advanceTo(eventTime);
  }
  flush(): void {
    this.state.flush();
  }
  watermark(): number {
    return this.state.watermark();
  }
  size(): number {
    return this.state.size();
  }
  drainChanges(): StateEntry[] {
    return this.state.drainChanges();
  }
  snapshot(): StateEntry[] {
    return this.state.snapshot();
  }
  snapshotKey(key: string): unknown {
    return this.state.snapshotKey(key);
  }
  restore(entries: Iterable<StateEntry>): void {
    this.state.restore(entries);
  }
  stateKeys(): string[] {
    return this.state.stateKeys();
  }
  restoresJsonText(key: string): boolean {
    return this.state.restoresJsonText(key);
  }
  clear(): void {
    this.state.clear();
  }

  protected emit(key: string, time: number, left: unknown, right: unknown): void {
    this.options.counters.emitted += 1;
    this.options.emitter.result(key, this.context.shape.result(key, time, left, right));
  }

  /** Lateness is decided as a record is added, so the envelope is the one arriving. */
  protected emitLate(key: string, side: JoinSide, time: number, watermark: number): void {
    this.options.counters.late += 1;
    const record: LateRecord = {
      pipeline_id: this.context.pipelineId,
      group: key,
      side,
      event_time: iso(time),
      watermark: iso(watermark),
      event: this.arriving!,
    };
    this.options.emitter.late(key, record);
  }
}

class IntervalJoinStage extends JoinStage<IntervalJoin> {
  protected createState(): IntervalJoin {
    const { operator } = this.context.node;
    return new IntervalJoin({
      kind: operator.kind ?? 'inner',
      ...joinInterval(operator),
      latenessMs: this.context.latenessMs,
      trackChanges: this.options.trackChanges,
      // Buffered records are re-read from the repartition topic rather than mirrored: every
      // record would otherwise be written to the changelog and tombstoned again an interval later.
      mirrorRecords: !this.options.replayInputs,
      emitter: {
        joined: ({ key, time, left, right }) => this.emit(key, time, left, right),
        late: ({ key, side, time }, watermark) => this.emitLate(key, side, time, watermark),
      },
    });
  }

  /**
   * With `replayInputs`, ids are input offsets and come in order, each side's: one at or below
   * the highest a side has taken is a repeat (a batch delivered again), ignored as the join
   * ignores a repeated id when it mirrors its records. Without them it indexes no id.
   */
  private highest = { left: -1, right: -1 };

  add({ side, group, time, id, envelope }: StageInput): void {
    if (!this.firstTime(side!, id!)) return;
    this.arriving = envelope;
    const value = this.context.shape.keep(side!, envelope);
    // One record may reach both sides (through two routes of a branch): ids are per side.
    this.state.add({ side: side!, key: group!, time, id: `${side![0]}${id}`, value });
  }

  /** Buffered records are not in the changelog: read again, they are buffered again. */
  replay({ side, group, time, id, envelope }: StageInput): void {
    if (!this.firstTime(side!, id!)) return;
    const value = this.context.shape.keep(side!, envelope);
    this.state.replay({ side: side!, key: group!, time, id: `${side![0]}${id}`, value });
  }

  override restore(entries: Iterable<StateEntry>): void {
    this.highest = { left: -1, right: -1 };
    super.restore(entries);
  }

  override clear(): void {
    this.highest = { left: -1, right: -1 };
    super.clear();
  }

  /** Whether an input comes for the first time (always, unless ids are input offsets). */
  private firstTime(side: JoinSide, id: string): boolean {
    if (!this.options.replayInputs) return true;
    const offset = Number(id);
    if (offset <= this.highest[side]) return false;
    this.highest[side] = offset;
    return true;
  }

  /** The input's offset, without the side the id starts with. */
  replayFrom(): string | undefined {
    return this.state.oldestUnmirrored()?.slice(1);
  }
}

class TableJoinStage extends JoinStage<TableJoin> {
  protected createState(): TableJoin {
    return new TableJoin({
      temporal: true,
      onMissing: this.context.node.operator.on_missing ?? 'skip',
      latenessMs: this.context.latenessMs,
      trackChanges: this.options.trackChanges,
      // A waiting order is re-read from the repartition topic rather than mirrored: most of a
      // temporal join's changelog would otherwise be orders written and tombstoned again.
      mirrorStream: !this.options.replayInputs,
      emitter: {
        joined: ({ key, time, stream, table }) => this.emit(key, time, stream, table),
        missing: (record) => this.missing(record),
        late: (record: StreamRecord | TableRow, watermark) =>
          // Only a stream record has an id: a late one is the left side's, else a table row's.
          this.emitLate(record.key, 'id' in record ? 'left' : 'right', record.time, watermark),
      },
    });
  }

  add({ side, group, time, id, envelope }: StageInput): void {
    this.arriving = envelope;
    const value = this.context.shape.keep(side!, envelope);
    if (side === 'left') this.state.add({ key: group!, time, id: id!, value });
    else this.state.upsert({ key: group!, time, value });
  }

  /** Table rows are in the changelog; a stream record may have been waiting. */
  replay({ side, group, time, id, envelope }: StageInput): void {
    if (side !== 'left') return;
    this.arriving = envelope;
    const value = this.context.shape.keep(side, envelope);
    this.state.replay({ key: group!, time, id: id!, value });
  }

  replayFrom(): string | undefined {
    return this.state.oldestUnmirrored();
  }

  private missing({ key, time, id, value }: StreamRecord): void {
    this.options.counters.failed += 1;
    this.options.emitter.refused?.({
      reason: `${this.context.node.label}: no row with key ${JSON.stringify(key)} at ${iso(time)}`,
      event: value as EventEnvelope,
      key,
      id,
    });
  }
}
