// A repartition partition's task (DESIGN §4, §5): holds the stateful stage for the groups that
// hash to this partition, advances its watermark to the minimum event time announced by every
// upstream source partition, publishes results and late events, and mirrors every state change
// to the same partition of the changelog, all in the task's transaction.
import { readTopicToEnd } from '@sluice/kafka';
import type { ReduceResult, WindowResult } from '@sluice/contracts';
import type { LateRecord, StageInput, StatefulStage, StateEntry } from '@sluice/operators';

import type { ActivePipeline } from '../pipelines/active-pipeline';
import type { PipelineSet } from '../pipelines/pipeline-set';
import { decodeRepartitionRecord } from '../repartition/repartition-records';
import {
  decodeChangelogEntry,
  encodeChangelogValue,
  upstreamKey,
} from '../state/changelog-records';
import { PartitionTask } from './partition-task';
import type { InputMessage, TaskContext } from './partition-task';

export interface StatefulTaskContext extends TaskContext {
  pipelines: PipelineSet;
  /** `<topic>/<partition>` of every source partition: the watermark waits for all of them. */
  upstreams: readonly string[];
}

/** Stands in for the event until it turns out to be late (then it is parsed). */
const NOT_PARSED = Object.freeze({ event_type: '', payload: {} });

export class StatefulTask extends PartitionTask {
  private pipeline: ActivePipeline | undefined;
  private epoch: string | undefined;
  private stage: StatefulStage | undefined;
  private readonly announced = new Map<string, number>();
  private readonly changedUpstreams = new Set<string>();
  /** Wall-clock time each upstream last moved its event time, for `idle_timeout_seconds`. */
  private readonly lastAdvance = new Map<string, number>();
  private openedAt = Date.now();
  /** When event time last resumed after every upstream had gone idle (see upstreamMinimum). */
  private wokeAt = -Infinity;
  private watermarkInput = -Infinity;
  private currentEventJson = '';
  private readonly input: StageInput = {
    group: null,
    route: undefined,
    value: 0,
    time: 0,
    envelope: NOT_PARSED,
  };

  constructor(
    topic: string,
    partition: number,
    private readonly stateful: StatefulTaskContext,
    private readonly pipelineId: string,
  ) {
    super(topic, partition, stateful);
  }

  protected async rebuild(): Promise<void> {
    const pipeline = this.stateful.pipelines.get(this.pipelineId);
    this.pipeline = pipeline;
    this.epoch = pipeline?.epoch;
    this.announced.clear();
    this.changedUpstreams.clear();
    this.lastAdvance.clear();
    this.openedAt = Date.now();
    this.wokeAt = -Infinity;
    this.watermarkInput = -Infinity;
    this.stage = pipeline ? this.createStage(pipeline) : undefined;
    if (!pipeline?.topics.changelog) return;

    const started = process.hrtime.bigint();
    const stage = this.stage!;
    const epoch = pipeline.epoch;
    // Applied in log order as it is read, a batch at a time: no copy of the whole changelog.
    let entries: StateEntry[] = [];
    const count = await readTopicToEnd(
      this.stateful.kafka,
      pipeline.topics.changelog,
      (record) => {
        if (record.key === null) return;
        const entry = decodeChangelogEntry(record.key, record.value, epoch);
        if (entry.kind === 'state') entries.push(entry);
        else if (entry.time === undefined) this.announced.delete(entry.upstream);
        else this.announced.set(entry.upstream, entry.time);
      },
      {
        partitions: [this.partition],
        timeoutMs: 120_000,
        onBatch: async () => {
          stage.restore(entries);
          entries = [];
        },
      },
    );
    stage.restore(entries);
    this.watermarkInput = this.upstreamMinimum();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    this.stateful.metrics.restoreSeconds.observe({ pipeline: pipeline.id }, seconds);
    this.stateful.metrics.restoredRecords.inc({ pipeline: pipeline.id }, count);
    this.logger.info(
      {
        pipeline_id: pipeline.id,
        changelog_records: count,
        state_entries: this.stage!.size(),
        restore_ms: Math.round(seconds * 1000),
      },
      'state restored from the changelog',
    );
  }

  protected refresh(): void {
    const current = this.stateful.pipelines.get(this.pipelineId);
    if (current === this.pipeline) return;
    if (current === undefined) {
      // Deleted: the consumer drops this partition at its next rebalance; until then, skip.
      this.pipeline = undefined;
      return;
    }
    if (current.epoch === this.epoch && this.stage) {
      this.pipeline = current; // a new output topic or name; same state
      return;
    }
    this.startEpoch(current);
  }

  protected handle(messages: InputMessage[]): void {
    const stage = this.stage;
    if (!this.pipeline || !stage) return;
    const epoch = this.epoch;
    const input = this.input;
    for (const message of messages) {
      if (message.value === null) continue;
      // toString() without an argument is Node's fast UTF-8 path.
      const record = decodeRepartitionRecord(message.value.toString());
      // Not ours, or of another epoch (written before a reset or update): dropped.
      if (record === undefined || record.epoch !== epoch) continue;
      if (record.kind === 'marker') {
        this.onMarker(record.upstream, record.time);
        continue;
      }
      if (record.kind === 'partial') {
        stage.addPartial(record.partial);
        continue;
      }
      input.group = record.group;
      input.route = record.route;
      input.value = record.value;
      input.time = record.time;
      this.currentEventJson = record.eventJson;
      stage.add(input);
    }
    this.writeChanges();
  }

