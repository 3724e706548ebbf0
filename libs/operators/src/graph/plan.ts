// The one graph both definition forms compile to (docs/design.md §9): sources, transforms with
// one input each, and sinks. A linear definition is the chain source → operators → output.
import { parseInput } from '@sluice/contracts';
import type { Operator, PipelineDefinition, PipelineGraph } from '@sluice/contracts';

/** What a node reads: another node's output, or one route of a branch. */
export interface PlanInput {
  node: string;
  route: string | undefined;
}

export interface PlanSource {
  readonly id: string;
  readonly topics: readonly string[];
  /** Empty: every type. */
  readonly eventTypes: readonly string[];
}

export interface PlanTransform {
  readonly id: string;
  readonly input: PlanInput;
  readonly operator: Operator;
  /** How reasons and errors name it: `operators[1] (map)`, `transforms[0] (filter)`. */
  readonly label: string;
}

export interface PlanSink {
  readonly id: string;
  readonly input: PlanInput;
  readonly topic: string;
}

export interface PipelinePlan {
  readonly id: string;
  readonly enabled: boolean;
  readonly sources: readonly PlanSource[];
  readonly transforms: readonly PlanTransform[];
  readonly sinks: readonly PlanSink[];
}

/** The id a linear definition's one source has in its plan. */
export const LINEAR_SOURCE_ID = 'source';
/** The id a linear definition's one sink (its `output`) has in its plan. */
export const LINEAR_SINK_ID = 'output';

/**
 * A linear definition as a graph: one source over the processor group's source topics, its
 * operators in order, and its output as the one sink.
 */
export function planOfLinear(
  definition: PipelineDefinition,
  sourceTopics: readonly string[],
): PipelinePlan {
  let input: PlanInput = { node: LINEAR_SOURCE_ID, route: undefined };
  const transforms = definition.operators.map((operator, index) => {
    const transform: PlanTransform = {
      id: `operators[${index}]`,
      input,
      operator,
      label: `operators[${index}] (${operator.type})`,
    };
    input = { node: transform.id, route: undefined };
    return transform;
  });
  return {
    id: definition.id,
    enabled: definition.enabled,
    sources: [
      {
        id: LINEAR_SOURCE_ID,
        topics: sourceTopics,
        eventTypes: definition.source_event_types,
      },
    ],
    transforms,
    sinks: [{ id: LINEAR_SINK_ID, input, topic: definition.output }],
  };
}

/** A validated graph definition as a plan. */
export function planOfGraph(graph: PipelineGraph): PipelinePlan {
  return {
    id: graph.id,
    enabled: graph.enabled,
    sources: graph.sources.map((source) => ({
      id: source.id,
      topics: [source.topic],
      eventTypes: source.event_types,
    })),
    transforms: graph.transforms.map(({ id, input, ...operator }, index) => ({
      id,
      input: parseInput(input),
      operator: operator as Operator,
      label: `transforms[${index}] (${operator.type})`,
    })),
    sinks: graph.sinks.map((sink) => ({
      id: sink.id,
      input: parseInput(sink.input),
      topic: sink.topic,
    })),
  };
}
