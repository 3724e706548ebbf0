// A stateful partition's input watermark (docs/design.md §4): the smallest event time announced over the
// upstream source partitions that feed it, with Flink-style idleness. Pure: the wall clock is an
// argument, so every rule here is unit-tested.

export interface UpstreamWatermarksOptions {
  /** `<topic>/<partition>` of every upstream source partition. */
  upstreams: readonly string[];
  /** `idle_timeout_seconds` in ms; undefined: an upstream is never left out. */
  idleTimeoutMs: number | undefined;
  /** Wall-clock time the task started watching (an upstream that never spoke is idle from it). */
  now: number;
}

export class UpstreamWatermarks {
  private readonly announced = new Map<string, number>();
  /** Wall-clock time each upstream last moved its event time. */
  private readonly lastAdvance = new Map<string, number>();
  private readonly openedAt: number;
  /** When event time last resumed after every upstream had gone idle (see `minimum`). */
  private wokeAt = -Infinity;

  constructor(private readonly options: UpstreamWatermarksOptions) {
    this.openedAt = options.now;
  }

  /** The announced time of each upstream that announced one (what the changelog keeps). */
  entries(): IterableIterator<[string, number]> {
    return this.announced.entries();
  }

  /** The event time `upstream` announced last (`undefined`: none yet). */
  timeOf(upstream: string): number | undefined {
    return this.announced.get(upstream);
  }

  /** Restores an upstream's time read back from the changelog (`undefined`: forget it). */
  restore(upstream: string, time: number | undefined): void {
    if (time === undefined) this.announced.delete(upstream);
    else this.announced.set(upstream, time);
  }

  /**
   * An upstream announced `time`. Returns whether that moved its event time (a lower or equal
   * announcement, such as a new owner repeating what was committed, changes nothing).
   */
  announce(upstream: string, time: number, now: number): boolean {
    if (time <= (this.announced.get(upstream) ?? -Infinity)) return false;
    this.announced.set(upstream, time);
    if (this.allIdle(now)) this.wokeAt = now;
    this.lastAdvance.set(upstream, now);
    return true;
  }

  /**
   * The smallest event time announced over the upstreams (-Infinity while one has announced
   * nothing). With an idle timeout, an upstream whose time has not moved for that long (wall
   * clock) is left out, as Flink's idleness does, so one silent source partition does not hold
   * every window open; when all are idle, -Infinity (the stage's own idle flush takes over).
   *
   * Unlike Flink, when time resumes after every upstream was idle, each upstream gets a fresh
   * timeout before it is left out again: a burst produced to all partitions at once reaches
   * them one fetch after another, and the first one alone must not fire windows that the
   * others' events still belong to (they would all be late).
   */
  minimum(now: number): number {
    let minimum = Infinity;
    for (const upstream of this.options.upstreams) {
      if (this.isIdle(upstream, now)) continue;
      const time = this.announced.get(upstream);
      if (time === undefined) return -Infinity;
      if (time < minimum) minimum = time;
    }
    return minimum === Infinity ? -Infinity : minimum;
  }

  isIdle(upstream: string, now: number): boolean {
    const idleMs = this.options.idleTimeoutMs;
    if (idleMs === undefined) return false;
    const since = Math.max(this.lastAdvance.get(upstream) ?? this.openedAt, this.wokeAt);
    return now - since >= idleMs;
  }

  allIdle(now: number): boolean {
    for (const upstream of this.options.upstreams) if (!this.isIdle(upstream, now)) return false;
    return true;
  }
}
