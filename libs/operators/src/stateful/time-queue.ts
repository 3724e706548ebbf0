import { MinHeap } from './min-heap';

/**
 * Items ordered by time, then by the order they came in: a min-heap's order at a queue's cost
 * for what comes in time order. A stream read in event-time order mostly does, so items that
 * come at or after the last one in order go to a run taken from its head in O(1); only those
 * out of order go to a binary heap. (An interval join expires its buffered records at their
 * times plus the interval, so nearly in the order they came.)
 */
export class TimeQueue<T> {
  // The in-order run, as parallel arrays read from `head`: no object per item.
  private readonly runTimes: number[] = [];
  private readonly runItems: Array<T | undefined> = [];
  private head = 0;
  /** Items out of order (MinHeap orders those of equal times as pushed). */
  private readonly heap = new MinHeap<T>();

  get size(): number {
    return this.runTimes.length - this.head + this.heap.size;
  }

  push(time: number, item: T): void {
    const end = this.runTimes.length;
    if (end === this.head || time >= this.runTimes[end - 1]!) {
      this.runTimes.push(time);
      this.runItems.push(item);
    } else this.heap.push(time, item);
  }

  /** The smallest time, or Infinity when empty. */
  peekTime(): number {
    const run = this.head < this.runTimes.length ? this.runTimes[this.head]! : Infinity;
    return Math.min(run, this.heap.peekPriority());
  }

  pop(): T | undefined {
    const head = this.head;
    const inRun = head < this.runTimes.length;
    // Of equal times the run's comes first: a heap item is earlier than the run's last item
    // when pushed, so every run item of its time was pushed before it (and the run cannot
    // empty while the heap holds anything).
    if (this.heap.size > 0 && (!inRun || this.heap.peekPriority() < this.runTimes[head]!))
      return this.heap.pop();
    if (!inRun) return undefined;
    const item = this.runItems[head];
    this.runItems[head] = undefined;
    this.head = head + 1;
    this.compact();
    return item;
  }

  clear(): void {
    this.runTimes.length = this.runItems.length = 0;
    this.head = 0;
    this.heap.clear();
  }

  /** Drops the run's taken head once it is most of the arrays (amortized O(1) a pop). */
  private compact(): void {
    const head = this.head;
    const length = this.runTimes.length;
    if (head === length) {
      this.runTimes.length = this.runItems.length = 0;
      this.head = 0;
    } else if (head >= 1024 && head * 2 >= length) {
      this.runTimes.splice(0, head);
      this.runItems.splice(0, head);
      this.head = 0;
    }
  }
}
