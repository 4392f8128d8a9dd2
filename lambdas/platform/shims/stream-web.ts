/**
 * @module platform/shims/stream-web
 * Stands in for `node:stream/web` in the Lambda bundles (esbuild `alias`, lib/proxy-function.ts).
 * Middy imports `ReadableStream` from it at load time but uses it only in `streamifyResponse`
 * mode, which these functions never use; loading Node's web streams cost about 7 ms of every
 * cold start. `instanceof` still answers as the real class would: the check defers to Node's
 * own `ReadableStream`, loaded only if it is ever asked.
 */
// biome-ignore lint/complexity/noStaticOnlyClass: it stands in for a class, on the right of `instanceof`.
export class ReadableStream {
  static [Symbol.hasInstance](value: unknown): boolean {
    return value instanceof globalThis.ReadableStream;
  }
}
