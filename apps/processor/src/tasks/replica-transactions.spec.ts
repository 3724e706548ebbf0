import { indexOf } from './replica-transactions';

describe("a task's transaction among the replica's", () => {
  it('is the same for the same task, within range, and spreads the tasks over all of them', () => {
    const keys = ['events', ...Array.from({ length: 10 }, (_, i) => `p${i}.repartition`)].flatMap(
      (topic) => Array.from({ length: 6 }, (_, partition) => `${topic}/${partition}`),
    );
    const counts = new Array<number>(4).fill(0);
    for (const key of keys) {
      const index = indexOf(key, 4);
      expect(indexOf(key, 4)).toBe(index);
      expect(index).toBeGreaterThanOrEqual(0);
      expect(index).toBeLessThan(4);
      counts[index]! += 1;
    }
    // 66 tasks: none of the four gets fewer than half its share, nor more than twice.
    for (const count of counts) {
      expect(count).toBeGreaterThanOrEqual(66 / 4 / 2);
      expect(count).toBeLessThanOrEqual((66 / 4) * 2);
    }
    expect(indexOf('events/0', 1)).toBe(0);
  });
});
