// Field paths (DESIGN §2): `a.b.c` resolves inside `payload`; `$.a.b` against the whole event.
// Paths are compiled once into getters and setters specialised by depth, so the hot path does
// no string splitting. JSON `null` counts as missing, as it does for every operator.
import type { EventEnvelope } from '@sluice/contracts';

export type Getter = (envelope: EventEnvelope) => unknown;
export type Setter = (envelope: EventEnvelope, value: unknown) => void;

type Obj = Record<string, unknown>;

export interface ParsedPath {
  /** true: from the envelope root (`$.`); false: from `payload`. */
  fromRoot: boolean;
  segments: string[];
}

export function parsePath(path: string): ParsedPath {
  const fromRoot = path.startsWith('$.');
  return { fromRoot, segments: (fromRoot ? path.slice(2) : path).split('.') };
}

export function compileGetter(path: string): Getter {
  const { fromRoot, segments } = parsePath(path);
  const full = fromRoot ? segments : ['payload', ...segments];
  const [a, b, c, d] = full as [string, string, string?, string?];
  switch (full.length) {
    case 1:
      return (e) => (e as Obj)[a] ?? undefined;
    case 2:
      return (e) => child((e as Obj)[a], b);
    case 3:
      return (e) => child(child((e as Obj)[a], b), c!);
    case 4:
      return (e) => child(child(child((e as Obj)[a], b), c!), d!);
    default:
      return (e) => {
        let value: unknown = e;
        for (const segment of full) value = child(value, segment);
        return value;
      };
  }
}

function child(value: unknown, key: string): unknown {
  if (value === null || typeof value !== 'object') return undefined;
  return (value as Obj)[key] ?? undefined;
}

/**
 * A setter that never mutates objects it did not create: each object along the path is copied
 * before it is written (copy-on-write), so events shared by several pipelines stay intact.
 * The envelope itself must already be this pipeline's own copy.
 */
export function compileSetter(path: string): Setter {
  const { fromRoot, segments } = parsePath(path);
  const full = fromRoot ? segments : ['payload', ...segments];
  const last = full[full.length - 1]!;
  const parents = full.slice(0, -1);
  // ownEnvelope already copied `payload`, so a payload path starts copying one level down.
  const firstToCopy = fromRoot ? 0 : 1;
  return (envelope, value) => {
    let target = envelope as Obj;
    for (let i = 0; i < parents.length; i++) {
      const segment = parents[i]!;
      const next = target[segment];
      if (i < firstToCopy) {
        target = next as Obj;
        continue;
      }
      const copy: Obj =
        next !== null && typeof next === 'object' && !Array.isArray(next)
          ? { ...(next as Obj) }
          : {};
      target[segment] = copy;
      target = copy;
    }
    target[last] = value;
  };
}

/** The envelope copy a mutating pipeline works on: nested objects stay shared until written. */
export function ownEnvelope(envelope: EventEnvelope): EventEnvelope {
  return { ...envelope, payload: { ...envelope.payload } };
}
