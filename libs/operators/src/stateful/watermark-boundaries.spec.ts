// A source announces its event time only when it crosses a boundary its windows act on: that
// must be invisible downstream. Under any input, a window fed markers only at boundaries (and
// folding upstream against the last time it announced, as the processor does) gives the final
// results, the late events and the late count of one fed a marker after every batch.
import fc from 'fast-check';
import { validateDefinition } from '@sluice/contracts';
import type { PipelineDefinitionInput } from '@sluice/contracts';

import { emptyCounters } from '../counters';
import { compilePipeline } from '../pipeline';
import type { StatefulSpec } from '../pipeline';
import type { StageInput } from './stage';
import { EVERY_RISE, NO_BOUNDARY, windowEnds } from './watermark-boundaries';

const T0 = Date.UTC(2026, 10, 29);
const S = 1000;

describe('windowEnds', () => {
  const tumbling = windowEnds(60 * S, 60 * S, 0);

  it('is crossed where the watermark input reaches a window end plus the lateness', () => {
    expect(tumbling(-Infinity, 5 * S)).toBe(true);
    expect(tumbling(1 * S, 59.999 * S)).toBe(false);
    expect(tumbling(1 * S, 60 * S)).toBe(true);
    expect(tumbling(60 * S, 119 * S)).toBe(false);
    const late = windowEnds(60 * S, 60 * S, 30 * S);
    expect(late(60 * S, 89.999 * S)).toBe(false);
    expect(late(60 * S, 90 * S)).toBe(true);
    expect(late(90 * S, 149 * S)).toBe(false);
  });

  it('is crossed at every slide of a sliding window', () => {
    const sliding = windowEnds(60 * S, 20 * S, 0);
    expect(sliding(61 * S, 79 * S)).toBe(false);
    expect(sliding(61 * S, 80 * S)).toBe(true);
  });

  it('never by a fall or a standstill', () => {
    expect(tumbling(120 * S, 120 * S)).toBe(false);
    expect(tumbling(120 * S, 30 * S)).toBe(false);
    expect(EVERY_RISE(3, 3)).toBe(false);
    expect(EVERY_RISE(3, 4)).toBe(true);
    expect(NO_BOUNDARY(-Infinity, 4)).toBe(false);
  });
});

const windowArb = fc.oneof(
  fc.integer({ min: 1, max: 120 }).map((size) => ({ window_type: 'tumbling', size_seconds: size })),
  fc.tuple(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 4 })).map(([slide, k]) => ({
    window_type: 'sliding',
    size_seconds: slide * k,
    slide_seconds: slide,
  })),
);

const inputArb = fc.record({
  t: fc.integer({ min: 0, max: 900 }),
  g: fc.constantFrom('a', 'b', 'c'),
  v: fc.integer({ min: -80, max: 80 }),
});

function specOf(window: Record<string, unknown>, latenessSeconds: number): StatefulSpec {
  const validation = validateDefinition({
    name: 'p',
    output: 'o',
    operators: [
      {
        type: 'window',
        config: { ...window, allowed_lateness_seconds: latenessSeconds },
        aggregation: { type: 'reduce', field: 'v', function: 'sum', group_by: 'g' },
      },
    ],
  } as PipelineDefinitionInput);
  if (!validation.valid) throw new Error(JSON.stringify(validation.errors));
  return compilePipeline(validation.definition).stateful!;
}

/**
 * One source partition's batches through a combiner into the stage, a marker after each batch
 * when `announce` says so; the combiner folds against the last time announced.
 */
function run(
  spec: StatefulSpec,
  batches: Array<Array<{ t: number; g: string; v: number }>>,
  announce: (from: number, to: number) => boolean,
) {
  const results: string[] = [];
  const late: string[] = [];
  const counters = emptyCounters();
  const stage = spec.createStage({
    counters,
    emitter: {
      result: (key, record) => {
        if ((record as { final?: boolean }).final) results.push(JSON.stringify([key, record]));
      },
      late: (_key, record) => late.push(`${record.group} ${record.event_time}`),
    },
  });
  const combiner = spec.createCombiner!();
  let seen = -Infinity;
  let announced = -Infinity;
  let markers = 0;
  for (const batch of batches) {
    for (const e of batch) {
      const input: StageInput = {
        group: e.g,
        route: undefined,
        value: e.v,
        time: T0 + e.t * S,
        envelope: { event_type: 'x', payload: {} },
      };
      if (!combiner.add(input, announced - spec.latenessMs)) stage.add(input);
      seen = Math.max(seen, input.time);
    }
    for (const partial of combiner.drain()) stage.addPartial(partial);
    if (announce(announced, seen)) {
      announced = seen;
      markers += 1;
      stage.advanceTo(announced);
    }
  }
  return { results, late: late.sort(), counted: counters.late, markers };
}

describe('announcing event time only at window boundaries', () => {
  it('gives the results and late events of announcing after every batch', () => {
    fc.assert(
      fc.property(
        windowArb,
        fc.integer({ min: 0, max: 90 }),
        fc.array(fc.array(inputArb, { maxLength: 20 }), { maxLength: 16 }),
        (window, latenessSeconds, batches) => {
          const spec = specOf(window, latenessSeconds);
          const everyBatch = run(spec, batches, EVERY_RISE);
          const atBoundaries = run(spec, batches, spec.watermarkBoundaries);
          expect(atBoundaries.results).toEqual(everyBatch.results);
          expect(atBoundaries.late).toEqual(everyBatch.late);
          expect(atBoundaries.counted).toBe(everyBatch.counted);
          expect(atBoundaries.markers).toBeLessThanOrEqual(everyBatch.markers);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('sends far fewer markers when batches are short beside the window', () => {
    const spec = specOf({ window_type: 'tumbling', size_seconds: 600 }, 0);
    const batches = Array.from({ length: 90 }, (_, i) => [{ t: i * 10, g: 'a', v: 1 }]);
    expect(run(spec, batches, EVERY_RISE).markers).toBe(90);
    // The first, then the crossing of the end at 600.
    expect(run(spec, batches, spec.watermarkBoundaries).markers).toBe(2);
  });
});
