import { SerialQueue } from './serial-queue';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('SerialQueue', () => {
  it('runs each piece after the one before has finished, in order', async () => {
    const queue = new SerialQueue();
    const log: string[] = [];
    const piece = (name: string, waits: number) =>
      queue.run(async () => {
        log.push(`${name} starts`);
        for (let i = 0; i < waits; i++) await tick();
        log.push(`${name} ends`);
        return name;
      });
    const results = await Promise.all([piece('a', 3), piece('b', 0), piece('c', 1)]);
    expect(results).toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['a starts', 'a ends', 'b starts', 'b ends', 'c starts', 'c ends']);
  });

  it('goes on after a failure, which fails only its own piece', async () => {
    const queue = new SerialQueue();
    const failing = queue.run(() => Promise.reject(new Error('boom')));
    const next = queue.run(() => Promise.resolve(2));
    await expect(failing).rejects.toThrow('boom');
    await expect(next).resolves.toBe(2);
  });
});
