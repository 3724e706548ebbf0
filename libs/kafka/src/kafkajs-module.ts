// kafkajs 2.2.4 is the last release and it is not maintained: where one of its modules is wrong
// or slow, Sluice replaces that module in Node's require cache before kafkajs loads it: the
// aborted-transaction filter with the Java client's rule, the record decoder with a faster one
// that returns the same records (tested field for field against the original). Jest bypasses
// Node's cache; jest.preset.js maps the same modules for the test suites.
import { createRequire } from 'node:module';
import Module from 'node:module';

const load = createRequire(__filename);

/** kafkajs' own module at `path` (under `kafkajs/src/`), for tests and for reuse. */
export function kafkajsModule<T>(path: string): T {
  return load(`kafkajs/src/${path}`) as T;
}

/** kafkajs' original module at `path`, loaded afresh even where a replacement is installed. */
export function originalKafkajsModule<T>(path: string): T {
  const resolved = load.resolve(`kafkajs/src/${path}`);
  const cached = load.cache[resolved];
  delete load.cache[resolved];
  try {
    return load(resolved) as T;
  } finally {
    if (cached) load.cache[resolved] = cached;
  }
}

/**
 * Makes `require('kafkajs/src/<path>')` return `exports`, unless `loadedBy` (the module that
 * requires it) is loaded already: then kafkajs holds the original and replacing it would only
 * make the cache lie. Returns whether the replacement is in place.
 */
export function replaceKafkajsModule(path: string, loadedBy: string, exports: unknown): boolean {
  const target = load.resolve(`kafkajs/src/${path}`);
  const existing = load.cache[target];
  if (existing?.exports === exports) return true;
  if (load.cache[load.resolve(`kafkajs/src/${loadedBy}`)]) return false;
  const replacement = new Module(target);
  replacement.filename = target;
  replacement.loaded = true;
  replacement.exports = exports;
  load.cache[target] = replacement;
  return true;
}
