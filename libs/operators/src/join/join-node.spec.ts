import type { JoinOperator, JoinResult } from '@sluice/contracts';

import { emptyCounters } from '../counters';
import type { StageInput } from '../stateful/stage';
import { compileJoin } from './join-node';

const HOUR = 3_600_000;

/** An inner interval join within an hour, as the processor creates it (inputs read again). */
function intervalStage() {
  const operator = { type: 'join', on: 'key', within_seconds: 3600 } as JoinOperator;
  const spec = compileJoin('p', {
    id: 'paid',
    label: 'join "paid"',
    operator,
    table: false,
    keyPaths: { left: 'key', right: 'key' },
  });
  const results: JoinResult[] = [];
  const stage = spec.createStage({
    counters: emptyCounters(),
    trackChanges: true,
    replayInputs: true,
    emitter: { result: (_key, record) => results.push(record as JoinResult), late: () => {} },
  });
  return { stage, results };
}

const input = (side: 'left' | 'right', offset: number, amount: number): StageInput => ({
  group: 'k',
  route: undefined,
  value: 0,
  time: HOUR * 10 + offset,
  envelope: { event_type: side, payload: { key: 'k', amount } },
  side,
  id: String(offset),
});

describe('an interval join stage fed by the processor', () => {
  it('takes an offset delivered again (added or read again) once, each side on its own', () => {
    const { stage, results } = intervalStage();
    stage.add(input('left', 1, 10));
    stage.add(input('right', 1, 20)); // the same offset on the other side: its own record
    stage.add(input('left', 1, 10)); // delivered again
    stage.replay!(input('left', 1, 10));
    stage.replay!(input('right', 1, 20));
    expect(stage.size()).toBe(2);
    stage.add(input('right', 2, 30));
    expect(results.map((r) => [r.left, r.right])).toEqual([
      [
        { key: 'k', amount: 10 },
        { key: 'k', amount: 20 },
      ],
      [
        { key: 'k', amount: 10 },
        { key: 'k', amount: 30 },
      ],
    ]);
  });

  it('after a restore, reads its input again from the oldest buffered offset, once', () => {
    const { stage } = intervalStage();
    stage.add(input('left', 5, 10));
    stage.add(input('right', 6, 20));
    const changelog = stage.drainChanges();
    expect(stage.replayFrom!()).toBe('5');

    const next = intervalStage();
    next.stage.restore(changelog);
    for (const offset of [5, 6, 5, 6]) {
      const side = offset === 5 ? 'left' : 'right';
      next.stage.replay!(input(side, offset, offset === 5 ? 10 : 20));
    }
    expect(next.stage.size()).toBe(2);
    expect(next.results).toEqual([]);
    next.stage.add(input('right', 7, 30));
    expect(next.results.map((r) => r.right)).toEqual([{ key: 'k', amount: 30 }]);
  });
});
