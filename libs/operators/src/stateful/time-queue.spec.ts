import fc from 'fast-check';

import { TimeQueue } from './time-queue';

describe('TimeQueue', () => {
  it('pops by time, then in the order pushed, however pushes and pops interleave (property)', () => {
    // Times mostly rising, as a stream's are, with some out of order and many ties.
    const stepArb = fc.oneof(
      fc.record({ push: fc.integer({ min: -3, max: 10 }) }),
      fc.record({ pop: fc.constant(true) }),
    );
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 3000 }), (steps) => {
        const queue = new TimeQueue<number>();
        // The model: what is held, as [time, push order], in a plain array.
        const held: Array<[number, number]> = [];
        let last = 0;
        let pushed = 0;
        for (const step of steps) {
          if ('push' in step) {
            last += step.push;
            queue.push(last, pushed);
            held.push([last, pushed]);
            pushed += 1;
          } else {
            held.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
            expect(queue.peekTime()).toBe(held[0]?.[0] ?? Infinity);
            expect(queue.pop()).toBe(held.shift()?.[1]);
          }
          expect(queue.size).toBe(held.length);
        }
        held.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
        const rest: number[] = [];
        while (queue.size > 0) rest.push(queue.pop()!);
        expect(rest).toEqual(held.map(([, order]) => order));
        expect(queue.pop()).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });

  it('keeps its order across the run’s compaction, with items out of order held meanwhile', () => {
    const queue = new TimeQueue<number>();
    // The model: held items sorted by time, then push order (a push goes after its equals).
    const held: Array<[number, number]> = [];
    const hold = (time: number, order: number) => {
      let at = held.length;
      while (at > 0 && held[at - 1]![0] > time) at -= 1;
      held.splice(at, 0, [time, order]);
    };
    for (let i = 0; i < 20_000; i++) {
      // In pairs of equal times, every hundredth 50 behind.
      const time = i % 100 === 99 ? i - 50 : i - (i % 2);
      queue.push(time, i);
      hold(time, i);
      if (i % 3 === 0) continue;
      expect(queue.peekTime()).toBe(held[0]![0]);
      expect(queue.pop()).toBe(held.shift()![1]);
    }
    while (held.length > 0) {
      expect(queue.peekTime()).toBe(held[0]![0]);
      expect(queue.pop()).toBe(held.shift()![1]);
    }
    expect(queue.size).toBe(0);
  });

  it('is empty after clear', () => {
    const queue = new TimeQueue<string>();
    queue.push(5, 'a');
    queue.push(3, 'b');
    queue.clear();
    expect(queue.size).toBe(0);
    expect(queue.peekTime()).toBe(Infinity);
    queue.push(1, 'c');
    expect(queue.pop()).toBe('c');
  });
});
