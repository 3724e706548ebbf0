// A source partition's task (docs/design.md §5): decodes each record once, dead-letters bad ones,
// runs the stateless nodes of every pipeline that reads this topic, publishes their results to
// their sinks, and re-keys the inputs of stateful nodes by group into their pipeline's
// repartition topic, followed by each pipeline's watermark marker to every repartition
// partition when its windows can act on it (docs/design.md §4).
// Each pipeline has its own position here (docs/design.md §9): a new one starts where its
// definition says, so the task reads from the smallest position and each pipeline takes only
// the records at or after its own; the positions commit with the offset (source-positions.ts).
import { DLQ_HEADERS } from '@sluice/contracts';
import type { EventEnvelope } from '@sluice/contracts';
import { groupStateKey } from '@sluice/operators';
import type { Combiner, LookupTables, StageInput } from '@sluice/operators';

import type { ActivePipeline, PlacedNode } from '../pipelines/active-pipeline';
import type { PipelineSet } from '../pipelines/pipeline-set';
import { encodeEvent, encodeMarker } from '../repartition/repartition-records';
import { decodeRecord } from '../source/decode-record';
import { SourcePositions } from '../source/source-positions';
import { Task } from './task';
import type { PartitionMemory } from './committed-offset';
import { createRunner, drainPartials, holdsAwaited, markerDue } from './source-runner';
import type { Runner } from './source-runner';
import type { InputMessage } from './input-batch';
import type { TaskContext } from './task-context';

export interface SourceTaskContext extends TaskContext {
  pipelines: PipelineSet;
  dlqTopic: string;
  /** What enrich looks up (kept current by the replica). */
  lookups: LookupTables;
  /**
   * The runs of every pipeline of the group the replica knows, running or not (parked, failed
   * to apply), or of those among them that read `topic`: a position is forgotten only when its
   * pipeline is deleted or replayed.
   */
  knownRuns: (topic?: string) => ReadonlySet<string>;
}

export class SourceTask extends Task {
  private runners: Runner[] = [];
  private revision = -1;
  /**
   * Each pipeline's position, and at least the largest event time this partition ever
   * announced, by any owner (`announced`): a stateful partition's watermark cannot pass it minus
   * the lateness, so an input all of whose windows end later cannot be late there and may be
   * folded. Both are committed with the offset.
   */
  private readonly positions = new SourcePositions();
  private readonly upstream: string;
  private current: InputMessage | undefined;
  /** The current record's JSON and envelope as decoded (re-keyed as is when no node changed it). */
  private currentText: string | undefined;
  private currentEnvelope: EventEnvelope | undefined;

  constructor(
    topic: string,
    partition: number,
    private readonly source: SourceTaskContext,
    memory: PartitionMemory,
  ) {
    super(topic, partition, source, memory);
    this.upstream = `${topic}/${partition}`;
  }

  protected async restoreState(): Promise<void> {
    // No state beyond positions and event time, which restart from what was committed
    // (adoptCommitted) and from what is read next: work that was not committed announced
    // nothing downstream.
    this.positions.announced = Infinity; // unknown until the committed state is adopted
    this.revision = -1;
    this.runners = [];
  }

  /** The consumer lag of `pipelineId` here: the task's, less what it has handled ahead of it. */
  lagOf(pipelineId: string): number {
    const runner = this.runners.find((r) => r.pipeline.id === pipelineId);
    const next = this.nextOffset;
    if (!runner || next === undefined) return this.lag;
    return Math.max(0, this.lag - Math.max(0, runner.position - Number(next)));
  }

  protected writtenPartitions() {
    const topics = [this.source.dlqTopic];
    for (const pipeline of this.source.pipelines.list()) {
      const { outputs, repartition } = pipeline.topics;
      topics.push(...outputs, ...(repartition ? [repartition] : []));
    }
    return this.partitionsOf(topics);
  }

  protected refresh(): void {
    const pipelines = this.source.pipelines;
    if (pipelines.revision === this.revision) return;
    // What the runners folded so far goes out under the definition they folded it with.
    for (const runner of this.runners) this.sendPartials(runner);
    // A disabled pipeline keeps its position moving with the task (its graph takes nothing).
    const readers = pipelines.readersOf(this.topic);
    const before = new Map(this.runners.map((r) => [r.pipeline.run, r]));
    // A pipeline that does not run here now (parked, or its apply failed) keeps its position:
    // taken for a new run when it comes back, it would start over and publish again.
    const known = this.source.knownRuns();
    this.positions.retain(new Set([...known, ...readers.map((pipeline) => pipeline.run)]));
    this.runners = readers.map((pipeline) => this.runnerFor(pipeline, before.get(pipeline.run)));
    this.positions.settleLegacy(this.source.knownRuns(this.topic));
    this.revision = pipelines.revision;
    // A pipeline in a new epoch announces the time it has read before any record of the new
    // epoch follows: the stateful side judges those records against it, not against a time
    // carried over from the old epoch that may be up to a window's slide old.
    for (const runner of this.runners) if (markerDue(runner)) this.announce(runner);
  }

  protected override repositionTo(): string | undefined {
    // The pipelines that read here now: a held or parked one's position waits behind.
    const reading = this.runners.filter((r) => !r.held).map((r) => r.pipeline.run);
    const smallest = this.positions.smallest(reading);
    return smallest === undefined ? undefined : String(smallest);
  }

