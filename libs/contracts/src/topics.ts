// Topic names of docs/design.md §5. The prefix is `sluice`; tests and side-by-side installations on one
// cluster pass another (SLUICE_TOPIC_PREFIX) so their internal topics never meet.
export const DEFAULT_TOPIC_PREFIX = 'sluice';

export interface InternalTopics {
  /** Compacted; key = pipeline id, value = StoredPipeline, tombstone = deleted. */
  pipelines: string;
  /** Compacted; key = `<processor>/<pipeline>`, value = ProcessorStats. */
  stats: string;
  /** Dead letters: records that could not be processed, with the reason in headers. */
  dlq: string;
}

export function internalTopics(prefix: string = DEFAULT_TOPIC_PREFIX): InternalTopics {
  return { pipelines: `${prefix}.pipelines`, stats: `${prefix}.stats`, dlq: `${prefix}.dlq` };
}

export function repartitionTopic(
  pipelineId: string,
  prefix: string = DEFAULT_TOPIC_PREFIX,
): string {
  return `${prefix}.${pipelineId}.repartition`;
}

export function changelogTopic(pipelineId: string, prefix: string = DEFAULT_TOPIC_PREFIX): string {
  return `${prefix}.${pipelineId}.changelog`;
}

/** Where events later than the allowed lateness go (docs/design.md §3). */
export function lateTopic(output: string): string {
  return `${output}.late`;
}

/** docs/design.md §1: headers of a dead-lettered record. */
export const DLQ_HEADERS = {
  error: 'sluice-error',
  sourceTopic: 'sluice-source-topic',
  sourcePartition: 'sluice-source-partition',
  sourceOffset: 'sluice-source-offset',
  pipelineId: 'sluice-pipeline-id',
} as const;
