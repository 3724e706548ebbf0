/**
 * Values by (route, group) without building a combined key per event: the common case (no
 * route) is one Map lookup on the group string itself, with no string allocation on the hot path.
 */
export class GroupTable<T> {
  private readonly unrouted = new Map<string | null, T>();
  private routed: Map<string, Map<string | null, T>> | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(route: string | undefined, group: string | null): T | undefined {
    if (route === undefined) return this.unrouted.get(group);
    return this.routed?.get(route)?.get(group);
  }

  set(route: string | undefined, group: string | null, value: T): void {
    const table = this.tableFor(route);
    if (!table.has(group)) this.count += 1;
    table.set(group, value);
  }

  delete(route: string | undefined, group: string | null): boolean {
    const table = route === undefined ? this.unrouted : this.routed?.get(route);
    if (table === undefined || !table.delete(group)) return false;
    this.count -= 1;
    if (route !== undefined && table.size === 0) this.routed!.delete(route);
    return true;
  }

  *entries(): IterableIterator<[string | undefined, string | null, T]> {
    for (const [group, value] of this.unrouted) yield [undefined, group, value];
    if (this.routed === undefined) return;
    for (const [route, table] of this.routed)
      for (const [group, value] of table) yield [route, group, value];
  }

  clear(): void {
    this.unrouted.clear();
    this.routed = undefined;
    this.count = 0;
  }

  private tableFor(route: string | undefined): Map<string | null, T> {
    if (route === undefined) return this.unrouted;
    this.routed ??= new Map();
    let table = this.routed.get(route);
    if (table === undefined) {
      table = new Map();
      this.routed.set(route, table);
    }
    return table;
  }
}
