import type { ActivePipeline } from './active-pipeline';

/** The pipelines this replica runs. `revision` changes with every change, so tasks can notice. */
export class PipelineSet {
  private readonly byId = new Map<string, ActivePipeline>();
  private readonly byRepartition = new Map<string, ActivePipeline>();
  revision = 0;

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
    if (known.topics.repartition) this.byRepartition.delete(known.topics.repartition);
    this.revision += 1;
  }
}
