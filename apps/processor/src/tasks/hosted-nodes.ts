// The stateful nodes of one pipeline as one repartition partition holds them: each node's stage
// and its watermark over its own upstream source partitions. State keys carry the node's tag
// (`<tag>|<key>`) when the pipeline has several stateful nodes, so they share one changelog.
import { parsedStateValue } from '@sluice/operators';
import type { StateEntry, StatefulStage } from '@sluice/operators';

import type { PlacedNode } from '../pipelines/active-pipeline';
import { UpstreamWatermarks } from '../watermarks/upstream-watermarks';
import { earlier } from './reread-metadata';

export interface HostedNode {
  readonly placed: PlacedNode;
  readonly stage: StatefulStage;
  readonly watermarks: UpstreamWatermarks;
  /** The event time last given to the stage. */
  watermarkInput: number;
}

export class HostedNodes {
  private nodes: HostedNode[] = [];
  /** By tag; the untagged only node under ''. */
  private byTag = new Map<string, HostedNode>();

  /** A fresh stage and watermark for each of `placed`. */
  reset(placed: readonly PlacedNode[], createStage: (placed: PlacedNode) => StatefulStage): void {
    const now = Date.now();
    this.nodes = placed.map((node) => ({
      placed: node,
      stage: createStage(node),
      watermarks: new UpstreamWatermarks({
        upstreams: node.upstreams,
        idleTimeoutMs: node.node.spec.idleTimeoutMs,
        now,
      }),
      watermarkInput: -Infinity,
    }));
    this.byTag = new Map(this.nodes.map((node) => [node.placed.tag ?? '', node]));
  }

  get isEmpty(): boolean {
    return this.nodes.length === 0;
  }

  /** The node a repartition record names by its tag (`undefined`: untagged). */
  get(tag: string | undefined): HostedNode | undefined {
    return this.byTag.get(tag ?? '');
  }

  /** The state entries held. */
  size(): number {
    return this.nodes.reduce((size, node) => size + node.stage.size(), 0);
  }

  /**
   * A restored batch of state entries, each to the stage of the node its key names, its value
   * parsed unless the stage keeps that key's JSON text (`restoresJsonText`).
   */
  restore(entries: StateEntry[]): void {
    const only = this.byTag.get('');
    if (only) {
      // The entries are the restore's own: parsed in place, no copy of a large batch.
      for (const entry of entries) entry.value = valueFor(only.stage, entry.key, entry.value);
      only.stage.restore(entries);
      return;
    }
    const byNode = new Map<HostedNode, StateEntry[]>();
    for (const entry of entries) {
      const bar = entry.key.indexOf('|');
      const node = bar < 0 ? undefined : this.byTag.get(entry.key.slice(0, bar));
      if (!node) continue; // a node the pipeline no longer has
      const list = byNode.get(node) ?? [];
      const key = entry.key.slice(bar + 1);
      list.push({ key, value: valueFor(node.stage, key, entry.value) });
      byNode.set(node, list);
    }
    for (const [node, list] of byNode) node.stage.restore(list);
  }

  /** An upstream's event time, as the changelog or an earlier epoch knew it. */
  restoreUpstream(upstream: string, time: number | undefined): void {
    for (const node of this.nodes) node.watermarks.restore(upstream, time);
  }

  /** After a restore: each stage already holds its watermark; only the input catches up. */
  settle(now: number): void {
    for (const node of this.nodes) node.watermarkInput = node.watermarks.minimum(now);
  }

  /** An upstream announced `time`: every node it feeds may move its watermark. */
  announce(upstream: string, time: number, now: number): void {
    for (const node of this.nodes)
      if (node.watermarks.announce(upstream, time, now)) this.advance(node, now);
  }

  /** The wall clock: an upstream may have gone idle, and a stage may flush. */
  tick(now: number): void {
    for (const node of this.nodes) {
      this.advance(node, now);
      node.stage.onWallClock(now);
    }
  }

  /** Moves each node's watermark to what its upstreams allow now. */
  advanceAll(now: number): void {
    for (const node of this.nodes) this.advance(node, now);
  }

  /** Every state change since the last drain, under the changelog's keys. */
  drainChanges(): StateEntry[] {
    const entries: StateEntry[] = [];
    for (const node of this.nodes) {
      const prefix = node.placed.keyPrefix;
      for (const entry of node.stage.drainChanges())
        entries.push(prefix ? { key: prefix + entry.key, value: entry.value } : entry);
    }
    return entries;
  }

  /**
   * The offset of the oldest input a stage holds outside the changelog (`undefined`: none):
   * where a new owner must read the repartition partition again from.
   */
  replayFrom(): string | undefined {
    let oldest: string | undefined;
    for (const node of this.nodes) oldest = earlier(oldest, node.stage.replayFrom?.());
    return oldest;
  }

  /** The changelog keys of everything held (what a new epoch tombstones). */
  keys(): string[] {
    return this.nodes.flatMap((node) =>
      (node.stage.stateKeys?.() ?? node.stage.snapshot().map((entry) => entry.key)).map(
        (key) => node.placed.keyPrefix + key,
      ),
    );
  }

  private advance(node: HostedNode, now: number): void {
    const minimum = node.watermarks.minimum(now);
    if (minimum > node.watermarkInput) {
      node.watermarkInput = minimum;
      node.stage.advanceTo(minimum);
    }
  }
}

/** A restored value as the stage takes it under its own `key`: parsed, or kept as text. */
function valueFor(stage: StatefulStage, key: string, value: unknown): unknown {
  return stage.restoresJsonText?.(key) ? value : parsedStateValue(value);
}
