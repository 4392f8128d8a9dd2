/**
 * @module platform/error-table
 * The proxy's own error codes as data: one row per kind of failure the proxy reports, with its
 * HTTP status, the shape of the answer, whether the ERP call may have run (so whether a retry
 * is safe) and a short meaning. Everything that needs a code or a status reads it from here:
 * the error classes (`errors.ts`), the response mapping (`core/envelope.ts`), the request
 * metrics and log, the CloudWatch alarms (`lib/monitoring.ts`) and `GET /_/about`.
 *
 * Adding an error code touches this table, the class that throws it and the README's "Proxy
 * errors" table; `test/unit/error-table.test.ts` fails when the README row is missing or says
 * another HTTP status.
 *
 * ERP errors are not here: they are passed on with HTTP 200 and the ERP's own code (see the
 * README, "Responses and errors").
 */

import type { ApiName } from './names.ts';

/** The APIs whose endpoints answer with proxy errors (not the operator endpoints). */
export type ErrorApi = Exclude<ApiName, 'aux'>;

/** Whether the ERP call ran when the proxy answered with this error. */
export type CallRan =
  /** Certainly not: the failure came before anything was sent. A retry is safe. */
  | 'no'
  /** Perhaps: the request was sent, or the proxy cannot tell. Check before retrying a write. */
  | 'maybe'
  /** Yes: the ERP answered, but not with something the proxy can pass on. */
  | 'yes';

/** One kind of proxy failure. */
export interface ProxyErrorRow {
  /** The envelope's `error.code`; also `error_code` in the request log and `code` on `Errors`. */
  readonly code: number;
  readonly httpStatus: number;
  /** `envelope`: a JSON envelope with `error`; `text`: a `text/plain` body, no envelope. */
  readonly answer: 'envelope' | 'text';
  readonly callRan: CallRan;
  /**
   * The APIs that can answer with it (the OpenAPI document lists it under their endpoints). On
   * `mcp`, an error found before the MCP request is handled (key, license, body) is an HTTP answer
   * with this status and a JSON-RPC error; one found while a tool runs is that tool's result, with
   * `isError: true` and this code (README, "Agents (MCP)").
   */
  readonly apis: readonly ErrorApi[];
  /** One sentence for callers (shown by `GET /_/about`); no markup. */
  readonly meaning: string;
}

const ALL_APIS: readonly ErrorApi[] = Object.freeze(['v1', 'v2', 'version', 'mcp'] as const);

/**
 * Every proxy error, by the name of the class that throws it. The order is the README's, with
 * the v2 plain-text answer last (it shares -32600 with `invalidRequest`).
 */
