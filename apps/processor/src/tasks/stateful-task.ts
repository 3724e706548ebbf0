// A repartition partition's task (docs/design.md §4, §5): holds the stateful stage for the groups that
// hash to this partition, advances its watermark to the minimum event time announced by the
// upstream source partitions, publishes results and late events, and mirrors every state
// change to the same partition of the changelog, all in the task's transaction.
import type { ReduceResult, WindowResult } from '@sluice/contracts';
import type { LateRecord, StageInput, StatefulStage } from '@sluice/operators';

import type { ActivePipeline } from '../pipelines/active-pipeline';
import type { PipelineSet } from '../pipelines/pipeline-set';
import { decodeRepartitionRecord } from '../repartition/repartition-records';
import { StateManager } from '../state/state-manager';
import { UpstreamWatermarks } from '../watermarks/upstream-watermarks';
import { Task } from './task';
import type { InputMessage, PartitionMemory, TaskContext } from './task';

export interface StatefulTaskContext extends TaskContext {
  pipelines: PipelineSet;
  /** `<topic>/<partition>` of every source partition: the watermark waits for all of them. */
  upstreams: readonly string[];
}

/** Stands in for the event until it turns out to be late (then it is parsed). */
const NOT_PARSED = Object.freeze({ event_type: '', payload: {} });

export class StatefulTask extends Task {
  private pipeline: ActivePipeline | undefined;
  private epoch: string | undefined;
  private stage: StatefulStage | undefined;
  private stateManager: StateManager | undefined;
  private watermarks: UpstreamWatermarks;
  private readonly changedUpstreams = new Set<string>();
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
    memory: PartitionMemory,
    private readonly pipelineId: string,
  ) {
    super(topic, partition, stateful, memory);
    this.watermarks = this.newWatermarks(undefined);
  }

  /** The state entries held (what a restore rebuilt, and what processing added since). */
  stateSize(): number {
    return this.stage?.size() ?? 0;
  }

  protected async restoreState(): Promise<void> {
    const pipeline = this.stateful.pipelines.get(this.pipelineId);
    this.pipeline = pipeline;
    this.epoch = pipeline?.epoch;
    this.changedUpstreams.clear();
    this.watermarks = this.newWatermarks(pipeline);
    this.watermarkInput = -Infinity;
    this.stage = pipeline ? this.createStage(pipeline) : undefined;
    if (!pipeline?.topics.changelog) return;

    const stage = this.stage!;
    const summary = await this.stateOf(pipeline).restore(pipeline.id, pipeline.epoch, {
      state: (entries) => stage.restore(entries),
      upstream: (upstream, time) => this.watermarks.restore(upstream, time),
    });
    this.watermarkInput = this.watermarks.minimum(Date.now());
    this.logger.info(
      {
        pipeline_id: pipeline.id,
        changelog_records: summary.records,
        state_entries: stage.size(),
        restore_ms: summary.ms,
      },
      'state restored from the changelog',
    );
  }

  protected writtenPartitions() {
    const pipeline = this.stateful.pipelines.get(this.pipelineId);
    const topics = pipeline ? [pipeline.topics.output, pipeline.topics.late] : [];
    // The changelogs and repartition topics under the prefix come with partitionsOf.
    return this.partitionsOf(topics);
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
    const now = Date.now();
    if (!this.watermarks.announce(upstream, time, now)) return;
    this.changedUpstreams.add(upstream);
    this.advanceWatermark(now);
  }

  private advanceWatermark(now: number): void {
    const minimum = this.watermarks.minimum(now);
    if (minimum > this.watermarkInput) {
      this.watermarkInput = minimum;
      this.stage!.advanceTo(minimum);
    }
  }

  /** The pipeline's changelog partition of this task (its topic never changes). */
  private stateOf(pipeline: ActivePipeline): StateManager {
    this.stateManager ??= new StateManager(
      this.stateful.kafka,
      this.stateful.admin,
      pipeline.topics.changelog!,
      this.partition,
      this.logger,
      this.stateful.metrics,
      this.stateful.consumerGroup,
    );
    return this.stateManager;
  }

  private newWatermarks(pipeline: ActivePipeline | undefined): UpstreamWatermarks {
    return new UpstreamWatermarks({
      upstreams: this.stateful.upstreams,
      idleTimeoutMs: pipeline?.compiled.stateful?.idleTimeoutMs,
      now: Date.now(),
    });
  }

  /**
   * A reset or an update that changed the operators: the state starts afresh. The old keys get
   * tombstones so compaction drops them; the upstreams' event times carry over (they are facts
   * about the streams, not about the pipeline).
   */
  private startEpoch(pipeline: ActivePipeline): void {
    const changelog = pipeline.topics.changelog!;
    for (const message of this.stateOf(pipeline).tombstones(this.stage?.snapshot() ?? []))
      this.send(changelog, message);
    const announced = [...this.watermarks.entries()];
    this.pipeline = pipeline;
    this.epoch = pipeline.epoch;
    this.stage = this.createStage(pipeline);
    this.watermarks = this.newWatermarks(pipeline);
    for (const [upstream, time] of announced) {
      this.watermarks.restore(upstream, time);
      this.changedUpstreams.add(upstream);
    }
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
    const upstreams = [...this.changedUpstreams].map((upstream): [string, number | undefined] => [
      upstream,
      this.watermarks.timeOf(upstream),
    ]);
    const changes = this.stateOf(pipeline).changes(
      this.epoch,
      this.stage.drainChanges(),
      upstreams,
    );
    for (const message of changes) this.send(pipeline.topics.changelog!, message);
    this.changedUpstreams.clear();
  }
}
