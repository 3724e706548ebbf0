import { copyAcc } from '../aggregate/aggregators';
import type { Accumulator } from '../aggregate/aggregators';
import { MinHeap } from './min-heap';
import type { StageInput, StateEntry, StatefulStage } from './stage';
import { GroupTable } from './group-table';
import { WATERMARK_KEY, groupStateKey, parseGroupStateKey } from './stage';
import { WindowStageBase } from './window-stage-base';
import type { WindowStageOptions } from './window-stage-base';

export interface SessionWindowOptions extends WindowStageOptions {
  gapMs: number;
}

interface Session {
  start: number;
  end: number;
  acc: Accumulator;
}

interface GroupSessionsJson {
  group: string | null;
  route?: string;
  sessions: Session[];
}

/**
 * Session windows per group: each event opens `[t, t + gap)`, and sessions that overlap or touch
 * merge (as in Flink and Kafka Streams, events exactly one gap apart share a session). A session
 * fires once the watermark has passed its end. State is one entry per group with its open sessions.
 */
export class SessionWindowStage extends WindowStageBase implements StatefulStage {
  private readonly gap: number;
  /** Open sessions per (route, group), disjoint and sorted by start. */
  private readonly groups = new GroupTable<Session[]>();
  /** Session ends to fire; entries for sessions merged away are skipped when popped. */
  private readonly ends = new MinHeap<{
    route: string | undefined;
    group: string | null;
    start: number;
    end: number;
  }>();
  private sessionCount = 0;

  constructor(options: SessionWindowOptions) {
    super(options);
    this.gap = options.gapMs;
  }

  addPartial(): void {
    // Sessions merge by the gaps between single events, which a partial no longer has.
    throw new Error('session windows take events one by one, not partial aggregates');
  }

  add(input: StageInput): void {
    this.markActive();
    const start = input.time;
    const end = start + this.gap;
    if (end <= this.wm) {
      this.emitLate(input, this.wm);
      return;
    }
    const { route, group } = input;
    const sessions = this.groups.get(route, group) ?? [];
    const merged: Session = { start, end, acc: this.aggregator.create() };
    this.aggregator.add(merged.acc, input.value);
    const kept: Session[] = [];
    for (const session of sessions) {
      if (session.start <= merged.end && session.end >= merged.start) {
        merged.start = Math.min(merged.start, session.start);
        merged.end = Math.max(merged.end, session.end);
        this.aggregator.merge(merged.acc, session.acc);
        this.sessionCount -= 1;
      } else {
        kept.push(session);
      }
    }
    const at = kept.findIndex((session) => session.start > merged.start);
    kept.splice(at < 0 ? kept.length : at, 0, merged);
    this.groups.set(route, group, kept);
    this.sessionCount += 1;
    // Sessions ending together fire in group order, so a run restored from a snapshot emits
    // them in the same order as an uninterrupted one.
    this.ends.push(
      merged.end,
      { route, group, start: merged.start, end: merged.end },
      groupStateKey(route, group),
    );
    if (this.tracking) this.touch(sessionsKey(groupStateKey(route, group)));
    if (this.emitUpdates)
      this.emitWindow(group, route, merged.start, merged.end, merged.acc, false);
  }

  size(): number {
    return this.sessionCount;
  }

  protected latestOpenEnd(): number {
    let latest = -Infinity;
    for (const [, , sessions] of this.groups.entries()) {
      for (const session of sessions) latest = Math.max(latest, session.end);
    }
    return latest;
  }

  protected fireUntil(watermark: number): void {
    // Strictly past the end: an event exactly at a session's end still joins it (sessions that
    // touch merge), so the session may only fire once the watermark has gone beyond that point.
    while (this.ends.size > 0 && this.ends.peekPriority() < watermark) {
      const { route, group, start, end } = this.ends.pop()!;
      const sessions = this.groups.get(route, group);
      const index = sessions?.findIndex((s) => s.start === start && s.end === end) ?? -1;
      if (sessions === undefined || index < 0) continue;
      const [session] = sessions.splice(index, 1);
      this.sessionCount -= 1;
      if (sessions.length === 0) this.groups.delete(route, group);
      this.emitWindow(group, route, start, end, session!.acc, true);
      if (this.tracking) this.touch(sessionsKey(groupStateKey(route, group)));
    }
  }

  snapshot(): StateEntry[] {
    const entries = this.watermarkEntries();
    for (const [route, group] of this.groups.entries()) {
      const key = sessionsKey(groupStateKey(route, group));
      entries.push({ key, value: this.snapshotKey(key) });
    }
    return entries;
  }

  snapshotKey(key: string): unknown {
    if (key === WATERMARK_KEY) return this.watermarkValue();
    const { route, group } = parseGroupStateKey(parseSessionsKey(key));
    const sessions = this.groups.get(route, group);
    if (sessions === undefined) return undefined;
    const json: GroupSessionsJson = {
      group,
      sessions: sessions.map((s) => ({ start: s.start, end: s.end, acc: copyAcc(s.acc) })),
    };
    if (route !== undefined) json.route = route;
    return json;
  }

  restore(entries: Iterable<StateEntry>): void {
    for (const { key, value } of entries) {
      if (key === WATERMARK_KEY) {
        this.restoreWatermark(value);
        continue;
      }
      const { route, group } = parseGroupStateKey(parseSessionsKey(key));
      const previous = this.groups.get(route, group);
      if (previous !== undefined) {
        this.sessionCount -= previous.length;
        this.groups.delete(route, group);
      }
      if (value === null || value === undefined) continue;
      const sessions = (value as GroupSessionsJson).sessions.map((s) => ({
        start: s.start,
        end: s.end,
        acc: copyAcc(s.acc),
      }));
      this.groups.set(route, group, sessions);
      this.sessionCount += sessions.length;
      for (const s of sessions) {
        this.ends.push(
          s.end,
          { route, group, start: s.start, end: s.end },
          groupStateKey(route, group),
        );
      }
    }
  }

  /** Drops all state; with change tracking, the next drain holds a deletion for every key. */
  clear(): void {
    if (this.tracking) for (const { key } of this.snapshot()) this.touch(key);
    this.groups.clear();
    this.ends.clear();
    this.sessionCount = 0;
    this.wm = -Infinity;
  }
}

function sessionsKey(stateKey: string): string {
  return `s${stateKey}`;
}

function parseSessionsKey(key: string): string {
  if (key[0] !== 's') throw new Error(`not a session state key: ${key}`);
  return key.slice(1);
}
