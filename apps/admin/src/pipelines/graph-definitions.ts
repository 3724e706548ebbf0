// A graph definition's preview (docs/design.md §9): events tagged with the source that reads
// them, results per sink.
import { planOfGraph, runGraphReference } from '@sluice/operators';
import type { CompileOptions, GraphReferenceResult, SourcedEvent } from '@sluice/operators';
import type { PipelineGraph, ValidationIssue } from '@sluice/contracts';

/**
 * A graph's preview events: `{ source, event }` each, or plain events when the graph has one
 * source. Problems are the request's, with their paths.
 */
export function sourcedEvents(
  graph: PipelineGraph,
  events: unknown[],
): { events: SourcedEvent[]; issues: ValidationIssue[] } {
  const ids = graph.sources.map((source) => source.id);
  const only = ids.length === 1 ? ids[0] : undefined;
  const issues: ValidationIssue[] = [];
  const sourced: SourcedEvent[] = [];
  events.forEach((item, index) => {
    const tagged =
      item !== null && typeof item === 'object' && 'source' in item && 'event' in item
        ? (item as { source: unknown; event: unknown })
        : undefined;
    if (!tagged) {
      if (only !== undefined) sourced.push({ source: only, event: item });
      else
        issues.push({
          path: `events[${index}]`,
          message: `must be { source, event }: the graph has ${ids.length} sources (${ids.join(', ')})`,
        });
      return;
    }
    if (typeof tagged.source !== 'string' || !ids.includes(tagged.source)) {
      issues.push({
        path: `events[${index}].source`,
        message: `must name one of the graph's sources (${ids.join(', ')})`,
      });
      return;
    }
    sourced.push({ source: tagged.source, event: tagged.event });
  });
  return { events: sourced, issues };
}

export interface GraphPreview {
  sinks: Record<string, { topic: string; results: unknown[]; late: unknown[] }>;
  dead_letters: GraphReferenceResult['dead_letters'];
  stats: GraphReferenceResult['stats'];
}

export function previewGraph(
  graph: PipelineGraph,
  events: SourcedEvent[],
  options: CompileOptions,
): GraphPreview {
  const run = runGraphReference(planOfGraph(graph), events, options);
  const sinks: GraphPreview['sinks'] = {};
  for (const [id, output] of Object.entries(run.sinks))
    sinks[id] = {
      topic: output.topic,
      results: output.results.map((record) => record.value),
      late: output.late.map((record) => record.value),
    };
  return { sinks, dead_letters: run.dead_letters, stats: run.stats };
}
