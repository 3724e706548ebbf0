import { copyAcc } from '../aggregate/aggregators';
import type { Accumulator } from '../aggregate/aggregators';
import type { StageInput, StateEntry, StatefulStage } from './stage';
import { groupStateKey, resultKey } from './stage';
import { StageBase } from './stage-base';

interface GroupState {
  group: string | null;
  route: string | undefined;
  acc: Accumulator;
}

interface GroupStateJson {
  group: string | null;
  route?: string;
  acc: Accumulator;
}

/**
 * A running reduce per group (no window): every accepted event updates its group and publishes
 * the group's latest value (DESIGN §3), so the output topic can be compacted. Time plays no part.
 */
export class ReduceStage extends StageBase implements StatefulStage {
  private readonly groups = new Map<string, GroupState>();

  add(input: StageInput): void {
    const stateKey = groupStateKey(input.route, input.group);
    let state = this.groups.get(stateKey);
    if (state === undefined) {
      state = { group: input.group, route: input.route, acc: this.aggregator.create() };
      this.groups.set(stateKey, state);
    }
    this.aggregator.add(state.acc, input.value);
    if (this.tracking) this.touch(reduceKey(stateKey));
    this.counters.emitted += 1;
    this.emitter.result(resultKey(this.pipelineId, state.route, state.group), {
      pipeline_id: this.pipelineId,
      group: state.group,
      function: this.fn,
      value: this.aggregator.result(state.acc),
      ...(state.route === undefined ? {} : { route: state.route }),
    });
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
    return [...this.groups.keys()].map((stateKey) => {
      const key = reduceKey(stateKey);
      return { key, value: this.snapshotKey(key) };
    });
  }

  snapshotKey(key: string): unknown {
    const state = this.groups.get(parseReduceKey(key));
    if (state === undefined) return undefined;
    const json: GroupStateJson = { group: state.group, acc: copyAcc(state.acc) };
    if (state.route !== undefined) json.route = state.route;
    return json;
  }

  restore(entries: Iterable<StateEntry>): void {
    for (const { key, value } of entries) {
      const stateKey = parseReduceKey(key);
      if (value === null || value === undefined) {
        this.groups.delete(stateKey);
        continue;
      }
      const json = value as GroupStateJson;
      this.groups.set(stateKey, { group: json.group, route: json.route, acc: copyAcc(json.acc) });
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
