import { copyAcc } from '../aggregate/aggregators';
import type { Accumulator } from '../aggregate/aggregators';
import { MinHeap } from './min-heap';
import type { StageInput, StateEntry, StatefulStage } from './stage';
import { GroupTable } from './group-table';
import { WATERMARK_KEY, groupStateKey, parseGroupStateKey } from './stage';
import { StageBase, watermarkFromJson, watermarkToJson } from './stage-base';
import type { StageOptions } from './stage-base';

export interface SessionWindowOptions extends StageOptions {
  gapMs: number;
  latenessMs: number;
  idleTimeoutMs?: number;
  emitUpdates: boolean;
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
 * fires when the watermark reaches its end. State is one entry per group with its open sessions.
 */
export class SessionWindowStage extends StageBase implements StatefulStage {
  private readonly gap: number;
  private readonly lateness: number;
  private readonly idleTimeout: number | undefined;
  private readonly emitUpdates: boolean;
  /** Open sessions per (route, group), disjoint and sorted by start. */
  private readonly groups = new GroupTable<Session[]>();
  /** Session ends to fire; entries for sessions merged away are skipped when popped. */
  private readonly ends = new MinHeap<{
    route: string | undefined;
    group: string | null;
    start: number;
    end: number;
  }>();
  private wm = -Infinity;
  private activeSinceTick = false;
  private lastActivity: number | undefined;
  private sessionCount = 0;

  constructor(options: SessionWindowOptions) {
    super(options);
    this.gap = options.gapMs;
    this.lateness = options.latenessMs;
    this.idleTimeout = options.idleTimeoutMs;
    this.emitUpdates = options.emitUpdates;
  }

  add(input: StageInput): void {
    this.activeSinceTick = true;
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
    this.ends.push(merged.end, { route, group, start: merged.start, end: merged.end });
    if (this.tracking) this.touch(sessionsKey(groupStateKey(route, group)));
    if (this.emitUpdates)
      this.emitWindow(group, route, merged.start, merged.end, merged.acc, false);
  }

  advanceTo(eventTime: number): void {
    const watermark = eventTime - this.lateness;
    if (watermark <= this.wm) return;
    this.wm = watermark;
    this.touch(WATERMARK_KEY);
    this.activeSinceTick = true;
    this.fireUntil(watermark);
  }

  onWallClock(now: number): void {
    if (this.activeSinceTick || this.lastActivity === undefined) {
      this.activeSinceTick = false;
      this.lastActivity = now;
      return;
    }
    if (
      this.idleTimeout !== undefined &&
      this.sessionCount > 0 &&
      now - this.lastActivity >= this.idleTimeout
    ) {
      this.flush();
      this.lastActivity = now;
    }
  }

  /** Fires every open session and moves the watermark to the latest end among them. */
  flush(): void {
    let latestEnd = this.wm;
    for (const [, , sessions] of this.groups.entries()) {
      for (const session of sessions) latestEnd = Math.max(latestEnd, session.end);
    }
    if (latestEnd > this.wm) {
      this.wm = latestEnd;
      this.touch(WATERMARK_KEY);
    }
    this.fireUntil(latestEnd);
  }

  watermark(): number {
    return this.wm;
  }

  size(): number {
    return this.sessionCount;
  }

  private fireUntil(watermark: number): void {
    while (this.ends.peekPriority() <= watermark) {
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
    const entries: StateEntry[] = [];
    if (Number.isFinite(this.wm))
      entries.push({ key: WATERMARK_KEY, value: this.snapshotKey(WATERMARK_KEY) });
    for (const [route, group] of this.groups.entries()) {
      const key = sessionsKey(groupStateKey(route, group));
      entries.push({ key, value: this.snapshotKey(key) });
    }
    return entries;
  }

  snapshotKey(key: string): unknown {
    if (key === WATERMARK_KEY)
      return Number.isFinite(this.wm) ? { watermark: watermarkToJson(this.wm) } : undefined;
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
        this.wm =
          value === null
            ? -Infinity
            : watermarkFromJson((value as { watermark: unknown }).watermark);
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
      for (const s of sessions) this.ends.push(s.end, { route, group, start: s.start, end: s.end });
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
