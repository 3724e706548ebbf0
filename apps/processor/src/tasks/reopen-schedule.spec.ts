import { MIGRATED_PAUSE_MS, ReopenSchedule } from './reopen-schedule';

describe('ReopenSchedule', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('backs a failing partition off longer with each failure in a row, from 0.25 s', () => {
    const schedule = new ReopenSchedule();
    const pauses = [1, 2, 3, 4].map(
      () => schedule.schedule('t/0', 'retriable', () => undefined).retryInMs,
    );
    expect(pauses).toEqual([250, 500, 1000, 2000]);
    schedule.succeeded('t/0');
    expect(schedule.schedule('t/0', 'fatal', () => undefined)).toEqual({
      attempt: 1,
      retryInMs: 250,
    });
  });

  it('reopens a fenced task after a fixed pause, whatever failed before', () => {
    const schedule = new ReopenSchedule();
    for (let i = 0; i < 5; i++) schedule.schedule('t/0', 'retriable', () => undefined);
    expect(schedule.schedule('t/0', 'task-migrated', () => undefined).retryInMs).toBe(
      MIGRATED_PAUSE_MS,
    );
  });

  it('runs only the latest reopening, once, and none for a partition forgotten', () => {
    const schedule = new ReopenSchedule();
    const opened: string[] = [];
    schedule.schedule('t/0', 'retriable', () => opened.push('first'));
    schedule.schedule('t/0', 'retriable', () => opened.push('second'));
    schedule.schedule('t/1', 'retriable', () => opened.push('t/1'));
    schedule.forget('t/1');
    expect(schedule.has('t/0')).toBe(true);
    jest.advanceTimersByTime(60_000);
    expect(opened).toEqual(['second']);
    expect(schedule.has('t/0')).toBe(false);
    expect([...schedule.keys()]).toEqual([]);
  });
});
