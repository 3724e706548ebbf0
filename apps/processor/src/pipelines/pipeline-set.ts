import type { ActivePipeline } from './active-pipeline';

/** The pipelines this replica runs. `revision` changes with every change, so tasks can notice. */
export class PipelineSet {
  private readonly byId = new Map<string, ActivePipeline>();
  private readonly byRepartition = new Map<string, ActivePipeline>();
  /** Pipelines held where they are (held-pipelines.ts): their positions do not move. */
  private readonly held = new Set<string>();
  revision = 0;

  isHeld(id: string): boolean {
    return this.held.has(id);
  }

  hold(id: string): void {
    if (!this.byId.has(id) || this.held.has(id)) return;
    this.held.add(id);
    this.revision += 1;
  }

  release(id: string): void {
    if (this.held.delete(id)) this.revision += 1;
  }

  get(id: string): ActivePipeline | undefined {
    return this.byId.get(id);
  }

  forRepartitionTopic(topic: string): ActivePipeline | undefined {
    return this.byRepartition.get(topic);
  }

  list(): ActivePipeline[] {
    return [...this.byId.values()];
  }

  /** The pipelines that read `topic` as a source. */
  readersOf(topic: string): ActivePipeline[] {
    return this.list().filter((pipeline) => pipeline.topics.sources.includes(topic));
  }

  /** Every topic some pipeline reads as a source. */
  sourceTopics(): string[] {
    return [...new Set(this.list().flatMap((pipeline) => pipeline.topics.sources))].sort();
  }

  /** The repartition topics the consumer group must read. */
  repartitionTopics(): string[] {
    return [...this.byRepartition.keys()].sort();
  }

  /** A new definition of a held pipeline releases it: its topics were made for it. */
  set(pipeline: ActivePipeline): void {
    this.delete(pipeline.id);
    this.byId.set(pipeline.id, pipeline);
    if (pipeline.topics.repartition) this.byRepartition.set(pipeline.topics.repartition, pipeline);
    this.revision += 1;
  }

  delete(id: string): void {
    const known = this.byId.get(id);
    if (!known) return;
    this.byId.delete(id);
    this.held.delete(id);
    if (known.topics.repartition) this.byRepartition.delete(known.topics.repartition);
    this.revision += 1;
  }
}