export const PROXY_ERRORS = deepFreeze({
  parse: {
    code: -32700,
    httpStatus: 400,
    answer: 'envelope',
    callRan: 'no',
    apis: ['v1', 'version', 'mcp'],
    meaning: 'The body is not valid JSON, not UTF-8, or compressed (v1, version and /mcp endpoints).',
  },
  invalidRequest: {
    code: -32600,
    httpStatus: 400,
    answer: 'envelope',
    callRan: 'no',
    apis: ['v1', 'version', 'mcp'],
    meaning:
      'The body is JSON but not a valid request: a field is missing or mistyped, an unknown action, a bad erp_instance (v1 and version endpoints); a v1 call translated to JSON-2 whose positional params cannot be named; on /mcp, a JSON-RPC batch, or x-erp-* connection headers missing or invalid (a tool error).',
  },
  authentication: {
    code: -32000,
    httpStatus: 401,
    answer: 'envelope',
    callRan: 'no',
    apis: ALL_APIS,
    meaning:
      'The x-api-key header (on /mcp, or Authorization: Bearer) is missing or not one of the proxy keys.',
  },
  license: {
    code: 0,
    httpStatus: 403,
    answer: 'envelope',
    callRan: 'no',
    apis: ALL_APIS,
    meaning: 'The license is missing, invalid or expired (execute and version endpoints).',
  },
  missingFunctionName: {
    code: -32002,
    httpStatus: 400,
    answer: 'envelope',
    callRan: 'no',
    apis: ['v1'],
    meaning: 'v1 call_method without a non-empty fn_name.',
  },
  upstreamTimeout: {
    code: -32003,
    httpStatus: 504,
    answer: 'envelope',
    callRan: 'maybe',
    apis: ALL_APIS,
    meaning:
      'The ERP did not answer in time, or the connection broke after the request was sent: the call may have run.',
  },
  upstreamUnavailable: {
    code: -32004,
    httpStatus: 503,
    answer: 'envelope',
    callRan: 'no',
    apis: ALL_APIS,
    meaning:
      'The ERP could not be reached or turned the call away (DNS for a name the target list names, connect, TLS, 429, 503), or a write with an Idempotency-Key could not get its record (the store could not be reached, or the local store is full for this caller): the call certainly did not run; retry with back-off.',
  },
  rateLimited: {
    code: -32004,
    httpStatus: 429,
    answer: 'envelope',
    callRan: 'no',
    // The limits apply to the calls that would reach an ERP: execute calls and MCP tool calls.
    apis: ['v1', 'v2', 'mcp'],
    meaning:
      "Refused by the proxy's own rate limit or in-flight cap (the key's, the person's or the ERP's; docs/guide/limits.md): the call certainly did not run; retry after Retry-After.",
  },
  badUpstreamResponse: {
    code: -32005,
    httpStatus: 502,
    answer: 'envelope',
    // An HTML error page or an unexpected status may come after the call ran; a redirect or a
    // missing /jsonrpc before it. The caller cannot tell which: treat it as may have run.
    callRan: 'maybe',
    apis: ALL_APIS,
    meaning:
      "The upstream answered with something that is not an ERP answer (another service's or a gateway's JSON, an HTML page, an unexpected status, a redirect, no /jsonrpc): the message names the HTTP status and content type; check erp_instance.url.",
  },
  json2Unavailable: {
    code: -32006,
    httpStatus: 502,
    answer: 'envelope',
    callRan: 'no',
    // v1 too: calls the protocol bridge (ERP_V1_TRANSPORT) sends over JSON-2; and MCP tools.
    apis: ['v1', 'v2', 'mcp'],
    meaning:
      'v2 (JSON-2) is unavailable on the target: an ERP older than 19 (with ERP_V2_TRANSPORT=auto: and no user_id), or the database cannot be selected (also for v1 calls served over JSON-2).',
  },
  invalidV2Target: {
    code: -32007,
    httpStatus: 400,
    answer: 'envelope',
    callRan: 'no',
    apis: ['v2'],
    meaning: 'v2: the model or method name is invalid, or db or api_key is not valid in an HTTP header.',
  },
  targetRefused: {
    code: -32008,
    httpStatus: 403,
    answer: 'envelope',
    callRan: 'no',
    apis: ALL_APIS,
    meaning:
      "The target is refused by the proxy's target policy; a host name the policy does not list by name gets this one answer whether it is unknown or resolves to a refused address.",
  },
  keyPolicyRefused: {
    code: -32008,
    httpStatus: 403,
    answer: 'envelope',
    callRan: 'no',
    apis: ALL_APIS,
    meaning:
      "The call is refused by the calling proxy key's own policy (its APIs, read-only access, models, targets or databases); the message names the rule, never the key.",
  },
  identityRefused: {
    code: -32008,
    httpStatus: 403,
    answer: 'envelope',
    callRan: 'no',
    apis: ['mcp'],
    meaning:
      "/mcp with an OAuth access token: the token's person has no ERP connection in the operator's identity map, or its scopes do not allow the call (WWW-Authenticate names the scopes that would).",
  },
  responseTooLarge: {
    code: -32009,
    httpStatus: 502,
    answer: 'envelope',
    callRan: 'yes',
    apis: ALL_APIS,
    meaning:
      "The ERP's answer is too large for the gateway (6 MB), or, on the local server, does not fit " +
      'beside the answers other calls hold at that moment: ask for less, accept gzip, or (a call that only reads) retry shortly.',
  },
  idempotencyInProgress: {
    code: -32010,
    httpStatus: 409,
    answer: 'envelope',
    // This request ran nothing; the first call with the key is still running.
    callRan: 'no',
    apis: ['v1', 'v2', 'mcp'],
    meaning:
      'A call with this Idempotency-Key is still running: retry with the same key after Retry-After to get its answer.',
  },
  idempotencyKeyReused: {
    code: -32011,
    httpStatus: 422,
    answer: 'envelope',
    callRan: 'no',
    apis: ['v1', 'v2', 'mcp'],
    meaning:
      'This Idempotency-Key was used by the same caller for a different request (another route or body): nothing ran; use a new key for a new operation.',
  },
  braked: {
    code: -32012,
    httpStatus: 503,
    answer: 'envelope',
    callRan: 'no',
    apis: ALL_APIS,
    meaning:
      'Stopped by an operator\'s brake (docs/operators.md, "Stop an agent now"): the call did not run; the message gives the operator\'s reason, and Retry-After is sent only when the brake expires by itself. Do not retry in a loop: tell a person.',
  },
  internal: {
    code: -32603,
    httpStatus: 500,
    answer: 'envelope',
    // A bug can strike before or after the ERP call: nothing says which.
    callRan: 'maybe',
    apis: ALL_APIS,
    meaning: 'Unexpected internal error (a bug; the details are only in the logs).',
  },
  v2RequestShape: {
    code: -32600,
    httpStatus: 400,
    answer: 'text',
    callRan: 'no',
    apis: ['v2'],
    meaning:
      'v2: the body cannot be decoded into the request shape; answered in plain text naming the field, not an envelope.',
  },
} as const satisfies Record<string, ProxyErrorRow>);

/** The name of a row of `PROXY_ERRORS`. */
export type ProxyErrorKind = keyof typeof PROXY_ERRORS;

/** The rows of `PROXY_ERRORS`, in table order. */
export const PROXY_ERROR_ROWS: readonly ProxyErrorRow[] = Object.freeze(Object.values(PROXY_ERRORS));

/** Whether the ERP call may have run (`maybe` or `yes`): a retry is safe only when not. */
export function mayHaveRun(row: Pick<ProxyErrorRow, 'callRan'>): boolean {
  return row.callRan !== 'no';
}

/** The distinct codes answered with an HTTP 5xx status, in table order. */
export function serverErrorCodes(): number[] {
  return [...new Set(PROXY_ERROR_ROWS.filter((row) => row.httpStatus >= 500).map((row) => row.code))];
}

function deepFreeze<T extends Record<string, object>>(table: T): T {
  for (const row of Object.values(table)) Object.freeze(row);
  return Object.freeze(table);
}
