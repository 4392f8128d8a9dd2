/**
 * @module errors
 * The two errors the client throws: `ErpProxyError` when the proxy (or the way to it) failed, and
 * `ErpError` when the ERP itself refused the call. Both say whether a retry is safe.
 */
import { codeMayHaveRun, UPSTREAM_TIMEOUT, UPSTREAM_UNAVAILABLE } from './proxy-codes.js';
import type { ServerTiming } from './types.js';

/** What an answer says of itself, on the errors: its request id and `Server-Timing` (see `AnswerInfo`). */
export interface AnsweredBy {
  /** The proxy's id of the request (`Request-Id`, else `apigw-requestid`): send it when reporting a problem. */
  readonly requestId?: string | undefined;
  /** The answer's `Server-Timing`, parsed. */
  readonly serverTiming?: ServerTiming | undefined;
}

/** What an {@link ErpProxyError} is built from. */
export interface ErpProxyErrorInit extends AnsweredBy {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
  /** The HTTP status of the proxy's answer; 0 when no answer came (network failure, timeout). */
  readonly httpStatus: number;
  /** Whether the ERP call may have run; by default what the proxy's error table says of `code`. */
  readonly mayHaveRun?: boolean;
  /** The envelope `id` of the call. */
  readonly id?: string | undefined;
  /** `Retry-After` of the answer, in seconds, when it gave one. */
  readonly retryAfterSeconds?: number | undefined;
  /** The `Idempotency-Key` the call was sent with (README of the proxy, "Retrying writes safely"). */
  readonly idempotencyKey?: string | undefined;
  /** The connection to the proxy failed before a complete answer came (not the client's own timeout). */
  readonly connectionLost?: boolean;
  readonly cause?: unknown;
}

/**
 * A proxy-layer failure: the proxy's own error code (README, "Proxy errors"), or a failure on the
 * way to the proxy. `mayHaveRun` false means the ERP call certainly did not run; `retryable` means
 * it did not run and the failure is transient (-32004), so the same call may simply be sent again.
 *
 * @example
 * ```ts
 * try { await erp.create('res.partner', { name: 'Acme' }); }
 * catch (error) {
 *   if (error instanceof ErpProxyError && error.mayHaveRun) { ... check before creating again ... }
 * }
 * ```
 */
export class ErpProxyError extends Error {
  readonly code: number;
  readonly data: unknown;
  readonly httpStatus: number;
  readonly mayHaveRun: boolean;
  readonly retryable: boolean;
  readonly id: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  /**
   * The `Idempotency-Key` the call was sent with. With a -32003 (`mayHaveRun`), the call's outcome
   * is unknown: the proxy will not run it again under this key; check the ERP, then use a new key.
   */
  readonly idempotencyKey: string | undefined;
  /** The connection to the proxy failed before a complete answer came (not the client's own timeout). */
  readonly connectionLost: boolean;
  /** The proxy's id of the request, when an answer came (`Request-Id`, else `apigw-requestid`). */
  readonly requestId: string | undefined;
  /** The answer's `Server-Timing` (`erp`, `store`, `proxy`), when it had one. */
  readonly serverTiming: ServerTiming | undefined;

  constructor(init: ErpProxyErrorInit) {
    super(
      init.idempotencyKey !== undefined && init.code === UPSTREAM_TIMEOUT
        ? `Outcome unknown (Idempotency-Key ${init.idempotencyKey}): ${init.message}`
        : init.message,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.name = 'ErpProxyError';
    this.code = init.code;
    this.data = init.data ?? null;
    this.httpStatus = init.httpStatus;
    this.mayHaveRun = init.mayHaveRun ?? codeMayHaveRun(init.code);
    this.retryable = !this.mayHaveRun && init.code === UPSTREAM_UNAVAILABLE;
    this.id = init.id;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.idempotencyKey = init.idempotencyKey;
    this.connectionLost = init.connectionLost ?? false;
    this.requestId = init.requestId;
    this.serverTiming = init.serverTiming;
  }
}

/** The ERP's exception class of a lock conflict: JSON-2 answers it with 409, v1 with code 0. */
const LOCK_ERROR = 'odoo.exceptions.LockError';

/**
 * An ERP-side failure, answered by the proxy with HTTP 200: `code` is 0 on v1, and on v2 the
 * ERP's HTTP status (401 key invalid or expired, 403 access denied, 404 not found, 409 lock
 * conflict, 422 arguments or validation, 500 server error). `name` is the ERP's exception class
 * (`odoo.exceptions.AccessError`), `data` the ERP's error object.
 */
export class ErpError extends Error {
  readonly code: number;
  readonly data: unknown;
  readonly id: string | undefined;
  /** A lock conflict (409, `LockError`): the transaction was rolled back, a retry is safe. */
  readonly retryable: boolean;
  /** The proxy's id of the request (`Request-Id`): send it when reporting a problem. */
  readonly requestId: string | undefined;
  /** The answer's `Server-Timing` (`erp`, `store`, `proxy`). */
  readonly serverTiming: ServerTiming | undefined;

  constructor(init: { code: number; message: string; data?: unknown; id?: string | undefined } & AnsweredBy) {
    super(init.message);
    this.code = init.code;
    this.data = init.data ?? null;
    this.id = init.id;
    this.requestId = init.requestId;
    this.serverTiming = init.serverTiming;
    const className = exceptionName(this.data);
    this.name = className ?? 'ErpError';
    this.retryable = init.code === 409 || className === LOCK_ERROR;
  }
}

function exceptionName(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const name: unknown = (data as { name?: unknown }).name;
  return typeof name === 'string' && name.length > 0 ? name : undefined;
}
