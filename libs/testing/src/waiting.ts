import { once } from 'node:events';
import { createServer } from 'node:net';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A TCP port nobody listens on now (the OS picks it), for a process a test starts. */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface UntilOptions {
  /** What is awaited, for the error message. */
  what?: string;
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Polls `check` until it holds. A check that throws counts as "not yet" (a process still
 * starting refuses connections); the last error is in the message if time runs out.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  { what = 'condition', timeoutMs = 60_000, intervalMs = 200 }: UntilOptions = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`${what} not reached within ${timeoutMs} ms${cause}`);
    }
    await sleep(intervalMs);
  }
}
