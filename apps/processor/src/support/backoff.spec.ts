import { backoffDelay, FAILURE_BACKOFF, Stopped, untilSucceeds } from './backoff';

describe('backoffDelay', () => {
  it('doubles from the first delay up to the bound', () => {
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, FAILURE_BACKOFF))).toEqual([
      250, 500, 1000, 2000,
    ]);
    expect(backoffDelay(9, FAILURE_BACKOFF)).toBe(60_000);
    expect(backoffDelay(50, FAILURE_BACKOFF)).toBe(60_000);
  });
});

describe('untilSucceeds', () => {
  const quick = { firstMs: 1, maxMs: 4 };

  it('retries until the work succeeds, reporting each failure', async () => {
    let calls = 0;
    const failures: Array<[number, number]> = [];
    const result = await untilSucceeds(
      async () => {
        calls += 1;
        if (calls < 4) throw new Error(`attempt ${calls}`);
        return 'done';
      },
      {
        backoff: quick,
        stopped: () => false,
        onError: (_e, attempt, delay) => failures.push([attempt, delay]),
      },
    );
    expect(result).toBe('done');
    expect(failures).toEqual([
      [1, 1],
      [2, 2],
      [3, 4],
    ]);
  });

  it('gives up once stopped', async () => {
    let stopped = false;
    const run = untilSucceeds(
      async () => {
        stopped = true;
        throw new Error('broker away');
      },
      { backoff: quick, stopped: () => stopped, onError: () => undefined },
    );
    await expect(run).rejects.toBeInstanceOf(Stopped);
  });
});

describe('untilSucceeds with a fatal error', () => {
  it('stops retrying and rejects with that error', async () => {
    let attempts = 0;
    const heard: unknown[] = [];
    const refused = new Error('refused');
    const waiting = untilSucceeds(
      async () => {
        attempts += 1;
        throw attempts < 3 ? new Error('away') : refused;
      },
      {
        backoff: { firstMs: 1, maxMs: 1 },
        stopped: () => false,
        fatal: (error) => error === refused,
        onError: (error) => heard.push((error as Error).message),
      },
    );
    await expect(waiting).rejects.toBe(refused);
    expect(attempts).toBe(3);
    expect(heard).toEqual(['away', 'away']);
  });
});
