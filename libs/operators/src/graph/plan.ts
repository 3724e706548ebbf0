// The one graph both definition forms compile to (docs/design.md §9): sources, transforms with
// one input each, and sinks. A linear definition is the chain source → operators → output.
import { isJoin, isTableSource, joinPaths, parseInput } from '@sluice/contracts';
import type { Operator, PipelineDefinition, PipelineGraph } from '@sluice/contracts';

import { DEFAULT_ENRICH_KEY } from '../stateless/enrich';
import type { JoinNodeSpec } from '../join/join-node';

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
  /** A table (`as: table`): read only by joins, each row keyed at `key`. */
  readonly table?: { readonly key: string };
}

export interface PlanTransform {
  readonly id: string;
  readonly input: PlanInput;
  readonly operator: Operator;
  /** How reasons and errors name it: `operators[1] (map)`, `transforms[0] (filter)`. */
  readonly label: string;
}

/** A join: the plan's one node with two inputs. */
export interface PlanJoin extends JoinNodeSpec {
  readonly left: PlanInput;
  readonly right: PlanInput;
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
  readonly joins: readonly PlanJoin[];
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
    joins: [],
    sinks: [{ id: LINEAR_SINK_ID, input, topic: definition.output }],
  };
}

/** A validated graph definition as a plan. */
export function planOfGraph(graph: PipelineGraph): PipelinePlan {
  const tables = new Map(
    graph.sources
      .filter(isTableSource)
      .map((source) => [source.id, source.key ?? DEFAULT_ENRICH_KEY]),
  );
  const transforms: PlanTransform[] = [];
  const joins: PlanJoin[] = [];
  graph.transforms.forEach((transform, index) => {
    const label = `transforms[${index}] (${transform.type})`;
    if (isJoin(transform)) {
      const { id, inputs, ...operator } = transform;
      const [left, right] = inputs.map(parseInput) as [PlanInput, PlanInput];
      const tableKey = tables.get(right.node);
      const paths = joinPaths(operator);
      joins.push({
        id,
        label,
        operator,
        left,
        right,
        table: tableKey !== undefined,
        // A table's rows are keyed by the table's own key, whatever `on` says of the right.
        keyPaths: { left: paths.left, right: tableKey ?? paths.right },
      });
      return;
    }
    const { id, input, ...operator } = transform;
    transforms.push({ id, input: parseInput(input), operator: operator as Operator, label });
  });
  return {
    id: graph.id,
    enabled: graph.enabled,
    sources: graph.sources.map((source) => ({
      id: source.id,
      topics: [source.topic],
      eventTypes: source.event_types,
      ...(isTableSource(source) ? { table: { key: tables.get(source.id)! } } : {}),
    })),
    transforms,
    joins,
    sinks: graph.sinks.map((sink) => ({
      id: sink.id,
      input: parseInput(sink.input),
      topic: sink.topic,
    })),
  };
}

/** The ids of the sources whose records reach `nodeId`: one for most nodes, two below a join. */
export function sourcesOf(plan: PipelinePlan, nodeId: string): string[] {
  const sources = new Set(plan.sources.map((source) => source.id));
  const inputsOf = new Map<string, PlanInput[]>();
  for (const { id, input } of plan.transforms) inputsOf.set(id, [input]);
  for (const { id, left, right } of plan.joins) inputsOf.set(id, [left, right]);
  const found = new Set<string>();
  const seen = new Set<string>();
  const visit = (id: string): void => {
    if (seen.has(id)) return;
    seen.add(id);
    if (sources.has(id)) {
      found.add(id);
      return;
    }
    const inputs = inputsOf.get(id);
    if (!inputs) throw new Error(`pipeline ${plan.id}: ${nodeId} does not descend from a source`);
    for (const input of inputs) visit(input.node);
  };
  visit(nodeId);
  return [...found];
}
