import { toEvent, validateDefinition } from '@sluice/contracts';
import type { PipelineDefinition, ResultRecord, WindowResult } from '@sluice/contracts';

import type { PipelineCounters } from '../counters';
import { compilePipeline } from '../pipeline';
import { PipelineRun } from '../pipeline-run';
import type { DeadLetter } from '../pipeline-run';
import type { KeyedRecord } from '../reference';
import type { LateRecord, StateEntry } from '../stateful/stage';
import { lookupTablesFrom } from '../stateless/enrich';
import type { LookupTables } from '../stateless/enrich';

export interface PipelineTestDriverOptions {
  /** Lookup tables for enrich: an implementation, or plain `{ table: { key: record } }`. */
  lookups?: LookupTables | Record<string, Record<string, Record<string, unknown>>>;
  /** The wall clock the driver starts at (epoch ms); `advanceWallClock` moves it. */
  wallClock?: number;
}

/**
 * Runs one pipeline in process, step by step, for users' own tests (what Kafka Streams users get
 * from TopologyTestDriver): send events, move event time and the wall clock by hand, read what
 * came out, and restart from a state snapshot as the processor does after a rebalance.
 *
 * ```ts
 * const driver = PipelineTestDriver.create(definition);
 * driver.send(orderEvent('2026-11-29T10:00:00Z', { total: 5 }));
 * driver.advanceEventTime('2026-11-30T00:00:00Z');
 * expect(driver.readValues()).toEqual([expect.objectContaining({ value: 5, final: true })]);
 * ```
 */
export class PipelineTestDriver {
  private results: Array<KeyedRecord<ResultRecord>> = [];
  private lateRecords: Array<KeyedRecord<LateRecord>> = [];
  private deadLetters: DeadLetter[] = [];
  private readonly run: PipelineRun;
  private eventTime = -Infinity;
  private wallClock: number;

  private constructor(
    readonly definition: PipelineDefinition,
    private readonly options: PipelineTestDriverOptions,
  ) {
    const lookups = options.lookups;
    const tables =
      lookups === undefined || typeof lookups.get === 'function'
        ? (lookups as LookupTables | undefined)
        : lookupTablesFrom(lookups as never);
    this.run = new PipelineRun(
      compilePipeline(definition, { lookups: tables }),
      {
        result: (key, value) => this.results.push({ key, value }),
        late: (key, value) => this.lateRecords.push({ key, value }),
        deadLetter: (record) => this.deadLetters.push(record),
      },
      { trackChanges: true },
    );
    this.wallClock = options.wallClock ?? 0;
    this.run.onWallClock(this.wallClock);
  }

  /** Validates a definition (JSON-shaped, as a user writes it) and starts a driver for it. */
  static create(definition: unknown, options: PipelineTestDriverOptions = {}): PipelineTestDriver {
    const validation = validateDefinition(definition);
    if (!validation.valid) {
      const problems = validation.errors.map((e) => `${e.path}: ${e.message}`).join('; ');
      throw new Error(`invalid pipeline definition: ${problems}`);
    }
    return new PipelineTestDriver(validation.definition, options);
  }

  /** Sends events in order; each valid one advances event time, as a source partition does. */
  send(...events: unknown[]): this {
    for (const raw of events) {
      const decoded = toEvent(raw);
      if (!decoded.ok) {
        this.deadLetters.push({ pipeline_id: null, reason: decoded.reason, event: raw });
        continue;
      }
      this.run.process(decoded.event);
      if (decoded.event.time > this.eventTime) {
        this.eventTime = decoded.event.time;
        this.run.advanceTo(this.eventTime);
      }
    }
    return this;
  }

  /** Moves event time forward without an event (a watermark marker from an upstream partition). */
  advanceEventTime(to: number | string): this {
    const time = typeof to === 'number' ? to : Date.parse(to);
    if (time > this.eventTime) {
      this.eventTime = time;
      this.run.advanceTo(time);
    }
    return this;
  }

  /** Moves the wall clock (drives `idle_timeout_seconds`). */
  advanceWallClock(ms: number): this {
    this.wallClock += ms;
    this.run.onWallClock(this.wallClock);
    return this;
  }

  /** End of input: every open window fires, as at the end of a reference run. */
  endOfInput(): this {
    this.run.flush();
    return this;
  }

  /** Results emitted since the last read, with their Kafka keys. */
  readResults(): Array<KeyedRecord<ResultRecord>> {
    const out = this.results;
    this.results = [];
    return out;
  }

  /** Result values emitted since the last read. */
  readValues(): ResultRecord[] {
    return this.readResults().map((record) => record.value);
  }

  /** Final window results since the last read (drops `emit: update` intermediate ones). */
  readFinalWindows(): WindowResult[] {
    return this.readValues().filter(
      (value): value is WindowResult => (value as WindowResult).final === true,
    );
  }

  readLate(): Array<KeyedRecord<LateRecord>> {
    const out = this.lateRecords;
    this.lateRecords = [];
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

  watermark(): number {
    return this.run.stage?.watermark() ?? -Infinity;
  }

  /** Every state entry (what a changelog holds after compaction). */
  snapshot(): StateEntry[] {
    return JSON.parse(JSON.stringify(this.run.stage?.snapshot() ?? []));
  }

  /** State changes since the last call, as the processor mirrors them to the changelog. */
  readChangelog(): StateEntry[] {
    return JSON.parse(JSON.stringify(this.run.stage?.drainChanges() ?? []));
  }

  /**
   * A new driver for the same pipeline whose state is restored from this one's snapshot (through
   * JSON, as a changelog would carry it): what a replica that takes over a partition sees.
   */
  restart(): PipelineTestDriver {
    const next = new PipelineTestDriver(this.definition, {
      ...this.options,
      wallClock: this.wallClock,
    });
    next.run.stage?.restore(this.snapshot());
    next.run.stage?.drainChanges();
    next.eventTime = this.eventTime;
    return next;
  }
}
