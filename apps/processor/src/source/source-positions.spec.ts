import fc from 'fast-check';

import { SourcePositions } from './source-positions';

const start = (offset: number) => () => offset;

describe('a source partition’s pipeline positions', () => {
  it('starts a run it has never seen where its definition says, and remembers it', () => {
    const positions = new SourcePositions();
    positions.adopt(undefined, undefined);
    expect(positions.positionOf('a', start(40))).toBe(40);
    expect(positions.positionOf('a', start(0))).toBe(40);
    expect(positions.positionOf('b', start(7))).toBe(7);
    expect(positions.smallest()).toBe(7);
  });

  it('round-trips through the commit metadata: a run at the offset, one ahead, one new', () => {
    const before = new SourcePositions();
    before.adopt(undefined, undefined);
    before.positionOf('at', start(10));
    before.positionOf('ahead', start(25));
    before.announced = 1_764_547_200_000;
    before.read(10);
    const metadata = before.encode(10);
    expect(JSON.parse(metadata)).toEqual({
      t: 1_764_547_200_000,
      r: ['at', 'ahead'],
      p: { ahead: 25 },
    });
    const after = new SourcePositions();
    after.adopt(metadata, 10);
    expect(after.positionOf('at', start(0))).toBe(10);
    expect(after.positionOf('ahead', start(0))).toBe(25);
    expect(after.positionOf('new', start(3))).toBe(3);
    expect(after.announced).toBe(1_764_547_200_000);
  });

  it('reads metadata from before positions as every pipeline at the committed offset', () => {
    const positions = new SourcePositions();
    positions.adopt(JSON.stringify({ t: 5 }), 120);
    expect(positions.positionOf('any', start(0))).toBe(120);
    expect(positions.announced).toBe(5);
  });

  it('places the pipelines known at the upgrade at the committed offset, and later ones where they start', () => {
    const positions = new SourcePositions();
    positions.adopt(JSON.stringify({ t: 5 }), 120);
    expect(positions.positionOf('running', start(0))).toBe(120);
    // `parked` existed before the upgrade but does not run here now; `created` comes later.
    positions.settleLegacy(['running', 'parked']);
    expect(positions.positionOf('parked', start(0))).toBe(120);
    expect(positions.positionOf('created', start(300))).toBe(300);
    expect(positions.positionOf('replayed', start(0))).toBe(0);
    // Settled once: a second call changes nothing.
    positions.settleLegacy(['another']);
    expect(positions.positionOf('another', start(7))).toBe(7);
  });

  it('keeps an unknown announced time unknown across owners (nothing folded)', () => {
    const positions = new SourcePositions();
    positions.adopt('not json', 3);
    expect(positions.announced).toBe(Infinity);
    positions.positionOf('a', start(3));
    const next = new SourcePositions();
    next.adopt(positions.encode(3), 3);
    expect(next.announced).toBe(Infinity);
    next.adopt(undefined, undefined);
    expect(next.announced).toBe(-Infinity);
  });

  it('forgets runs whose pipelines are gone, and dead-letters a record read again only once', () => {
    const positions = new SourcePositions();
    positions.adopt(undefined, undefined);
    positions.positionOf('old', start(50));
    positions.positionOf('new', start(20));
    positions.retain(new Set(['new']));
    expect(positions.smallest()).toBe(20);
    positions.read(50);
    expect(positions.firstRead(30)).toBe(false);
    expect(positions.firstRead(50)).toBe(true);
    // How far the partition was read survives a commit behind it (a pipeline going back).
    const next = new SourcePositions();
    next.adopt(positions.encode(20), 20);
    expect(next.firstRead(49)).toBe(false);
    expect(next.firstRead(50)).toBe(true);
  });

  it('refuses metadata larger than a broker keeps, naming the way out', () => {
    const positions = new SourcePositions();
    positions.adopt(undefined, undefined);
    for (let i = 0; i < 500; i++) positions.positionOf(`run-${i}`, start(i));
    expect(() => positions.encode(0)).toThrow(/processor group of their own/);
  });

  it('restores every position at or after the committed offset (property)', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.nat({ max: 1_000_000 }), {
          minKeys: 1,
          maxKeys: 40,
        }),
        (starts) => {
          const before = new SourcePositions();
          before.adopt(undefined, undefined);
          for (const [run, offset] of Object.entries(starts)) before.positionOf(run, start(offset));
          const committed = before.smallest()!;
          const after = new SourcePositions();
          after.adopt(before.encode(committed), committed);
          for (const [run, offset] of Object.entries(starts))
            expect(after.positionOf(run, start(-1))).toBe(offset);
        },
      ),
    );
  });
});
