// Each pipeline's position in one source partition (docs/design.md §9, positions). They travel in
// the metadata of the partition's offset commit, so they commit atomically with the results and
// the offset: the group's offset is the smallest of them, and a pipeline further on is listed
// with its own. A pipeline is known here by its run (its id, creation and replay generation):
// a run the partition has never seen starts where its definition says (a backfill, a replay),
// one the partition knows goes on from its position. Pure: the offsets are plain numbers.
//
// Metadata: { "t": <largest event time announced>, "r": [<runs>], "p": { <run>: <offset> },
// "h": <offset> }. A run in `r` without `p` is at the committed offset; `h`, when past the
// committed offset, is how far the partition was read (a run going back reads it again). Metadata from before positions (no `r`)
// means every pipeline met is at the committed offset, as it was then.

/** The broker's default `offset.metadata.max.bytes`. */
const MAX_METADATA = 4096;

interface Metadata {
  t?: unknown;
  r?: unknown;
  p?: unknown;
  h?: unknown;
}

export class SourcePositions {
  private readonly positions = new Map<string, number>();
  /** Metadata from before positions: any run met is at the committed offset. */
  private legacy = false;
  private committed: number | undefined;
  /**
   * The largest event time this partition ever announced, by any owner: -Infinity for none,
   * Infinity when unknown (metadata not ours), so that the combiner folds nothing.
   */
  announced = -Infinity;
  /** How far any run read the partition: a record before it was seen (and dead-lettered) once. */
  private readTo = 0;

  /** What the committed offset carried, and the offset (`undefined`: nothing committed). */
  adopt(metadata: string | undefined, committed: number | undefined): void {
    this.positions.clear();
    this.committed = committed;
    this.legacy = false;
    this.announced = -Infinity;
    this.readTo = committed ?? 0;
    if (metadata === undefined || metadata === '') return;
    let parsed: Metadata;
    try {
      parsed = JSON.parse(metadata) as Metadata;
    } catch {
      // Not ours: no bound on what was announced is known, and nothing of the runs.
      this.announced = Infinity;
      return;
    }
    if (typeof parsed.t === 'number') this.announced = parsed.t;
    else if (parsed.t !== undefined) this.announced = Infinity;
    if (typeof parsed.h === 'number') this.readTo = Math.max(this.readTo, parsed.h);
    if (!Array.isArray(parsed.r)) {
      this.legacy = committed !== undefined;
      return;
    }
    const own = (parsed.p ?? {}) as Record<string, unknown>;
    for (const run of parsed.r) {
      if (typeof run !== 'string') continue;
      const position = own[run];
      this.positions.set(run, typeof position === 'number' ? position : (committed ?? 0));
    }
  }

  /** Where `run` reads from next: its own position, or for a run new here, `start()`. */
  positionOf(run: string, start: () => number): number {
    const known = this.positions.get(run);
    if (known !== undefined) return known;
    const position = this.legacy && this.committed !== undefined ? this.committed : start();
    this.positions.set(run, position);
    return position;
  }

  /** `run` has handled every record before `next` it wanted. */
  advance(run: string, next: number): void {
    if (next > (this.positions.get(run) ?? -Infinity)) this.positions.set(run, next);
  }

  /** The partition has been read up to `next`. */
  read(next: number): void {
    if (next > this.readTo) this.readTo = next;
  }

  /** Whether no run has read the record at `offset` before. */
  firstRead(offset: number): boolean {
    return offset >= this.readTo;
  }

  /**
   * Ends the reading of metadata from before positions: the runs of `known` (every pipeline
   * the replica knows, running or not) that were not placed yet are at the committed offset, as
   * they were then; a run that comes later starts where its definition says.
   */
  settleLegacy(known: Iterable<string>): void {
    if (!this.legacy) return;
    this.legacy = false;
    if (this.committed === undefined) return;
    for (const run of known) if (!this.positions.has(run)) this.positions.set(run, this.committed);
  }

  /** Forgets the runs not in `runs` (their pipelines are gone, or replayed as a new run). */
  retain(runs: ReadonlySet<string>): void {
    for (const run of this.positions.keys()) if (!runs.has(run)) this.positions.delete(run);
  }

  /**
   * The smallest position of `runs` (every run known here by default; `undefined`: none). A run
   * that reads nothing here now (held, parked) keeps its position but must not hold the others
   * back: the task would move back to it again and again.
   */
  smallest(runs?: Iterable<string>): number | undefined {
    let smallest: number | undefined;
    for (const run of runs ?? this.positions.keys()) {
      const position = this.positions.get(run);
      if (position !== undefined && (smallest === undefined || position < smallest))
        smallest = position;
    }
    return smallest;
  }

  /**
   * The metadata of a commit at `offset` (the runs at or before it are at it). The broker keeps
   * at most `offset.metadata.max.bytes` (4096 by default): some 350 pipelines on one topic.
   */
  encode(offset: number): string {
    // Ahead of the offset, or behind it for a held pipeline.
    const own: Record<string, number> = {};
    for (const [run, position] of this.positions) if (position !== offset) own[run] = position;
    const metadata = JSON.stringify({
      // null: unknown (Infinity), which must stay unknown for the next owner too.
      ...(this.announced === -Infinity
        ? {}
        : { t: Number.isFinite(this.announced) ? this.announced : null }),
      r: [...this.positions.keys()],
      ...(Object.keys(own).length > 0 ? { p: own } : {}),
      ...(this.readTo > offset ? { h: this.readTo } : {}),
    });
    if (metadata.length > MAX_METADATA)
      throw new Error(
        `the positions of ${this.positions.size} pipelines on one source partition take ${metadata.length} bytes, more than a broker keeps with an offset (${MAX_METADATA}); give some of them a processor group of their own`,
      );
    return metadata;
  }
}
