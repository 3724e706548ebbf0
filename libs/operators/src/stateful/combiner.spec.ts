// A combiner must be invisible: under the same watermark schedule, folding inputs upstream and
// merging the partials gives the same results and the same late events as adding them one by one.
import fc from 'fast-check';
import { validateDefinition } from '@sluice/contracts';
import type { PipelineDefinitionInput } from '@sluice/contracts';

import { emptyCounters } from '../counters';
import { compilePipeline } from '../pipeline';
import type { StageInput } from './stage';

const T0 = Date.UTC(2026, 10, 29);

const windowArb = fc.oneof(
  fc.integer({ min: 1, max: 120 }).map((size) => ({ window_type: 'tumbling', size_seconds: size })),
  fc.tuple(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 4 })).map(([slide, k]) => ({
    window_type: 'sliding',
    size_seconds: slide * k,
    slide_seconds: slide,
  })),
);

const inputArb = fc.record({
  t: fc.integer({ min: 0, max: 600 }),
  g: fc.constantFrom('a', 'b', 'c'),
  v: fc.integer({ min: -800, max: 800 }).map((n) => n / 8),
});

function stateful(definition: PipelineDefinitionInput) {
  const validation = validateDefinition(definition);
  if (!validation.valid) throw new Error(JSON.stringify(validation.errors));
  return compilePipeline(validation.definition).stateful!;
}

function run(
  spec: ReturnType<typeof stateful>,
  batches: Array<Array<{ t: number; g: string; v: number }>>,
  lateness: number,
  combine: boolean,
) {
  const results: string[] = [];
  const late: string[] = [];
  const counters = emptyCounters();
  const stage = spec.createStage({
    counters,
    emitter: {
      result: (key, record) => results.push(JSON.stringify([key, record])),
      late: (_key, record) => late.push(record.event_time),
    },
  });
  const combiner = combine ? spec.createCombiner!() : undefined;
  let announced = -Infinity;
  for (const batch of batches) {
    for (const e of batch) {
      const input: StageInput = {
        group: e.g,
        route: undefined,
        value: e.v,
        time: T0 + e.t * 1000,
        envelope: { event_type: 'x', payload: {} },
      };
      if (!combiner?.add(input, announced - lateness)) stage.add(input);
      announced = Math.max(announced, input.time);
    }
    for (const partial of combiner?.drain() ?? []) stage.addPartial(partial);
    stage.advanceTo(announced);
  }
  stage.flush();
  return { results: results.sort(), late: late.sort(), counted: counters.late };
}

describe('combiners', () => {
  it('folding upstream gives the results and late events of adding one by one', () => {
    fc.assert(
      fc.property(
        windowArb,
        fc.constantFrom('count', 'sum', 'avg', 'min', 'max'),
        fc.integer({ min: 0, max: 90 }),
        fc.array(fc.array(inputArb, { maxLength: 30 }), { maxLength: 12 }),
        (window, fn, latenessSeconds, batches) => {
          const spec = stateful({
            name: 'p',
            output: 'o',
            operators: [
              {
                type: 'window',
                config: { ...window, allowed_lateness_seconds: latenessSeconds },
                aggregation: { type: 'reduce', field: 'v', function: fn, group_by: 'g' },
              },
            ],
          } as PipelineDefinitionInput);
          const lateness = latenessSeconds * 1000;
          const oneByOne = run(spec, batches, lateness, false);
          const combined = run(spec, batches, lateness, true);
          expect(combined.results.filter((r) => r.includes('"final":true'))).toEqual(
            oneByOne.results.filter((r) => r.includes('"final":true')),
          );
          expect(combined.late).toEqual(oneByOne.late);
          expect(combined.counted).toBe(oneByOne.counted);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a reduce folds everything and ends with the same value per group', () => {
    const spec = stateful({
      name: 'p',
      output: 'o',
      operators: [{ type: 'reduce', field: 'v', function: 'sum', group_by: 'g' }],
    });
    fc.assert(
      fc.property(fc.array(fc.array(inputArb, { maxLength: 20 }), { maxLength: 8 }), (batches) => {
        const latest = (results: string[]) => {
          const byKey = new Map<string, unknown>();
          for (const line of results) {
            const [key, record] = JSON.parse(line) as [string, { value: number }];
            byKey.set(key, record.value);
          }
          return byKey;
        };
        const ordered = (combine: boolean) => {
          const out: string[] = [];
          const stage = spec.createStage({
            counters: emptyCounters(),
            emitter: { result: (k, r) => out.push(JSON.stringify([k, r])), late: () => undefined },
          });
          const combiner = spec.createCombiner!();
          for (const batch of batches) {
            for (const e of batch) {
              const input = {
                group: e.g,
                route: undefined,
                value: e.v,
                time: 0,
                envelope: { event_type: 'x', payload: {} },
              };
              if (!combine || !combiner.add(input, 0)) stage.add(input);
            }
            for (const partial of combiner.drain()) stage.addPartial(partial);
          }
          return latest(out);
        };
        expect(ordered(true)).toEqual(ordered(false));
      }),
    );
  });

  it('sessions and idle timeouts have no combiner', () => {
    expect(
      stateful({
        name: 'p',
        output: 'o',
        operators: [
          {
            type: 'window',
            config: { window_type: 'session', session_timeout_seconds: 60 },
            aggregation: { type: 'reduce', field: 'v', function: 'sum' },
          },
        ],
      }).createCombiner,
    ).toBeUndefined();
    expect(
      stateful({
        name: 'p',
        output: 'o',
        operators: [
          {
            type: 'window',
            config: { window_type: 'tumbling', size_seconds: 60, idle_timeout_seconds: 5 },
            aggregation: { type: 'reduce', field: 'v', function: 'sum' },
          },
        ],
      }).createCombiner,
    ).toBeUndefined();
  });
});
