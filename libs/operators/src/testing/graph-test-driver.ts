import { toEvent, validateGraphDefinition } from '@sluice/contracts';
import type { PipelineGraph, ResultRecord } from '@sluice/contracts';

import type { PipelineCounters } from '../counters';
import { GraphRun } from '../graph/graph-run';
import { planOfGraph } from '../graph/plan';
import type { DeadLetter } from '../pipeline-run';
import type { KeyedRecord } from '../reference';
import type { LateRecord, StateEntry } from '../stateful/stage';
import { lookupTablesFrom } from '../stateless/enrich';
import type { PipelineTestDriverOptions } from './pipeline-test-driver';

/**
 * PipelineTestDriver for a graph definition (docs/design.md §9): events go to a named source,
 * event time moves per source (a join waits for both of its inputs'), results are read per
 * sink, and `restart` restores every stateful node (windows and joins) from its snapshot.
 *
 * ```ts
 * const driver = GraphTestDriver.create(ordersPaid);
 * driver.send('orders', order).send('payments', payment);
 * driver.advanceEventTime('orders', '2026-11-02T00:00:00Z');
 * expect(driver.readValues('out')).toEqual([expect.objectContaining({ key: 'o-1' })]);
 * ```
 */
export class GraphTestDriver {
  private results = new Map<string, Array<KeyedRecord<ResultRecord>>>();
  private lateRecords = new Map<string, Array<KeyedRecord<LateRecord>>>();
  private deadLetters: DeadLetter[] = [];
  private readonly run: GraphRun;
  private readonly eventTime = new Map<string, number>();
  /** Names each record sent (a join ignores a repeat): carried across a restart, as offsets are. */
  private sent = 0;
  private wallClock: number;

  private constructor(
    readonly graph: PipelineGraph,
    private readonly options: PipelineTestDriverOptions,
  ) {
    const lookups = options.lookups;
    const tables =
      lookups === undefined || typeof lookups.get === 'function'
        ? (lookups as never)
        : lookupTablesFrom(lookups as never);
    const push = <T>(map: Map<string, T[]>, sinkId: string, record: T) => {
      const list = map.get(sinkId);
      if (list) list.push(record);
      else map.set(sinkId, [record]);
    };
    this.run = new GraphRun(
      planOfGraph(graph),
      {
        result: (sinkId, key, value) => push(this.results, sinkId, { key, value }),
        late: (sinkId, key, value) => push(this.lateRecords, sinkId, { key, value }),
        deadLetter: (record) => this.deadLetters.push(record),
      },
      { lookups: tables, trackChanges: true },
    );
    this.wallClock = options.wallClock ?? 0;
    this.run.onWallClock(this.wallClock);
  }

  /** Validates a graph definition (JSON-shaped, as a user writes it) and starts a driver for it. */
  static create(definition: unknown, options: PipelineTestDriverOptions = {}): GraphTestDriver {
    const validation = validateGraphDefinition(definition);
    if (!validation.valid) {
      const problems = validation.errors.map((e) => `${e.path}: ${e.message}`).join('; ');
      throw new Error(`invalid graph definition: ${problems}`);
    }
    return new GraphTestDriver(validation.graph, options);
  }

  /** Sends events to `sourceId` in order; each valid one advances that source's event time. */
  send(sourceId: string, ...events: unknown[]): this {
    for (const raw of events) {
      const decoded = toEvent(raw);
      if (!decoded.ok) {
        this.deadLetters.push({ pipeline_id: null, reason: decoded.reason, event: raw });
        continue;
      }
      this.run.process(sourceId, decoded.event, String(++this.sent));
      this.advance(sourceId, decoded.event.time);
    }
    return this;
  }

  /** Moves a source's event time forward without an event (a watermark marker). */
  advanceEventTime(sourceId: string, to: number | string): this {
    this.advance(sourceId, typeof to === 'number' ? to : Date.parse(to));
    return this;
  }

  /** Moves the wall clock (drives `idle_timeout_seconds` of windows). */
  advanceWallClock(ms: number): this {
    this.wallClock += ms;
    this.run.onWallClock(this.wallClock);
    return this;
  }

  /** End of input: every open window fires and every join decides what waits. */
  endOfInput(): this {
    this.run.flush();
    return this;
  }

  /** What `sinkId` received since the last read, with the Kafka keys. */
  readResults(sinkId: string): Array<KeyedRecord<ResultRecord>> {
    const out = this.results.get(sinkId) ?? [];
    this.results.delete(sinkId);
    return out;
  }

  readValues(sinkId: string): ResultRecord[] {
    return this.readResults(sinkId).map((record) => record.value);
  }

  readLate(sinkId: string): Array<KeyedRecord<LateRecord>> {
    const out = this.lateRecords.get(sinkId) ?? [];
    this.lateRecords.delete(sinkId);
    return out;
  }

  readDeadLetters(): DeadLetter[] {
    const out = this.deadLetters;
    this.deadLetters = [];
    return out;
  }

  stats(): PipelineCounters {
    return { ...this.run.counters };
  }

  /** Every state entry of a stateful node (what its changelog holds after compaction). */
  snapshot(nodeId: string): StateEntry[] {
    return JSON.parse(JSON.stringify(this.stageOf(nodeId).snapshot())) as StateEntry[];
  }

  /** A node's state changes since the last call, as the processor mirrors them. */
  readChangelog(nodeId: string): StateEntry[] {
    return JSON.parse(JSON.stringify(this.stageOf(nodeId).drainChanges())) as StateEntry[];
  }

  /**
   * A new driver for the same graph whose stateful nodes are restored from this one's snapshots
   * (through JSON, as a changelog carries them): what a replica taking over a partition sees.
   */
  restart(): GraphTestDriver {
    const next = new GraphTestDriver(this.graph, { ...this.options, wallClock: this.wallClock });
    for (const nodeId of this.run.statefulNodeIds()) {
      const stage = next.stageOf(nodeId);
      stage.restore(this.snapshot(nodeId));
      stage.drainChanges();
    }
    for (const [sourceId, time] of this.eventTime) next.advance(sourceId, time);
    next.sent = this.sent;
    return next;
  }

  private advance(sourceId: string, time: number): void {
    if (time <= (this.eventTime.get(sourceId) ?? -Infinity)) return;
    this.eventTime.set(sourceId, time);
    this.run.advanceTo(sourceId, time);
  }

  private stageOf(nodeId: string) {
    const stage = this.run.stageOf(nodeId);
    if (!stage) throw new Error(`the graph has no reduce, window or join ${nodeId}`);
    return stage;
  }
}
