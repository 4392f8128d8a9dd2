/**
 * @module platform/errors
 * The one error hierarchy of the proxy. Every failure the proxy itself reports is a
 * `ProxyError` with a JSON-RPC-style `code`, an HTTP status and a message that is safe to show
 * (it never carries a secret). `lambdas/middleware/envelope.ts` is the only place that turns
 * these into responses. One subclass per row of DESIGN.md section 3.
 */

export abstract class ProxyError extends Error {
  abstract readonly code: number;
  abstract readonly httpStatus: number;
  /** Extra response headers (e.g. `Retry-After`). */
  readonly headers: Readonly<Record<string, string>>;
  /** Optional `error.data` for the envelope. */
  readonly data: unknown;

  constructor(
    message: string,
    options: { headers?: Record<string, string>; data?: unknown; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.headers = Object.freeze({ ...(options.headers ?? {}) });
    this.data = options.data ?? null;
  }
}

/** -32700: the body is not valid JSON (v1 and version endpoints). */
export class ParseError extends ProxyError {
  readonly code = -32700;
  readonly httpStatus = 400;
}

/** -32600: JSON, but not a valid request (missing or mistyped field, unknown action...). */
export class InvalidRequestError extends ProxyError {
  readonly code = -32600;
  readonly httpStatus = 400;
}

/** -32000: `x-api-key` missing or not one of the configured proxy keys. */
export class AuthenticationError extends ProxyError {
  readonly code = -32000;
  readonly httpStatus = 401;
  constructor(message = 'Authentication failed') {
    super(message);
  }
}

/** 0 with HTTP 403: the license is missing, invalid or expired. */
export class LicenseError extends ProxyError {
  readonly code = 0;
  readonly httpStatus = 403;
}

/** -32002: v1 `call_method` with `fn_name` missing or empty. */
export class MissingFunctionNameError extends ProxyError {
  readonly code = -32002;
  readonly httpStatus = 400;
  constructor(message = 'call_method needs a non-empty fn_name: the name of the ERP method to call') {
    super(message);
  }
}

/** -32003: upstream timed out or the connection broke after the request was sent; the call may have run. */
export class UpstreamTimeoutError extends ProxyError {
  readonly code = -32003;
  readonly httpStatus = 504;
}

/** -32004: retryable; the call certainly did not run. */
export class UpstreamUnavailableError extends ProxyError {
  readonly code = -32004;
  readonly httpStatus = 503;
}

/** -32005: the upstream answered with something that is not an ERP answer. */
export class BadUpstreamResponseError extends ProxyError {
  readonly code = -32005;
  readonly httpStatus = 502;
}

/** -32006: v2 (JSON-2) unavailable on the target. */
export class Json2UnavailableError extends ProxyError {
  readonly code = -32006;
  readonly httpStatus = 502;
}

/** -32007: v2 model or method name invalid, or `db` / `api_key` not valid in an HTTP header. */
export class InvalidV2TargetError extends ProxyError {
  readonly code = -32007;
  readonly httpStatus = 400;
}

/** -32008: the target is refused by the proxy's target policy. */
export class TargetRefusedError extends ProxyError {
  readonly code = -32008;
  readonly httpStatus = 403;
}

/** -32009: the upstream answer is too large for the gateway. */
export class ResponseTooLargeError extends ProxyError {
  readonly code = -32009;
  readonly httpStatus = 502;
}

/** -32603: unexpected internal error (a bug). Its message is generic; the cause is only logged. */
export class InternalError extends ProxyError {
  readonly code = -32603;
  readonly httpStatus = 500;
  constructor(cause?: unknown) {
    super('Internal error', { cause });
  }
}

/**
 * A v2 request body that cannot be decoded into the request shape. Not an envelope: answered as
 * HTTP 400 `text/plain` (spec, Behaviours 4). Its message names the field and the problem.
 */
export class V2RequestShapeError extends ProxyError {
  readonly code = -32600;
  readonly httpStatus = 400;
}
