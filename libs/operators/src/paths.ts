// Field paths (docs/design.md §2): `a.b.c` resolves inside `payload`; `$.a.b` against the whole event.
// Paths are compiled once into getters and setters specialised by depth, so the hot path does
// no string splitting. JSON `null` counts as missing, as it does for every operator.
import type { EventEnvelope } from '@sluice/contracts';

export type Getter = (envelope: EventEnvelope) => unknown;
export type Setter = (envelope: EventEnvelope, value: unknown) => void;

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
  // Generated code, so every step is a property access with a constant key, which V8 compiles
  // to a fast named load; keys enter the source only as JSON string literals.
  const lines = ['let v = e;'];
  for (const segment of full) {
    lines.push(
      `if (v === null || typeof v !== 'object') return undefined;`,
      `v = v[${JSON.stringify(segment)}];`,
    );
  }
  lines.push('return v === null ? undefined : v;');
  return new Function('e', lines.join('\n')) as Getter;
}

/**
 * A setter that never mutates objects it did not create: each object along the path is copied
 * before it is written (copy-on-write), so events shared by several pipelines stay intact.
 * The envelope itself must already be this pipeline's own copy (`ownEnvelope`), whose payload
 * is a copy too, so a payload path starts copying one level down.
 */
export function compileSetter(path: string): Setter {
  const { fromRoot, segments } = parsePath(path);
  const full = fromRoot ? segments : ['payload', ...segments];
  const keys = full.map((segment) => JSON.stringify(segment));
  const lines = ['let t = e;'];
  keys.slice(0, -1).forEach((key, i) => {
    if (i === 0 && !fromRoot) {
      lines.push(`t = t[${key}];`);
    } else {
      lines.push(
        `{ const n = t[${key}];`,
        `  const c = n !== null && typeof n === 'object' && !Array.isArray(n) ? Object.assign({}, n) : {};`,
        `  t[${key}] = c; t = c; }`,
      );
    }
  });
  lines.push(`t[${keys[keys.length - 1]}] = value;`);
  return new Function('e', 'value', lines.join('\n')) as Setter;
}

/**
 * The envelope copy a mutating pipeline works on: nested objects stay shared until written.
 * Object.assign, not spread: V8 gives a spread clone a map that turns every later property
 * addition (such as `_route`) into a slow path, about 10 times slower (bench/operators.bench.ts).
 */
export function ownEnvelope(envelope: EventEnvelope): EventEnvelope {
  const own = Object.assign({}, envelope);
  own.payload = Object.assign({}, envelope.payload);
  return own;
}
