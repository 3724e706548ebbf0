// The processor lets a source's transaction stay open for the quiet interval while it holds
// only folded partials of nodes that do not emit on input (apps/processor task-output.ts): such
// a node must fire only when a marker from that same source moves its watermark, and a marker
// always makes the transaction due. A node that can fire without one (an idle timeout judges
// a silent source by the wall clock) must therefore fold nothing upstream, or emit on input.
import { validateDefinition } from '@sluice/contracts';
import type { ReduceOperator, WindowOperator } from '@sluice/contracts';

import { compileStateful } from '../pipeline';

function statefulOf(operator: Record<string, unknown>): ReduceOperator | WindowOperator {
  const result = validateDefinition({ name: 'quiet', output: 'out', operators: [operator] });
  if (!result.valid) throw new Error(JSON.stringify(result.errors));
  return result.definition.operators[0] as ReduceOperator | WindowOperator;
}

const aggregation = { type: 'reduce', function: 'sum', field: 'total', group_by: 'currency' };
const configs = [
  { window_type: 'tumbling', size_seconds: 60 },
  { window_type: 'sliding', size_seconds: 60, slide_seconds: 20 },
  { window_type: 'session', session_timeout_seconds: 30 },
];

const operators: Array<[string, Record<string, unknown>]> = [
  ['reduce', { type: 'reduce', function: 'sum', field: 'total', group_by: 'currency' }],
];
for (const config of configs)
  for (const emit of [undefined, 'update'])
    for (const idle of [undefined, 5]) {
      const withIdle = idle === undefined ? config : { ...config, idle_timeout_seconds: idle };
      const name = `${config.window_type}, emit ${emit ?? 'final'}, idle timeout ${idle ?? 'none'}`;
      operators.push([
        name,
        { type: 'window', config: withIdle, aggregation, ...(emit ? { emit } : {}) },
      ]);
    }

describe('a stateful node whose partials a quiet transaction may hold', () => {
  it.each(operators)(
    '%s: folds upstream only if a marker fires it or it emits on input',
    (_, op) => {
      const spec = compileStateful('p', statefulOf(op), 'operators[0]');
      if (spec.createCombiner === undefined) return;
      expect(spec.emitsOnInput || spec.idleTimeoutMs === undefined).toBe(true);
    },
  );

  it('a window that emits only when it closes folds upstream and is quiet', () => {
    const spec = compileStateful(
      'p',
      statefulOf({ type: 'window', config: configs[0], aggregation }),
      'operators[0]',
    );
    expect(spec.createCombiner).toBeDefined();
    expect(spec.emitsOnInput).toBe(false);
  });
});
