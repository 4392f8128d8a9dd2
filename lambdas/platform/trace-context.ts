/**
 * @module platform/trace-context
 * W3C Trace Context (level 1) for the proxy: a caller's `traceparent` (and its `tracestate`) read
 * and checked, or a trace the proxy starts, and the `traceparent` of each ERP request, which
 * continues the trace with a span id of its own (docs/operators-observability.md, "Tracing").
 */
import { randomBytes } from 'node:crypto';

/** The trace a request belongs to. */
export interface TraceContext {
  /** 32 lowercase hex digits, never all zeros. */
  readonly traceId: string;
  /** The trace flags, 2 hex digits: the caller's, or `01` (sampled) for a trace the proxy starts. */
  readonly flags: string;
  /** The caller's `tracestate`, as received (at most {@link MAX_TRACESTATE_LENGTH} characters). */
  readonly state?: string | undefined;
}

/** A longer `tracestate` is dropped (W3C: at least 512 characters SHOULD be passed on). */
export const MAX_TRACESTATE_LENGTH = 512;

/** `version-traceid-parentid-flags`, the first 55 characters of any version (W3C, "Versioning"). */
const TRACEPARENT = /^([\da-f]{2})-([\da-f]{32})-([\da-f]{16})-([\da-f]{2})/;
/** Printable ASCII and spaces only: a header value Node sends as it is. */
const TRACESTATE = /^[\x20-\x7e]+$/;
/** Some digit other than 0: all zeros is an invalid trace or span id. */
const NOT_ALL_ZEROS = /[^0]/;

/**
 * The trace of a caller's `traceparent` and `tracestate`; `undefined` when the `traceparent` is
 * not valid (then its `tracestate` is ignored too, never an error). Version `00` must be exactly
 * 55 characters; a later version is read as `00`'s fields, followed by the end or a `-` (and only
 * its sampled flag is kept); `ff` is invalid. Uppercase hex is invalid.
 */
export function parseTraceparent(traceparent: unknown, tracestate?: unknown): TraceContext | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const [, version, traceId, parentId, flags] = TRACEPARENT.exec(traceparent) ?? [];
  if (version === undefined || traceId === undefined || flags === undefined || version === 'ff')
    return undefined;
  const exact = traceparent.length === 55;
  if (version === '00' ? !exact : !exact && traceparent[55] !== '-') return undefined;
  if (!NOT_ALL_ZEROS.test(traceId) || !NOT_ALL_ZEROS.test(parentId as string)) return undefined;
  const state =
    typeof tracestate === 'string' &&
    tracestate.length <= MAX_TRACESTATE_LENGTH &&
    TRACESTATE.test(tracestate)
      ? tracestate
      : undefined;
  return { traceId, flags: version === '00' ? flags : `0${Number.parseInt(flags, 16) & 1}`, state };
}

let pool = Buffer.alloc(0);
let used = 0;

/**
 * `bytes` random bytes in lowercase hex, never all zeros, from a pool refilled 4 KB at a time: a
 * call of `randomBytes` took 8-19 µs here whatever its size (the handler overhead's budget is
 * 20 µs), the pool's share of it and the hex about 0.14 µs per id.
 */
function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    pool = randomBytes(4096);
    used = 0;
  }
  const start = used;
  used += bytes;
  const hex = pool.toString('hex', start, used);
  return NOT_ALL_ZEROS.test(hex) ? hex : randomHex(bytes);
}

/** A trace the proxy starts for a call that brings none: a new trace id, sampled. */
export function newTrace(): TraceContext {
  return { traceId: randomHex(16), flags: '01' };
}

/** The `traceparent` of one ERP request: the trace's id and flags, and a new span id. */
export function childTraceparent(trace: TraceContext): string {
  return `00-${trace.traceId}-${randomHex(8)}-${trace.flags}`;
}
