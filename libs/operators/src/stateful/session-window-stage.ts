import { copyAcc } from '../aggregate/aggregators';
import type { Accumulator } from '../aggregate/aggregators';
import { MinHeap } from './min-heap';
import type { StageInput, StateEntry, StatefulStage } from './stage';
import { WATERMARK_KEY, groupStateKey } from './stage';
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

interface GroupSessions {
  group: string | null;
  route: string | undefined;
  /** Open sessions, disjoint and sorted by start. */
  sessions: Session[];
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
  private readonly groups = new Map<string, GroupSessions>();
  /** Session ends to fire; entries for sessions merged away are skipped when popped. */
  private readonly ends = new MinHeap<{ stateKey: string; start: number; end: number }>();
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
    const stateKey = groupStateKey(input.route, input.group);
    let entry = this.groups.get(stateKey);
    if (entry === undefined) {
      entry = { group: input.group, route: input.route, sessions: [] };
      this.groups.set(stateKey, entry);
    }
    const merged: Session = { start, end, acc: this.aggregator.create() };
    this.aggregator.add(merged.acc, input.value);
    const kept: Session[] = [];
    for (const session of entry.sessions) {
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
    entry.sessions = kept;
    this.sessionCount += 1;
    this.ends.push(merged.end, { stateKey, start: merged.start, end: merged.end });
    if (this.tracking) this.touch(groupKey(stateKey));
    if (this.emitUpdates)
      this.emitWindow(entry.group, entry.route, merged.start, merged.end, merged.acc, false);
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
    for (const entry of this.groups.values()) {
      for (const session of entry.sessions) latestEnd = Math.max(latestEnd, session.end);
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
      const due = this.ends.pop()!;
      const entry = this.groups.get(due.stateKey);
      const index =
        entry?.sessions.findIndex((s) => s.start === due.start && s.end === due.end) ?? -1;
      if (entry === undefined || index < 0) continue;
      const [session] = entry.sessions.splice(index, 1);
      this.sessionCount -= 1;
      if (entry.sessions.length === 0) this.groups.delete(due.stateKey);
      this.emitWindow(entry.group, entry.route, session!.start, session!.end, session!.acc, true);
      if (this.tracking) this.touch(groupKey(due.stateKey));
    }
  }

  snapshot(): StateEntry[] {
    const entries: StateEntry[] = [];
    if (Number.isFinite(this.wm))
      entries.push({ key: WATERMARK_KEY, value: this.snapshotKey(WATERMARK_KEY) });
    for (const stateKey of this.groups.keys()) {
      const key = groupKey(stateKey);
      entries.push({ key, value: this.snapshotKey(key) });
    }
    return entries;
  }

  snapshotKey(key: string): unknown {
    if (key === WATERMARK_KEY)
      return Number.isFinite(this.wm) ? { watermark: watermarkToJson(this.wm) } : undefined;
    const entry = this.groups.get(parseGroupKey(key));
    if (entry === undefined) return undefined;
    const json: GroupSessionsJson = {
      group: entry.group,
      sessions: entry.sessions.map((s) => ({ start: s.start, end: s.end, acc: copyAcc(s.acc) })),
    };
    if (entry.route !== undefined) json.route = entry.route;
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
      const stateKey = parseGroupKey(key);
      const previous = this.groups.get(stateKey);
      if (previous !== undefined) {
        this.sessionCount -= previous.sessions.length;
        this.groups.delete(stateKey);
      }
      if (value === null || value === undefined) continue;
      const json = value as GroupSessionsJson;
      const sessions = json.sessions.map((s) => ({
        start: s.start,
        end: s.end,
        acc: copyAcc(s.acc),
      }));
      this.groups.set(stateKey, { group: json.group, route: json.route, sessions });
      this.sessionCount += sessions.length;
      for (const s of sessions) this.ends.push(s.end, { stateKey, start: s.start, end: s.end });
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

function groupKey(stateKey: string): string {
  return `s${stateKey}`;
}

function parseGroupKey(key: string): string {
  if (key[0] !== 's') throw new Error(`not a session state key: ${key}`);
  return key.slice(1);
}
