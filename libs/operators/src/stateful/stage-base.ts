import type { ReduceFunction, WindowResult } from '@sluice/contracts';

import type { Accumulator, Aggregator } from '../aggregate/aggregators';
import type { PipelineCounters } from '../counters';
import type { PartialAggregate } from './combiner';
import type { LateRecord, StageEmitter, StageInput, StateEntry } from './stage';
import { iso, resultKey } from './stage';

export interface StageOptions {
  pipelineId: string;
  aggregator: Aggregator;
  emitter: StageEmitter;
  counters: PipelineCounters;
  /** Record changed keys for `drainChanges` (the processor's changelog); off in-process. */
  trackChanges?: boolean;
}

/** What every stage shares: emitting results and late records, and tracking changed keys. */
export abstract class StageBase {
  protected readonly pipelineId: string;
  protected readonly aggregator: Aggregator;
  protected readonly fn: ReduceFunction;
  protected readonly emitter: StageEmitter;
  protected readonly counters: PipelineCounters;
  /** Whether changed keys are recorded; callers skip building keys when not. */
  protected readonly tracking: boolean;
  private readonly changed: Map<string, unknown> | undefined;

  constructor(options: StageOptions) {
    this.pipelineId = options.pipelineId;
    this.aggregator = options.aggregator;
    this.fn = options.aggregator.fn;
    this.emitter = options.emitter;
    this.counters = options.counters;
    this.tracking = options.trackChanges === true;
    this.changed = this.tracking ? new Map() : undefined;
  }

  /** Marks a key changed; its current value is read when the changes are drained. */
  protected touch(key: string): void {
    this.changed?.set(key, undefined);
  }

  drainChanges(): StateEntry[] {
    if (!this.changed || this.changed.size === 0) return [];
    const entries = [...this.changed.keys()].map((key) => ({
      key,
      value: this.snapshotKey(key) ?? null,
    }));
    this.changed.clear();
    return entries;
  }

  abstract snapshotKey(key: string): unknown;

  protected emitWindow(
    group: string | null,
    route: string | undefined,
    start: number,
    end: number,
    acc: Accumulator,
    final: boolean,
  ): void {
    this.counters.emitted += 1;
    const result: WindowResult = {
      pipeline_id: this.pipelineId,
      group,
      function: this.fn,
      value: this.aggregator.result(acc),
      count: acc.n,
      window: { start: iso(start), end: iso(end) },
      final,
    };
    if (route !== undefined) result.route = route;
    this.emitter.result(resultKey(this.pipelineId, route, group), result);
  }

  /**
   * A partial aggregate for a window that has fired. Combiners only fold inputs that cannot be
   * late, so this means the watermark moved by other means (an idle flush): the inputs are
   * reported late, as a summary since their events were folded away.
   */
  protected emitLatePartial(partial: PartialAggregate, windowStart: number, watermark: number) {
    this.counters.late += partial.acc.n;
    const record: LateRecord = {
      pipeline_id: this.pipelineId,
      group: partial.group,
      event_time: iso(windowStart),
      watermark: iso(watermark),
      event: {
        event_type: 'sluice.partial_aggregate',
        payload: { window_start: iso(windowStart), count: partial.acc.n },
      },
    };
    if (partial.route !== undefined) record.route = partial.route;
    this.emitter.late(resultKey(this.pipelineId, partial.route, partial.group), record);
  }

  protected emitLate(input: StageInput, watermark: number): void {
    this.counters.late += 1;
    const record: LateRecord = {
      pipeline_id: this.pipelineId,
      group: input.group,
      event_time: iso(input.time),
      watermark: iso(watermark),
      event: input.envelope,
    };
    if (input.route !== undefined) record.route = input.route;
    this.emitter.late(resultKey(this.pipelineId, input.route, input.group), record);
  }
}
