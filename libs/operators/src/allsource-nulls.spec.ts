// AllSource sends its Option fields as null; they run as AllSource runs them (docs/design.md §2).
import { validateDefinition } from '@sluice/contracts';
import type { PipelineDefinition, ReduceResult, WindowResult } from '@sluice/contracts';

import { runReference } from './reference';
import { orderEvent } from './testing';

function valid(input: unknown): PipelineDefinition {
  const result = validateDefinition(input);
  if (!result.valid) throw new Error(JSON.stringify(result.errors));
  return result.definition;
}

const windowed = (config: Record<string, unknown>) =>
  valid({
    name: 'nulls',
    output: 'out',
    operators: [
      {
        type: 'window',
        config,
        aggregation: { type: 'reduce', function: 'count', group_by: null },
      },
    ],
  });

const windows = (definition: PipelineDefinition, times: string[]) =>
  runReference(
    definition,
    times.map((t) => orderEvent(t, { total: 1, currency: 'gbp' })),
  ).results.map((r) => {
    const value = r.value as WindowResult;
    return [
      value.window.start.slice(11, 19),
      value.window.end.slice(11, 19),
      value.value,
      value.group,
    ];
  });

describe("AllSource's nulls, run", () => {
  it('group_by: null puts every event in one group, keyed by the pipeline', () => {
    const definition = valid({
      name: 'count',
      output: 'out',
      operators: [{ type: 'reduce', function: 'count', group_by: null }],
    });
    const run = runReference(definition, [
      orderEvent('2026-11-28T09:00:00Z', { total: 1, currency: 'gbp' }),
      orderEvent('2026-11-28T09:01:00Z', { total: 1, currency: 'usd' }),
    ]);
    const last = run.results.at(-1)!;
    expect(last.key).toBe(definition.id);
    expect((last.value as ReduceResult).value).toBe(2);
    expect((last.value as ReduceResult).group).toBeNull();
  });

  it('a sliding window with slide_seconds: null slides by its size (a tumbling window)', () => {
    const times = ['2026-11-28T09:00:10Z', '2026-11-28T09:00:50Z', '2026-11-28T09:01:30Z'];
    const sliding = windows(
      windowed({ window_type: 'sliding', size_seconds: 60, slide_seconds: null }),
      times,
    );
    expect(sliding).toEqual([
      ['09:00:00', '09:01:00', 2, null],
      ['09:01:00', '09:02:00', 1, null],
    ]);
    expect(sliding).toEqual(
      windows(windowed({ window_type: 'tumbling', size_seconds: 60 }), times),
    );
  });

  it('a session window with session_timeout_seconds: null closes after 300 s of quiet', () => {
    const sessions = windows(
      windowed({ window_type: 'session', size_seconds: 60, session_timeout_seconds: null }),
      ['2026-11-28T09:00:00Z', '2026-11-28T09:04:59Z', '2026-11-28T09:10:00Z'],
    );
    expect(sessions).toEqual([
      ['09:00:00', '09:09:59', 2, null],
      ['09:10:00', '09:15:00', 1, null],
    ]);
  });
});
