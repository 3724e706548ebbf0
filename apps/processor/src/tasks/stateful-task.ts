// A repartition partition's task (docs/design.md §4, §5): holds the stages of its pipeline's stateful
// nodes for the groups that hash to this partition, advances each node's watermark to the
// minimum event time announced by the source partitions of its own sources, publishes results
// and late events to the node's sink, and mirrors every state change to the same partition of
// the changelog, all in the task's transaction. What a stage keeps outside the changelog (a
// temporal join's waiting records) a new owner reads again from the repartition partition.
import type { StageInput, StatefulStage } from '@sluice/operators';

import type { ActivePipeline, PlacedNode } from '../pipelines/active-pipeline';
import type { PipelineSet } from '../pipelines/pipeline-set';
import { decodeRepartitionRecord } from '../repartition/repartition-records';
import { StateManager } from '../state/state-manager';
import { Task } from './task';
import type { PartitionMemory } from './committed-offset';
import { HostedNodes } from './hosted-nodes';
import type { InputMessage } from './input-batch';
import { fillInput, ofEpoch } from './repartition-input';
import { RereadProgress } from './reread-metadata';
import { NOT_PARSED, stageOutputs } from './stage-outputs';
import type { TaskContext } from './task-context';

export interface StatefulTaskContext extends TaskContext {
  pipelines: PipelineSet;
  /** Where a join sends a record it refuses (no table row, under `on_missing: error`). */
  dlqTopic: string;
}

