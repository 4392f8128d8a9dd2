/**
 * @module platform/errors
 * The one error hierarchy of the proxy. Every failure the proxy itself reports is a
 * `ProxyError` with a JSON-RPC-style `code`, an HTTP status and a message that is safe to show
 * (it never carries a secret). `lambdas/middleware/response-shaping.ts` is the only place that turns
 * these into responses. One subclass per row of the error table (`error-table.ts`), which
 * gives each its code, status and answer shape.
 */
import { echoed, MAX_ERROR_MESSAGE_CHARS } from './bounded-text.ts';
import { PROXY_ERRORS, type ProxyErrorRow } from './error-table.ts';
import type { KeyPolicyRule } from './key-policy.ts';
import type { LimitRule } from './limits.ts';

export abstract class ProxyError extends Error {
  /**
   * The class's row of the error table. Every concrete subclass sets it; the constructor copies
   * its code and status onto the instance.
   */
  declare static readonly row: ProxyErrorRow;

  /** Extra response headers (e.g. `Retry-After`). */
  readonly headers: Readonly<Record<string, string>>;
  /** Optional `error.data` for the envelope. */
  readonly data: unknown;
  /** From the class's table row (an own field: the error log line shows it). */
  readonly code: number;
  /** From the class's table row. */
  readonly httpStatus: number;
  // A private field: the log line does not print a whole row for each error.
  readonly #row: ProxyErrorRow;

