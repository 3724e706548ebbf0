import { UpstreamWatermarks } from './upstream-watermarks';

const upstreams = ['events/0', 'events/1', 'events/2'];

describe('UpstreamWatermarks', () => {
  it('is the minimum over every upstream, and -Infinity until each has announced', () => {
    const marks = new UpstreamWatermarks({ upstreams, idleTimeoutMs: undefined, now: 0 });
    marks.announce('events/0', 500, 1);
    marks.announce('events/1', 300, 1);
    expect(marks.minimum(2)).toBe(-Infinity);
    marks.announce('events/2', 400, 2);
    expect(marks.minimum(3)).toBe(300);
  });

  it('ignores announcements that do not move an upstream forward', () => {
    const marks = new UpstreamWatermarks({ upstreams, idleTimeoutMs: undefined, now: 0 });
    expect(marks.announce('events/0', 500, 1)).toBe(true);
    expect(marks.announce('events/0', 500, 2)).toBe(false);
    expect(marks.announce('events/0', 100, 3)).toBe(false);
    expect([...marks.entries()]).toEqual([['events/0', 500]]);
  });

  it('never leaves a silent upstream out without an idle timeout', () => {
    const marks = new UpstreamWatermarks({ upstreams, idleTimeoutMs: undefined, now: 0 });
    for (const upstream of upstreams) marks.announce(upstream, 100, 0);
    marks.announce('events/0', 900, 1);
    marks.announce('events/1', 900, 1);
    expect(marks.minimum(1_000_000)).toBe(100);
  });

  it('leaves an upstream out once it has been silent for the idle timeout', () => {
    const marks = new UpstreamWatermarks({ upstreams, idleTimeoutMs: 10_000, now: 0 });
    for (const upstream of upstreams) marks.announce(upstream, 100, 0);
    marks.announce('events/0', 900, 5_000);
    marks.announce('events/1', 800, 5_000);
    expect(marks.minimum(9_999)).toBe(100);
    expect(marks.minimum(10_000)).toBe(800); // events/2 silent since 0
    expect(marks.isIdle('events/2', 10_000)).toBe(true);
    expect(marks.minimum(15_000)).toBe(-Infinity); // all idle: the stage's idle flush decides
    expect(marks.allIdle(15_000)).toBe(true);
  });

  it('gives every upstream a fresh timeout when time resumes after all were idle', () => {
    const marks = new UpstreamWatermarks({ upstreams, idleTimeoutMs: 10_000, now: 0 });
    for (const upstream of upstreams) marks.announce(upstream, 100, 0);
    // All idle at 20 s; a burst reaches events/0 first.
    marks.announce('events/0', 5_000, 20_000);
    // The others are not left out at once, so the first alone does not fire their windows.
    expect(marks.minimum(20_001)).toBe(100);
    marks.announce('events/1', 4_000, 20_050);
    marks.announce('events/2', 4_500, 20_100);
    expect(marks.minimum(20_200)).toBe(4_000);
  });

  it('treats an upstream that never announced as idle from the start', () => {
    const marks = new UpstreamWatermarks({ upstreams, idleTimeoutMs: 1_000, now: 50 });
    marks.announce('events/0', 700, 60);
    marks.announce('events/1', 600, 60);
    expect(marks.minimum(1_049)).toBe(-Infinity);
    expect(marks.minimum(1_050)).toBe(600);
  });

  it('restores times read back from the changelog', () => {
    const marks = new UpstreamWatermarks({ upstreams, idleTimeoutMs: undefined, now: 0 });
    marks.restore('events/0', 10);
    marks.restore('events/1', 20);
    marks.restore('events/2', 30);
    marks.restore('events/2', undefined);
    expect([...marks.entries()]).toEqual([
      ['events/0', 10],
      ['events/1', 20],
    ]);
    expect(marks.minimum(0)).toBe(-Infinity);
  });
});