  protected onTick(now: number): void {
    if (!this.stage || !this.pipeline) return;
    // An upstream may have just become idle: the others alone may now move the watermark.
    this.advanceWatermark(now);
    this.stage.onWallClock(now);
    this.writeChanges();
  }

  private onMarker(upstream: string, time: number): void {
    if (time <= (this.announced.get(upstream) ?? -Infinity)) return;
    this.announced.set(upstream, time);
    this.changedUpstreams.add(upstream);
    const now = Date.now();
    if (this.allIdle(now)) this.wokeAt = now;
    this.lastAdvance.set(upstream, now);
    this.advanceWatermark(now);
  }

  private advanceWatermark(now: number): void {
    const minimum = this.upstreamMinimum(now);
    if (minimum > this.watermarkInput) {
      this.watermarkInput = minimum;
      this.stage!.advanceTo(minimum);
    }
  }

  /**
   * The smallest event time announced over the upstreams (-Infinity while one has announced
   * nothing). With `idle_timeout_seconds`, an upstream whose time has not moved for that long
   * (wall clock) is left out, as Flink's idleness does, so one silent source partition does not
   * hold every window open; when all are idle the stage's own idle flush takes over.
   *
   * Unlike Flink, when time resumes after every upstream was idle, each upstream gets a fresh
   * timeout before it is left out again: a burst produced to all partitions at once reaches
   * them one fetch after another, and the first one alone must not fire windows that the
   * others' events still belong to (they would all be late).
   */
  private upstreamMinimum(now = Date.now()): number {
    let minimum = Infinity;
    for (const upstream of this.stateful.upstreams) {
      if (this.isIdle(upstream, now)) continue;
      const time = this.announced.get(upstream);
      if (time === undefined) return -Infinity;
      if (time < minimum) minimum = time;
    }
    return minimum === Infinity ? -Infinity : minimum;
  }

  private isIdle(upstream: string, now: number): boolean {
    const idleMs = this.pipeline?.compiled.stateful?.idleTimeoutMs;
    if (idleMs === undefined) return false;
    const since = Math.max(this.lastAdvance.get(upstream) ?? this.openedAt, this.wokeAt);
    return now - since >= idleMs;
  }

  private allIdle(now: number): boolean {
    for (const upstream of this.stateful.upstreams) if (!this.isIdle(upstream, now)) return false;
    return true;
  }

  /**
   * A reset or an update that changed the operators: the state starts afresh. The old keys get
   * tombstones so compaction drops them; the upstreams' event times carry over (they are facts
   * about the streams, not about the pipeline).
   */
  private startEpoch(pipeline: ActivePipeline): void {
    const changelog = pipeline.topics.changelog!;
    for (const entry of this.stage?.snapshot() ?? [])
      this.send(changelog, { partition: this.partition, key: entry.key, value: null });
    this.pipeline = pipeline;
    this.epoch = pipeline.epoch;
    this.stage = this.createStage(pipeline);
    for (const upstream of this.announced.keys()) this.changedUpstreams.add(upstream);
    if (this.watermarkInput > -Infinity) this.stage.advanceTo(this.watermarkInput);
    this.writeChanges();
    this.logger.info({ pipeline_id: pipeline.id, epoch: pipeline.epoch }, 'state starts afresh');
  }

  private createStage(pipeline: ActivePipeline): StatefulStage {
    return pipeline.compiled.stateful!.createStage({
      counters: pipeline.counters,
      trackChanges: true,
      emitter: {
        result: (key: string, record: ReduceResult | WindowResult) =>
          this.send(this.pipeline!.topics.output, { key, value: JSON.stringify(record) }),
        late: (key: string, record: LateRecord) => {
          // A late event's payload is parsed only now; a late partial carries its own summary.
          if (record.event === NOT_PARSED)
            record.event = JSON.parse(this.currentEventJson) as LateRecord['event'];
          this.send(this.pipeline!.topics.late, { key, value: JSON.stringify(record) });
        },
      },
    });
  }

  private writeChanges(): void {
    const pipeline = this.pipeline;
    if (!pipeline || !this.stage || !this.epoch) return;
    const changelog = pipeline.topics.changelog!;
    const partition = this.partition;
    for (const entry of this.stage.drainChanges()) {
      this.send(changelog, {
        partition,
        key: entry.key,
        value: encodeChangelogValue(this.epoch, entry.value),
      });
    }
    for (const upstream of this.changedUpstreams) {
      this.send(changelog, {
        partition,
        key: upstreamKey(upstream),
        value: encodeChangelogValue(this.epoch, { t: this.announced.get(upstream) }),
      });
    }
    this.changedUpstreams.clear();
  }
}
