/**
 * A binary min-heap ordered by a numeric priority, then by an optional tie-break string, then by
 * insertion order.
 */
export class MinHeap<T> {
  private readonly items: Array<{ priority: number; tie: string; seq: number; value: T }> = [];
  private seq = 0;

  get size(): number {
    return this.items.length;
  }

  push(priority: number, value: T, tie = ''): void {
    const items = this.items;
    items.push({ priority, tie, seq: this.seq++, value });
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  /** The smallest priority, or Infinity when empty. */
  peekPriority(): number {
    return this.items.length === 0 ? Infinity : this.items[0]!.priority;
  }

  pop(): T | undefined {
    const items = this.items;
    if (items.length === 0) return undefined;
    const top = items[0]!;
    const last = items.pop()!;
    if (items.length > 0) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < items.length && this.less(left, smallest)) smallest = left;
        if (right < items.length && this.less(right, smallest)) smallest = right;
        if (smallest === i) break;
        [items[i], items[smallest]] = [items[smallest]!, items[i]!];
        i = smallest;
      }
    }
    return top.value;
  }

  clear(): void {
    this.items.length = 0;
  }

  private less(a: number, b: number): boolean {
    const x = this.items[a]!;
    const y = this.items[b]!;
    if (x.priority !== y.priority) return x.priority < y.priority;
    if (x.tie !== y.tie) return x.tie < y.tie;
    return x.seq < y.seq;
  }
}
