/**
 * @module platform/clock
 * A monotonic clock in milliseconds, for durations and deadlines within one process.
 *
 * Why not `performance.now()`: Node's `performance` global loads `perf_hooks` and eight internal
 * modules on its first use, about 1.7 ms of every cold start's first call on Node 24 here
 * (BENCHMARKS.md, "Cold starts on Node 24"), and the proxy reads no other part of it.
 * `process.hrtime.bigint()` is the same monotonic clock, with another origin: compare its readings
 * only with each other.
 */

/** Milliseconds on a monotonic clock (fractional; an arbitrary origin, fixed for the process). */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