export class StatefulTask extends Task {
  private pipeline: ActivePipeline | undefined;
  private epoch: string | undefined;
  private run: string | undefined;
  private readonly nodes = new HostedNodes();
  private stateManager: StateManager | undefined;
  /** Every upstream's announced event time: facts about the streams, kept across epochs. */
  private readonly upstreamTimes = new Map<string, number>();
  private readonly changedUpstreams = new Set<string>();
  private currentEventJson = '';
  private readonly rereads = new RereadProgress();
  /** This resume rebuilt the state: what the committed offset carried starts a re-read. */
  private restored = false;
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
  }

  /** The state entries held (what a restore rebuilt, and what processing added since). */
  stateSize(): number {
    return this.nodes.size();
  }

  protected async restoreState(): Promise<void> {
    this.restored = true;
    const pipeline = this.stateful.pipelines.get(this.pipelineId);
    this.pipeline = pipeline;
    this.epoch = pipeline?.epoch;
    this.run = pipeline?.run;
    this.upstreamTimes.clear();
    this.changedUpstreams.clear();
    this.setNodes(pipeline);
    if (!pipeline?.topics.changelog) return;

    const summary = await this.stateOf(pipeline).restore(pipeline.id, pipeline.epoch, {
      state: (entries) => this.nodes.restore(entries),
      upstream: (upstream, time) => {
        if (time === undefined) this.upstreamTimes.delete(upstream);
        else this.upstreamTimes.set(upstream, time);
        this.nodes.restoreUpstream(upstream, time);
      },
    });
    this.nodes.settle(Date.now());
    this.logger.info(
      {
        pipeline_id: pipeline.id,
        changelog_records: summary.records,
        state_entries: this.stateSize(),
        restore_ms: summary.ms,
      },
      'state restored from the changelog',
    );
  }

  protected writtenPartitions() {
    const pipeline = this.stateful.pipelines.get(this.pipelineId);
    // The changelogs and repartition topics under the prefix come with partitionsOf.
    if (!pipeline) return this.partitionsOf([]);
    const joins = pipeline.stateful.some(({ node }) => node.spec.kind === 'join');
    return this.partitionsOf(
      joins ? [...pipeline.topics.outputs, this.stateful.dlqTopic] : pipeline.topics.outputs,
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
    if (current.epoch === this.epoch && !this.nodes.isEmpty) {
      this.pipeline = current; // another sink topic or name; the same state
      return;
    }
    this.startEpoch(current);
  }

  protected handle(messages: InputMessage[]): void {
    this.feed(messages, false);
  }

  /** Only a stage that keeps inputs out of the changelog (`replay`) takes them again. */
  protected override reread(messages: InputMessage[]): void {
    this.feed(messages, true);
    this.rereads.advance(messages.at(-1)!.offset);
  }

  protected override rereadFrom(): string | undefined {
    return this.rereads.from;
  }

  /**
   * The oldest input a stage holds outside the changelog, committed with the offset: a new
   * owner reads the repartition partition again from there (`reread`).
   */
  protected override commitMetadata(): string | undefined {
    return this.rereads.metadata(this.nodes.replayFrom());
  }

  protected override adoptCommitted(metadata: string | undefined, offset: string | undefined) {
    if (!this.restored) return; // kept: a re-read under way goes on from where it was
    this.restored = false;
    this.rereads.start(metadata, offset);
  }

  private feed(messages: InputMessage[], again: boolean): void {
    if (!this.pipeline || this.nodes.isEmpty) return;
    const epoch = this.epoch;
    const input = this.input;
    for (const message of messages) {
      if (message.value === null) continue;
      // toString() without an argument is Node's fast UTF-8 path.
      const record = decodeRepartitionRecord(message.value.toString());
      if (record === undefined || !ofEpoch(record, this.pipeline, epoch)) continue;
      if (record.kind === 'marker') {
        if (!again) this.onMarker(record.upstream, record.time);
        continue;
      }
      const node = this.nodes.get(record.node);
      if (!node) continue;
      if (record.kind === 'partial') {
        if (!again) node.stage.addPartial(record.partial);
        continue;
      }
      if (again && (record.side === undefined || !node.stage.replay)) continue;
      fillInput(input, record, message.offset);
      this.currentEventJson = record.eventJson;
      if (again) node.stage.replay!(input);
      else node.stage.add(input);
    }
    this.writeChanges();
  }

  protected onTick(now: number): void {
    if (!this.pipeline) return;
    // An upstream may have just become idle: the others alone may now move the watermark.
    this.nodes.tick(now);
    this.writeChanges();
  }

  private onMarker(upstream: string, time: number): void {
    const now = Date.now();
    if (time <= (this.upstreamTimes.get(upstream) ?? -Infinity)) return;
    this.upstreamTimes.set(upstream, time);
    this.changedUpstreams.add(upstream);
    this.nodes.announce(upstream, time, now);
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

  /** A fresh stage and watermark for each of the pipeline's stateful nodes. */
  private setNodes(pipeline: ActivePipeline | undefined): void {
    this.nodes.reset(pipeline?.stateful ?? [], (placed) => this.createStage(pipeline!, placed));
  }

  /**
   * A reset, an update that changed what the state means, or a replay: it starts afresh. The
   * old keys get tombstones so compaction drops them. The upstreams' event times carry over
   * (they are facts about the streams, not about the pipeline), except into a new run: a
   * replay's sources read their records again, and announce their times again.
   */
  private startEpoch(pipeline: ActivePipeline): void {
    const changelog = pipeline.topics.changelog!;
    const oldKeys = this.nodes.keys().map((key) => ({ key, value: null }));
    // Sent as awaited, not as state: a new owner restores only the new epoch and never writes
    // these again, so their transaction should not stay open for the quiet interval.
    for (const message of this.stateOf(pipeline).tombstones(oldKeys)) this.send(changelog, message);
    this.pipeline = pipeline;
    this.epoch = pipeline.epoch;
    if (pipeline.run !== this.run) this.upstreamTimes.clear();
    this.run = pipeline.run;
    this.setNodes(pipeline);
    for (const [upstream, time] of this.upstreamTimes) {
      this.changedUpstreams.add(upstream);
      this.nodes.restoreUpstream(upstream, time);
    }
    this.nodes.advanceAll(Date.now());
    this.writeChanges();
    this.logger.info({ pipeline_id: pipeline.id, epoch: pipeline.epoch }, 'state starts afresh');
  }

  private createStage(pipeline: ActivePipeline, placed: PlacedNode): StatefulStage {
    return placed.node.spec.createStage({
      counters: pipeline.counters,
      trackChanges: true,
      replayInputs: true,
      emitter: stageOutputs(placed.node.id, {
        send: (topic, message) => this.send(topic, message),
        pipeline: () => this.pipeline,
        currentEventJson: () => this.currentEventJson,
        dlqTopic: this.stateful.dlqTopic,
        pipelineId: this.pipelineId,
        topic: this.topic,
        partition: this.partition,
      }),
    });
  }

  private writeChanges(): void {
    const pipeline = this.pipeline;
    if (!pipeline || this.nodes.isEmpty || !this.epoch) return;
    const entries = this.nodes.drainChanges();
    const upstreams = [...this.changedUpstreams].map((upstream): [string, number | undefined] => [
      upstream,
      this.upstreamTimes.get(upstream),
    ]);
    const changes = this.stateOf(pipeline).changes(this.epoch, entries, upstreams);
    for (const message of changes) this.sendState(pipeline.topics.changelog!, message);
    this.changedUpstreams.clear();
  }
}
