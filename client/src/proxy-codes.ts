/**
 * @module proxy-codes
 * What the client knows of the proxy's own error codes: the HTTP status each is answered with
 * and whether the ERP call may have run. A copy of the proxy's error table
 * (`lambdas/platform/error-table.ts`, README "Proxy errors"), because this package has no
 * runtime dependencies and builds on its own; `test/client/proxy-codes.test.ts` fails when the
 * two disagree.
 */

/** One proxy error code as the client reads it. */
export interface ProxyCode {
  readonly code: number;
  readonly httpStatus: number;
  /** `false`: the call certainly did not run. */
  readonly mayHaveRun: boolean;
}

/**
 * Every proxy error code, in the README's order (-32004 twice: 503 when the ERP side turned the
 * call away, 429 when the proxy's own limits did, with `Retry-After`; -32600 twice: envelope, and v2's plain text;
 * -32008 three times: the proxy's target policy, the calling key's own policy, and on `/mcp` an
 * OAuth caller's identity or scopes).
 */
export const PROXY_CODES: readonly ProxyCode[] = Object.freeze(
  [
    { code: -32700, httpStatus: 400, mayHaveRun: false },
    { code: -32600, httpStatus: 400, mayHaveRun: false },
    { code: -32000, httpStatus: 401, mayHaveRun: false },
    { code: 0, httpStatus: 403, mayHaveRun: false },
    { code: -32002, httpStatus: 400, mayHaveRun: false },
    { code: -32003, httpStatus: 504, mayHaveRun: true },
    { code: -32004, httpStatus: 503, mayHaveRun: false },
    { code: -32004, httpStatus: 429, mayHaveRun: false },
    { code: -32005, httpStatus: 502, mayHaveRun: true },
    { code: -32006, httpStatus: 502, mayHaveRun: false },
    { code: -32007, httpStatus: 400, mayHaveRun: false },
    { code: -32008, httpStatus: 403, mayHaveRun: false },
    { code: -32008, httpStatus: 403, mayHaveRun: false },
    { code: -32008, httpStatus: 403, mayHaveRun: false },
    { code: -32009, httpStatus: 502, mayHaveRun: true },
    { code: -32010, httpStatus: 409, mayHaveRun: false },
    { code: -32011, httpStatus: 422, mayHaveRun: false },
    { code: -32012, httpStatus: 503, mayHaveRun: false },
    { code: -32603, httpStatus: 500, mayHaveRun: true },
    { code: -32600, httpStatus: 400, mayHaveRun: false },
  ].map((row) => Object.freeze(row)),
);

/** The code of "the call certainly did not run; retry with back-off". */
export const UPSTREAM_UNAVAILABLE = -32004;
/** The code of "the ERP did not answer in time: the call may have run". */
export const UPSTREAM_TIMEOUT = -32003;
/** The code of "a call with this Idempotency-Key is still running: retry after Retry-After". */
export const IDEMPOTENCY_IN_PROGRESS = -32010;
/** The code of "this Idempotency-Key was used for a different request". */
export const IDEMPOTENCY_KEY_REUSED = -32011;
/**
 * The code of "stopped by an operator's brake" (HTTP 503, did not run): never retried, whatever its
 * status says; its message gives the operator's reason, `Retry-After` when the brake expires.
 */
export const BRAKED = -32012;
/** The code of "not a valid request". */
export const INVALID_REQUEST = -32600;
/** The code of "unexpected internal error". */
export const INTERNAL_ERROR = -32603;
/** The code of "an answer that is not what was expected". */
export const BAD_RESPONSE = -32005;

/**
 * Whether a call answered with `code` may have run. An unknown code (a newer proxy) may have:
 * only a code known to come before the ERP call is taken as "did not run".
 */
export function codeMayHaveRun(code: number): boolean {
  const row = PROXY_CODES.find((candidate) => candidate.code === code);
  return row === undefined ? true : row.mayHaveRun;
}
