// A stateful task's commit metadata: the offset of the oldest input its stages hold outside the
// changelog (a temporal table join's waiting records), from which a new owner reads the
// repartition partition again after restoring the changelog.

export function rereadMetadata(from: string | undefined): string | undefined {
  return from === undefined ? undefined : JSON.stringify({ reread_from: from });
}

/** The offset the metadata asks to read again from (`undefined`: none, or not ours). */
export function rereadFromOf(metadata: string | undefined): string | undefined {
  if (!metadata) return undefined;
  try {
    const from = (JSON.parse(metadata) as { reread_from?: unknown }).reread_from;
    return typeof from === 'string' && /^\d+$/.test(from) ? from : undefined;
  } catch {
    return undefined;
  }
}

/** The smaller of two offsets (`undefined`: none). */
export function earlier(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return BigInt(a) <= BigInt(b) ? a : b;
}

/**
 * How far a rebuilt state's second read of its input has come. Until it reaches the committed
 * offset it started from, the records still to read again are in no state: a commit meanwhile
 * names the oldest of them, and a resume that keeps the task (a rebalance that leaves it here)
 * goes on reading them, so neither a crash nor a rebalance mid-way loses them.
 */
export class RereadProgress {
  private next: string | undefined;
  private end: string | undefined;

  /** After a restore: read again from where `metadata` asks, up to `committed`. */
  start(metadata: string | undefined, committed: string | undefined): void {
    const from = rereadFromOf(metadata);
    const reads = from !== undefined && committed !== undefined && BigInt(from) < BigInt(committed);
    this.next = reads ? from : undefined;
    this.end = reads ? committed : undefined;
  }

  /** The records up to `last` were read again. */
  advance(last: string): void {
    if (this.next === undefined) return;
    const next = BigInt(last) + 1n;
    if (next >= BigInt(this.end!)) this.next = this.end = undefined;
    else if (next > BigInt(this.next)) this.next = next.toString();
  }

  /** Where the consumer reads on from to finish (`undefined`: nothing left to read again). */
  get from(): string | undefined {
    return this.next;
  }

  /** The commit's metadata: the oldest of `held` (what the stages hold) and what is left. */
  metadata(held: string | undefined): string | undefined {
    return rereadMetadata(earlier(held, this.next));
  }
}
