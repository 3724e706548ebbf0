import { copyAcc } from '../aggregate/aggregators';
import type { ReduceResult } from '@sluice/contracts';

import type { Accumulator } from '../aggregate/aggregators';
import type { PartialAggregate } from './combiner';
import type { StageInput, StateEntry, StatefulStage } from './stage';
import { GroupTable } from './group-table';
import { groupStateKey, parseGroupStateKey, resultKey } from './stage';
import { StageBase } from './stage-base';

interface GroupStateJson {
  group: string | null;
  route?: string;
  acc: Accumulator;
}

/**
 * A running reduce per group (no window): every accepted event updates its group and publishes
 * the group's latest value (docs/design.md §3), so the output topic can be compacted. Time plays no part.
 */
export class ReduceStage extends StageBase implements StatefulStage {
  private readonly groups = new GroupTable<Accumulator>();

  add(input: StageInput): void {
    const acc = this.accFor(input.route, input.group);
    this.aggregator.add(acc, input.value);
    this.emitGroup(input.route, input.group, acc);
  }

  addPartial(partial: PartialAggregate): void {
    const acc = this.accFor(partial.route, partial.group);
    this.aggregator.merge(acc, partial.acc);
    this.emitGroup(partial.route, partial.group, acc);
  }

  private accFor(route: string | undefined, group: string | null): Accumulator {
    let acc = this.groups.get(route, group);
    if (acc === undefined) {
      acc = this.aggregator.create();
      this.groups.set(route, group, acc);
    }
    return acc;
  }

  private emitGroup(route: string | undefined, group: string | null, acc: Accumulator): void {
    if (this.tracking) this.touch(reduceKey(groupStateKey(route, group)));
    this.counters.emitted += 1;
    const result: ReduceResult = {
      pipeline_id: this.pipelineId,
      group,
      function: this.fn,
      value: this.aggregator.result(acc),
    };
    if (route !== undefined) result.route = route;
    this.emitter.result(resultKey(this.pipelineId, route, group), result);
  }

  advanceTo(): void {}

  onWallClock(): void {}

  flush(): void {}

  watermark(): number {
    return -Infinity;
  }

  size(): number {
    return this.groups.size;
  }

  snapshot(): StateEntry[] {
    return [...this.groups.entries()].map(([route, group]) => {
      const key = reduceKey(groupStateKey(route, group));
      return { key, value: this.snapshotKey(key) };
    });
  }

  snapshotKey(key: string): unknown {
    const { route, group } = parseGroupStateKey(parseReduceKey(key));
    const acc = this.groups.get(route, group);
    if (acc === undefined) return undefined;
    const json: GroupStateJson = { group, acc: copyAcc(acc) };
    if (route !== undefined) json.route = route;
    return json;
  }

  restore(entries: Iterable<StateEntry>): void {
    for (const { key, value } of entries) {
      const { route, group } = parseGroupStateKey(parseReduceKey(key));
      if (value === null || value === undefined) this.groups.delete(route, group);
      else this.groups.set(route, group, copyAcc((value as GroupStateJson).acc));
    }
  }

  clear(): void {
    if (this.tracking) for (const { key } of this.snapshot()) this.touch(key);
    this.groups.clear();
  }
}

function reduceKey(stateKey: string): string {
  return `r${stateKey}`;
}

function parseReduceKey(key: string): string {
  if (key[0] !== 'r') throw new Error(`not a reduce state key: ${key}`);
  return key.slice(1);
}