  constructor(
    message: string,
    options: { headers?: Record<string, string>; data?: unknown; cause?: unknown } = {},
  ) {
    super(
      echoed(message, MAX_ERROR_MESSAGE_CHARS),
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = new.target.name;
    this.headers = Object.freeze({ ...(options.headers ?? {}) });
    this.data = options.data ?? null;
    const { row } = new.target;
    this.#row = row;
    this.code = row.code;
    this.httpStatus = row.httpStatus;
  }

  /** The error's row of the error table: answer shape, whether the call may have run. */
  get row(): ProxyErrorRow {
    return this.#row;
  }

  /**
   * Adds response headers the error does not set itself (the `RateLimit-Policy` and `RateLimit`
   * of a call the limits counted before it failed: README, "Limits"); the error's own win.
   * Returns the error (which is its request's own: none is cached and shared).
   */
  withHeaders(headers: Readonly<Record<string, string>>): this {
    // A frozen error cannot take them (and assigning would throw in strict mode).
    if (Object.isFrozen(this)) return this;
    (this as { headers: Readonly<Record<string, string>> }).headers = Object.freeze({
      ...headers,
      ...this.headers,
    });
    return this;
  }
}

/** -32700: the body is not valid JSON (v1 and version endpoints). */
export class ParseError extends ProxyError {
  static override readonly row = PROXY_ERRORS.parse;
}

/** -32600: JSON, but not a valid request (missing or mistyped field, unknown action...). */
export class InvalidRequestError extends ProxyError {
  static override readonly row = PROXY_ERRORS.invalidRequest;
}

/** -32000: `x-api-key` missing or not one of the configured proxy keys. */
export class AuthenticationError extends ProxyError {
  static override readonly row = PROXY_ERRORS.authentication;
  constructor(message = 'Authentication failed', options: { headers?: Record<string, string> } = {}) {
    super(message, options);
  }
}

/** 0 with HTTP 403: the license is missing, invalid or expired. */
export class LicenseError extends ProxyError {
  static override readonly row = PROXY_ERRORS.license;
}

/** -32002: v1 `call_method` with `fn_name` missing or empty. */
export class MissingFunctionNameError extends ProxyError {
  static override readonly row = PROXY_ERRORS.missingFunctionName;
  constructor(message = 'call_method needs a non-empty fn_name: the name of the ERP method to call') {
    super(message);
  }
}

/** -32003: upstream timed out or the connection broke after the request was sent; the call may have run. */
export class UpstreamTimeoutError extends ProxyError {
  static override readonly row = PROXY_ERRORS.upstreamTimeout;
}

/** -32004: retryable; the call certainly did not run. */
export class UpstreamUnavailableError extends ProxyError {
  static override readonly row = PROXY_ERRORS.upstreamUnavailable;
}

/**
 * -32004 with HTTP 429: refused by the proxy's own rate limit or in-flight cap (README, "Limits").
 * The message names the limit (the key's, the person's or the ERP's, with its window), never the
 * key; `rule` goes to the request log line and the `Throttled` metric, `retryAfterSeconds` to
 * `Retry-After` (and, on `/mcp`, to the tool error's advice).
 */
export class RateLimitedError extends ProxyError {
  static override readonly row = PROXY_ERRORS.rateLimited;
  readonly rule: LimitRule | undefined;
  readonly retryAfterSeconds: number;
  /** `retryAfterSeconds`: whole seconds, at least 1 (1 when not given). */
  constructor(
    message: string,
    options: { rule?: LimitRule; retryAfterSeconds?: number; headers?: Record<string, string> } = {},
  ) {
    const retryAfterSeconds = Math.max(1, Math.ceil(options.retryAfterSeconds ?? 1));
    super(message, { headers: { ...options.headers, 'Retry-After': String(retryAfterSeconds) } });
    this.rule = options.rule;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** -32005: the upstream answered with something that is not an ERP answer. */
export class BadUpstreamResponseError extends ProxyError {
  static override readonly row = PROXY_ERRORS.badUpstreamResponse;
}

/**
 * -32006: v2 (JSON-2) unavailable on the target. `reason` tells the protocol bridge whether the
 * target has no JSON-2 at all (`no_json2`: an ERP older than 19) or could not select the database
 * (`no_database`); either way the call did not run.
 */
export class Json2UnavailableError extends ProxyError {
  static override readonly row = PROXY_ERRORS.json2Unavailable;
  readonly reason: 'no_json2' | 'no_database';
  constructor(
    message: string,
    reason: 'no_json2' | 'no_database' = 'no_json2',
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
    this.reason = reason;
  }
}

/** -32007: v2 model or method name invalid, or `db` / `api_key` not valid in an HTTP header. */
export class InvalidV2TargetError extends ProxyError {
  static override readonly row = PROXY_ERRORS.invalidV2Target;
}

/** -32008: the target is refused by the proxy's target policy. */
export class TargetRefusedError extends ProxyError {
  static override readonly row = PROXY_ERRORS.targetRefused;
}

/**
 * -32008 on `/mcp` for an OAuth caller: no ERP connection for the token's person, or scopes that
 * do not allow the call (with `WWW-Authenticate: Bearer error="insufficient_scope"`).
 */
export class IdentityRefusedError extends ProxyError {
  static override readonly row = PROXY_ERRORS.identityRefused;
}

/**
 * -32008 too: the call is refused by the calling key's own policy. Its message names the rule
 * ("this key may only read"), never the key; `rule` goes to the request log line and the metrics.
 */
export class KeyPolicyRefusedError extends ProxyError {
  static override readonly row = PROXY_ERRORS.keyPolicyRefused;
  readonly rule: KeyPolicyRule;
  constructor(message: string, rule: KeyPolicyRule = 'api') {
    super(`Refused by this key's policy: ${message}`);
    this.rule = rule;
  }
}

/** -32009: the upstream answer is too large for the gateway. */
export class ResponseTooLargeError extends ProxyError {
  static override readonly row = PROXY_ERRORS.responseTooLarge;
}

/** -32010: a call with this `Idempotency-Key` is still running (HTTP 409, `Retry-After`). */
export class IdempotencyInProgressError extends ProxyError {
  static override readonly row = PROXY_ERRORS.idempotencyInProgress;
}

/** -32011: this `Idempotency-Key` was used by the same caller for a different request (HTTP 422). */
export class IdempotencyKeyReusedError extends ProxyError {
  static override readonly row = PROXY_ERRORS.idempotencyKeyReused;
}

/**
 * -32012: stopped by an operator's brake (HTTP 503). The message gives the brake's reason;
 * `Retry-After` is sent only when the brake expires by itself (`retryAfterSeconds`).
 */
export class BrakedError extends ProxyError {
  static override readonly row = PROXY_ERRORS.braked;
  /** The brake that stopped the call (`GET /_/brakes` lists it). */
  readonly brakeId: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  constructor(message: string, options: { brakeId?: string; retryAfterSeconds?: number } = {}) {
    const seconds =
      options.retryAfterSeconds === undefined ? undefined : Math.max(1, Math.ceil(options.retryAfterSeconds));
    super(message, seconds === undefined ? {} : { headers: { 'Retry-After': String(seconds) } });
    this.brakeId = options.brakeId;
    this.retryAfterSeconds = seconds;
  }
}

/** -32603: unexpected internal error (a bug). Its message is generic; the cause is only logged. */
export class InternalError extends ProxyError {
  static override readonly row = PROXY_ERRORS.internal;
  constructor(cause?: unknown) {
    super('Internal error', { cause });
  }
}

/**
 * A v2 request body that cannot be decoded into the request shape. Not an envelope: answered as
 * HTTP 400 `text/plain` (its table row says so; see the README, "Responses and errors"). Its
 * message names the field and the problem.
 */
export class V2RequestShapeError extends ProxyError {
  static override readonly row = PROXY_ERRORS.v2RequestShape;
}