  protected override afterBatch(next: string): void {
    const offset = Number(next);
    this.positions.read(offset);
    for (const runner of this.runners) {
      if (runner.held) continue;
      if (runner.position < offset) runner.position = offset;
      this.positions.advance(runner.pipeline.run, runner.position);
    }
  }

  protected handle(messages: InputMessage[]): void {
    if (messages.length === 0) return;
    const runners = this.runners;
    // Usually every pipeline takes every record; after a backfill or a replay began, those
    // further on skip what they took before.
    const first = Number(messages[0]!.offset);
    const skipping = runners.some((runner) => runner.position > first);
    for (const message of messages) {
      const offset = skipping ? Number(message.offset) : first;
      const decoded = decodeRecord(this.topic, this.partition, message);
      if (!decoded.ok) {
        // Once per record: a record read again for a pipeline going back was dead-lettered.
        if (this.positions.firstRead(Number(message.offset))) {
          this.source.metrics.deadLetters.inc();
          this.send(this.source.dlqTopic, decoded.deadLetter);
        }
        continue;
      }
      const event = decoded.event;
      this.current = message;
      this.currentText = decoded.text;
      this.currentEnvelope = event.envelope;
      for (let i = 0; i < runners.length; i++) {
        const runner = runners[i]!;
        if (offset < runner.position || runner.held) continue;
        // Every valid record advances the event time, whatever its type (docs/design.md §4).
        if (event.time > runner.maxEventTime) runner.maxEventTime = event.time;
        const { graph, sourceIds } = runner;
        for (let j = 0; j < sourceIds.length; j++) graph.process(sourceIds[j]!, event);
      }
    }
    this.current = undefined;
    this.currentText = undefined;
    this.currentEnvelope = undefined;
  }

  /**
   * The transaction's folded partials, then each pipeline's watermark marker, so a stateful
   * partition has them before the marker that may close their windows. Folding over the whole
   * transaction rather than one batch, and one marker per transaction, send far fewer records.
   */
  protected override beforeCommit(): void {
    for (const runner of this.runners) this.sendPartials(runner);
    this.announceEventTime();
  }

  protected override awaitsCommit(): boolean {
    return this.runners.some(holdsAwaited);
  }

  protected override commitMetadata(offset: string): string | undefined {
    return this.positions.encode(Number(offset));
  }

  protected override adoptCommitted(metadata: string | undefined, offset: string | undefined) {
    this.positions.adopt(metadata, offset === undefined ? undefined : Number(offset));
    this.revision = -1; // the runners take their positions from what was committed
  }

  protected onTick(): void {
    // Idle flushes happen where the state is; a source partition has none.
  }

  private sendPartials(runner: Runner): void {
    const topic = runner.pipeline.topics.repartition!;
    for (const record of drainPartials(runner)) this.send(topic, record);
  }

  /** Each pipeline's marker, when one of its nodes can act on it (source-runner.ts). */
  private announceEventTime(): void {
    for (const runner of this.runners) if (markerDue(runner)) this.announce(runner);
  }

  /** The pipeline's event time here, to every partition of its repartition topic. */
  private announce(runner: Runner): void {
    const time = runner.maxEventTime;
    const { repartition, repartitionPartitions } = runner.pipeline.topics;
    runner.announced = time;
    if (time > this.positions.announced) this.positions.announced = time;
    const value = encodeMarker(runner.pipeline, this.upstream, time);
    for (let partition = 0; partition < repartitionPartitions; partition++)
      this.send(repartition!, { partition, key: this.upstream, value });
  }

  private runnerFor(pipeline: ActivePipeline, before: Runner | undefined): Runner {
    return createRunner(pipeline, before, {
      topic: this.topic,
      lookups: this.source.lookups,
      // Where its run is here: a new one starts where its definition says (0: the first offset).
      position: this.positions.positionOf(
        pipeline.run,
        () => pipeline.starts.get(this.upstream) ?? 0,
      ),
      held: this.source.pipelines.isHeld(pipeline.id),
      send: (topic, message) => this.send(topic, message),
      deadLetter: (reason) => this.deadLetter(pipeline.id, reason),
      repartition: (placed, combiner, input) => this.repartition(pipeline, placed, combiner, input),
    });
  }

  /** A stateful node's input: folded into the batch's partials when it cannot be late, else sent. */
  private repartition(
    pipeline: ActivePipeline,
    placed: PlacedNode,
    combiner: Combiner | undefined,
    input: StageInput,
  ): void {
    if (combiner?.add(input, this.positions.announced - placed.node.spec.latenessMs)) return;
    // A node on the way that wrote to the event gave it a copy of its own.
    const eventJson =
      input.envelope === this.currentEnvelope ? this.currentText! : JSON.stringify(input.envelope);
    this.send(pipeline.topics.repartition!, {
      key: groupStateKey(input.route, input.group),
      value: encodeEvent(pipeline, placed.tag, input, eventJson),
    });
  }

  /** An `error` policy rejected the event: the record goes to the DLQ unchanged (docs/design.md §2). */
  private deadLetter(pipelineId: string, reason: string): void {
    const message = this.current!;
    this.send(this.source.dlqTopic, {
      key: message.key,
      value: message.value,
      headers: {
        [DLQ_HEADERS.error]: reason,
        [DLQ_HEADERS.pipelineId]: pipelineId,
        [DLQ_HEADERS.sourceTopic]: this.topic,
        [DLQ_HEADERS.sourcePartition]: String(this.partition),
        [DLQ_HEADERS.sourceOffset]: message.offset,
      },
    });
  }
}
