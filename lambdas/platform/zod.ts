/**
 * @module platform/zod
 * zod's configuration for the proxy, applied by importing this module (`import './zod.ts'`, or
 * `import { lazily } from './zod.ts'`) next to `import * as z from 'zod/mini'`. (Re-exporting the
 * `z` namespace from here would make it a value esbuild cannot tree-shake: the bundle grew from
 * 194 to 558 KB.)
 *
 * `jitless`: zod 4 otherwise compiles each object schema with `new Function` on its first parse.
 * That compile is paid on every cold start (measured: import 46 -> 33 ms, first invocation
 * 35 -> 22 ms for the execute-v1 bundle) while the steady-state cost of small requests is within
 * measurement noise.
 *
 * The function bundles use `zod/mini` only (the settings catalogue, the configuration and the
 * request schemas): zod's classic API puts its methods on every schema object it builds, which
 * cost about 12 ms of every cold start. With no classic schema built, no zod locale is loaded
 * either: every message is the schemas' own.
 */
import { config } from 'zod/mini';

config({ jitless: true });

/**
 * `build`, called on the first call of the returned function; the same value afterwards. Building
 * a schema is cold-start work: a schema used only on some paths is built on its first use.
 */
export function lazily<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= build();
    return value;
  };
}
