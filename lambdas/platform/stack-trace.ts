/**
 * @module platform/stack-trace
 * Readable stack traces for the log without `--enable-source-maps`. The deployed functions are
 * minified bundles with a source map beside each (`index.mjs.map`). Node's flag would read and
 * split every map at import, about 9–10 ms of each cold start (BENCHMARKS.md); an error worth a
 * stack in the log (a bug: -32603) is rare, so the map is read only when one is logged, once per
 * execution environment, and each frame of a bundle is rewritten to its source file, line and
 * column with Node's own `SourceMap` (`node:module`). Frames of files without a map beside them
 * (the local server runs the TypeScript sources) stay as they are.
 */
import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * A frame line's location: `    at f (file:///var/task/index.mjs:1:2345)` or
 * `    at /var/task/index.mjs:1:2345`. Only frame lines: a message may quote a caller's text.
 */
const FRAME_LOCATION = /^(\s+at (?:[^\n(]*\()?)((?:file:\/\/)?\/[^\s():]+\.m?js):(\d+):(\d+)/gm;

/** A longer stack is logged as it is (a stack is a message and ten frames). */
const MAX_MAPPED_STACK_CHARS = 32 * 1024;

/** Each bundle's map, read once; `null` for a file without a readable map beside it. */
const maps = new Map<string, SourceMap | null>();

function mapOf(file: string): SourceMap | null {
  let map = maps.get(file);
  if (map === undefined) {
    try {
      const path = file.startsWith('file://') ? fileURLToPath(file) : file;
      map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')) as SourceMapPayload);
    } catch {
      map = null;
    }
    maps.set(file, map);
  }
  return map;
}

/** One location in the source the map names, or the location itself when the map has none. */
function originalLocation(location: string, file: string, line: string, column: string): string {
  const map = mapOf(file);
  if (map === null) return location;
  // Stack traces count lines and columns from 1, source maps from 0.
  const entry = map.findEntry(Number(line) - 1, Number(column) - 1) as Partial<{
    originalSource: string;
    originalLine: number;
    originalColumn: number;
  }>;
  if (entry.originalSource === undefined || entry.originalLine === undefined) return location;
  // The bundler names sources relative to the bundle's build directory: `../../lambdas/...`.
  const source = entry.originalSource.replace(/^(?:\.\.\/)+/, '');
  return `${source}:${entry.originalLine + 1}:${(entry.originalColumn ?? 0) + 1}`;
}

/**
 * The stack with each bundle frame in source terms (`lambdas/core/forward.ts:88:11`); never
 * throws (a stack it cannot map is returned as it is).
 *
 * @example
 * readableStack('Error: boom\n    at f (file:///var/task/index.mjs:1:2345)');
 * // 'Error: boom\n    at f (lambdas/core/forward.ts:88:11)'
 */
export function readableStack(stack: string): string {
  if (stack.length > MAX_MAPPED_STACK_CHARS) return stack;
  try {
    return stack.replace(
      FRAME_LOCATION,
      (location: string, frame: string, file: string, line: string, column: string) =>
        `${frame}${originalLocation(location.slice(frame.length), file, line, column)}`,
    );
  } catch {
    return stack;
  }
}

/**
 * The error, its `stack` (and its causes') made readable in place, for the log. Returns it.
 * An error whose `stack` cannot be set (frozen) is returned as it is.
 */
export function withReadableStack<T>(error: T): T {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    const { stack } = current;
    if (typeof stack === 'string') {
      try {
        current.stack = readableStack(stack);
      } catch {
        // A frozen error keeps its stack.
      }
    }
    current = current.cause;
  }
  return error;
}
