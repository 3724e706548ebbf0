import { createServer } from 'node:net';

import { freePort, until } from './waiting';

describe('until', () => {
  it('returns once the check holds, treating a throwing check as not yet', async () => {
    let calls = 0;
    await until(
      () => {
        calls += 1;
        if (calls < 3) throw new Error('not listening yet');
        return calls >= 4;
      },
      { intervalMs: 1 },
    );
    expect(calls).toBe(4);
  });

  it('names what it waited for and the last error when time runs out', async () => {
    await expect(
      until(
        () => {
          throw new Error('connection refused');
        },
        { what: 'the admin', timeoutMs: 20, intervalMs: 5 },
      ),
    ).rejects.toThrow('the admin not reached within 20 ms (last error: connection refused)');
  });
});

describe('freePort', () => {
  it('gives a port that can be listened on', async () => {
    const port = await freePort();
    const server = createServer().listen(port, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    server.close();
    expect(port).toBeGreaterThan(0);
  });
});
