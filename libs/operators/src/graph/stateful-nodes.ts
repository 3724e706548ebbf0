// The stateful nodes (reduces, windows and joins) of a plan, as the processor hosts them apart
// from the stateless ones: each with its compiled spec, the sink its results go to, and the
// sources whose event time drives its watermark (both inputs' for a join).
import type { ReduceOperator, WindowOperator } from '@sluice/contracts';

import { compileJoin } from '../join/join-node';
import type { JoinSpec } from '../join/join-node';
import { compileStateful } from '../pipeline';
import type { StatefulSpec } from '../pipeline';
import { sourcesOf } from './plan';
import type { PipelinePlan, PlanSink, PlanSource } from './plan';

export interface StatefulNode {
  readonly id: string;
  readonly spec: StatefulSpec | JoinSpec;
  /** Where its results go (a stateful node feeds sinks only); `undefined`: nowhere. */
  readonly sink: PlanSink | undefined;
  /** The sources whose records reach it: only their event time moves its watermark. */
  readonly sources: readonly PlanSource[];
}

export function statefulNodesOf(plan: PipelinePlan): StatefulNode[] {
  const sources = new Map(plan.sources.map((source) => [source.id, source]));
  const placed = (id: string, spec: StatefulSpec | JoinSpec): StatefulNode => ({
    id,
    spec,
    sink: plan.sinks.find((sink) => sink.input.node === id),
    sources: sourcesOf(plan, id).map((source) => sources.get(source)!),
  });
  return [
    ...plan.transforms
      .filter(({ operator }) => operator.type === 'reduce' || operator.type === 'window')
      .map(({ id, operator, label }) =>
        placed(id, compileStateful(plan.id, operator as ReduceOperator | WindowOperator, label)),
      ),
    ...plan.joins.map((join) => placed(join.id, compileJoin(plan.id, join))),
  ];
}
