// Map-side pre-aggregation (a combiner, as in MapReduce and Flink's local aggregation): where a
// record is consumed, inputs of the same (window, group) fold into one partial aggregate, and
// only the partials cross the repartition topic. The stateful stage merges them exactly (the
// accumulators are mergeable and sums are exact), so final results are those of the
// event-by-event run. What an operator must never combine is an event that could be late: a
// late event is reported with its payload, which a partial no longer has.
import type { Accumulator, Aggregator } from '../aggregate/aggregators';
import { GroupTable } from './group-table';
import type { StageInput } from './stage';

/** Some inputs of one (window, route, group), folded together. */
export interface PartialAggregate {
  /** Window start, epoch ms (windows); `null` for a reduce. */
  start: number | null;
  route: string | undefined;
  group: string | null;
  acc: Accumulator;
}

export interface Combiner {
  /**
   * Folds `input` in unless one of its windows could already have fired downstream, that is
   * unless every window covering it ends after `watermarkBound` (an upper bound of the
   * downstream watermark). Returns whether it was folded; if not, send the input as it is.
   */
  add(input: StageInput, watermarkBound: number): boolean;
  /** The partials folded since the last drain (then forgets them). */
  drain(): PartialAggregate[];
  /** Whether nothing was folded since the last drain. */
  readonly isEmpty: boolean;
}

export class HoppingCombiner implements Combiner {
  private readonly windows = new Map<number, GroupTable<PartialAggregate>>();

  constructor(
    private readonly aggregator: Aggregator,
    private readonly sizeMs: number,
    private readonly slideMs: number,
  ) {}

  add(input: StageInput, watermarkBound: number): boolean {
    const { time, route, group } = input;
    const size = this.sizeMs;
    const slide = this.slideMs;
    const latest = time - (time % slide);
    // The earliest window covering `time` is the first to fire.
    let earliest = latest;
    while (earliest - slide + size > time) earliest -= slide;
    if (earliest + size <= watermarkBound) return false;
    for (let start = latest; start + size > time; start -= slide) {
      let cells = this.windows.get(start);
      if (cells === undefined) {
        cells = new GroupTable();
        this.windows.set(start, cells);
      }
      let partial = cells.get(route, group);
      if (partial === undefined) {
        partial = { start, route, group, acc: this.aggregator.create() };
        cells.set(route, group, partial);
      }
      this.aggregator.add(partial.acc, input.value);
    }
    return true;
  }

  get isEmpty(): boolean {
    return this.windows.size === 0;
  }

  drain(): PartialAggregate[] {
    const partials: PartialAggregate[] = [];
    for (const cells of this.windows.values())
      for (const [, , partial] of cells.entries()) partials.push(partial);
    this.windows.clear();
    return partials;
  }
}

/** A reduce has no time: every input folds. */
export class ReduceCombiner implements Combiner {
  private cells = new GroupTable<PartialAggregate>();

  constructor(private readonly aggregator: Aggregator) {}

  add(input: StageInput): boolean {
    const { route, group } = input;
    let partial = this.cells.get(route, group);
    if (partial === undefined) {
      partial = { start: null, route, group, acc: this.aggregator.create() };
      this.cells.set(route, group, partial);
    }
    this.aggregator.add(partial.acc, input.value);
    return true;
  }

  get isEmpty(): boolean {
    return this.cells.size === 0;
  }

  drain(): PartialAggregate[] {
    const partials = [...this.cells.entries()].map(([, , partial]) => partial);
    this.cells = new GroupTable();
    return partials;
  }
}
