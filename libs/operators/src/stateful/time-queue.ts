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
  /** Items out of order; `seq` orders those of equal times as pushed. */
  private readonly heap: Array<{ time: number; seq: number; item: T }> = [];
  private seq = 0;

  get size(): number {
    return this.runTimes.length - this.head + this.heap.length;
  }

  push(time: number, item: T): void {
    const seq = this.seq++;
    const end = this.runTimes.length;
    if (end === this.head || time >= this.runTimes[end - 1]!) {
      this.runTimes.push(time);
      this.runItems.push(item);
    } else this.heapPush({ time, seq, item });
  }

  /** The smallest time, or Infinity when empty. */
  peekTime(): number {
    const run = this.head < this.runTimes.length ? this.runTimes[this.head]! : Infinity;
    return this.heap.length > 0 ? Math.min(run, this.heap[0]!.time) : run;
  }

  pop(): T | undefined {
    const head = this.head;
    const inRun = head < this.runTimes.length;
    // Of equal times the run's comes first: a heap item is earlier than the run's last item
    // when pushed, so every run item of its time was pushed before it (and the run cannot
    // empty while the heap holds anything).
    if (this.heap.length > 0 && (!inRun || this.heap[0]!.time < this.runTimes[head]!))
      return this.heapPop();
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
    this.heap.length = 0;
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

  private heapPush(entry: { time: number; seq: number; item: T }): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      swap(heap, i, parent);
      i = parent;
    }
  }

  private heapPop(): T {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
        if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
        if (smallest === i) break;
        swap(heap, i, smallest);
        i = smallest;
      }
    }
    return top.item;
  }
}

const before = (a: { time: number; seq: number }, b: { time: number; seq: number }) =>
  a.time < b.time || (a.time === b.time && a.seq < b.seq);

function swap<E>(items: E[], a: number, b: number): void {
  const item = items[a]!;
  items[a] = items[b]!;
  items[b] = item;
}
