/**
 * @module platform/node-http
 * `node:http` and `node:https` as Node's own module objects (`process.getBuiltinModule`), never as
 * ES module imports, in every module of a function's bundle (test/infra/bundle.test.ts holds the
 * bundles to it, and checks that a fresh process serving an `http:` ERP loads neither
 * `node:https` nor undici).
 *
 * Why: Node 24, the runtime Lambda runs the functions on, builds an ES module import's namespace
 * by reading every export of `node:http`, its lazy ones too (the fetch and WebSocket classes, which
 * load undici, http2, worker_threads and more): about 75 ms of every cold start on this machine,
 * against 6 ms for the module object (BENCHMARKS.md, "Cold starts on Node 24"). And `node:https`
 * (TLS) loads on a function's first HTTPS request, not at import: a cold start that calls an
 * `http:` target (or none) never pays for it.
 */
import type * as Http from 'node:http';
import type * as Https from 'node:https';

/** `node:http`. */
export const http: typeof Http = process.getBuiltinModule('node:http');

let loadedHttps: typeof Https | undefined;

/** `node:https`, loaded on the first call. */
export function https(): typeof Https {
  loadedHttps ??= process.getBuiltinModule('node:https');
  return loadedHttps;
}
