/** One problem with an input, located by its JSON path (`operators[1].config.size_seconds`). */
export interface ValidationIssue {
  path: string;
  message: string;
}

/** Joins path segments the way users write them: `a.b[2].c`; the root is `$`. */
export function formatPath(segments: ReadonlyArray<string | number>): string {
  let path = '';
  for (const segment of segments) {
    if (typeof segment === 'number') path += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(segment)) path += path ? `.${segment}` : segment;
    else path += `[${JSON.stringify(segment)}]`;
  }
  return path || '$';
}

/** Turns an ajv instance path (`/operators/1/config`) into segments. */
export function pointerSegments(pointer: string): Array<string | number> {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split('/')
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((segment) => (/^(0|[1-9]\d*)$/.test(segment) ? Number(segment) : segment));
}
