import { settledWithin } from './settled-within';

const after = <T>(ms: number, value: T): Promise<T> =>
  new Promise((resolve) => setTimeout(() => resolve(value), ms));

describe('settledWithin', () => {
  it('is true as soon as the work settles, resolved or rejected', async () => {
    const started = Date.now();
    expect(await settledWithin(after(10, 'done'), 1000)).toBe(true);
    const failing = Promise.reject(new Error('refused'));
    expect(await settledWithin(failing, 1000)).toBe(true);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('is false at the deadline, and the work goes on to its end', async () => {
    let finished = false;
    const work = after(150, undefined).then(() => {
      finished = true;
    });
    expect(await settledWithin(work, 20)).toBe(false);
    expect(finished).toBe(false);
    await work;
    expect(finished).toBe(true);
  });
});
