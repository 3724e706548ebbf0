// The stateful nodes (reduces and windows) of a plan, as the processor hosts them apart from the
// stateless ones: each with its compiled spec, the sink its results go to, and the sources whose
// event time drives its watermark.
import type { ReduceOperator, WindowOperator } from '@sluice/contracts';

import { compileStateful } from '../pipeline';
import type { StatefulSpec } from '../pipeline';
import type { PipelinePlan, PlanSink, PlanSource } from './plan';

export interface StatefulNode {
  readonly id: string;
  readonly spec: StatefulSpec;
  /** Where its results go (a reduce or window feeds sinks only); `undefined`: nowhere. */
  readonly sink: PlanSink | undefined;
  /** The sources whose records reach it: only their event time moves its watermark. */
  readonly sources: readonly PlanSource[];
}

export function statefulNodesOf(plan: PipelinePlan): StatefulNode[] {
  const transforms = new Map(plan.transforms.map((transform) => [transform.id, transform]));
  const sources = new Map(plan.sources.map((source) => [source.id, source]));
  /** The source a node descends from: every transform has one input, so the way up is one. */
  const sourceOf = (id: string): PlanSource => {
    const seen = new Set<string>();
    let node = id;
    for (;;) {
      const source = sources.get(node);
      if (source) return source;
      const transform = transforms.get(node);
      if (!transform || seen.has(node))
        throw new Error(`pipeline ${plan.id}: ${id} does not descend from a source`);
      seen.add(node);
      node = transform.input.node;
    }
  };
  return plan.transforms
    .filter(({ operator }) => operator.type === 'reduce' || operator.type === 'window')
    .map(({ id, operator, label }) => ({
      id,
      spec: compileStateful(plan.id, operator as ReduceOperator | WindowOperator, label),
      sink: plan.sinks.find((sink) => sink.input.node === id),
      sources: [sourceOf(id)],
    }));
}
