// Waiting for work that must not hold its caller past a deadline, where the work itself goes
// on: the consumer's commits before a rebalance, which it cannot wait for past its session.
/**
 * Resolves `true` once `work` settles (resolved or rejected), or `false` after `ms` if it has
 * not; `work` runs on either way, and its rejection is left to whoever else holds it.
 */
export async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = work.then(
    () => true as const,
    () => true as const,
  );
  try {
    return await Promise.race([settled, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
