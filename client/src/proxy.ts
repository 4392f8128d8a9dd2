/**
 * @module proxy
 * `ErpProxy`: one proxy (its URL and key), the raw envelope endpoints, the version lookup cached
 * per target, and the one place a call is sent, read and retried.
 */
import { type AnsweredBy, ErpError, ErpProxyError } from './errors.js';
import {
  BAD_RESPONSE,
  IDEMPOTENCY_IN_PROGRESS,
  INVALID_REQUEST,
  UPSTREAM_TIMEOUT,
  UPSTREAM_UNAVAILABLE,
} from './proxy-codes.js';
import {
  isRetryable,
  MAX_RETRY_AFTER_SECONDS,
  parseRetryAfter,
  type RetryEvent,
  retryDelayMs,
  sleep,
} from './retry.js';
import { ErpTarget, type ErpTargetOptions } from './target.js';
import type {
  AnswerInfo,
  CallOptions,
  ProxyCalls,
  ServerTiming,
  V1Body,
  V2Body,
  VersionInfo,
  VersionOptions,
} from './types.js';
import { ulid } from './ulid.js';

/** Options of {@link ErpProxy}. */
export interface ErpProxyOptions {
  /** The proxy's base URL, e.g. `https://erp-proxy.example.com` or `http://127.0.0.1:8787`. */
  url: string;
  /** A proxy key, sent as `x-api-key` (never an ERP key). */
  apiKey: string;
  /**
   * The upstream timeout in seconds, sent as `x-request-timeout` (integer, at least 1). Without
   * it the proxy's default applies (15 s unless its operator changed it).
   */
  timeoutSeconds?: number;
  /** How many times a call that certainly did not run (-32004) or met a lock conflict (409) is sent again. Default 2. */
  retries?: number;
  /**
   * The longest wait before a retry, in seconds (default 60). A `Retry-After` asking for longer
   * is not waited for: the error is thrown at once. The back-off's own waits (up to 8 s) are cut
   * to it.
   */
  maxRetryWaitSeconds?: number;
  /**
   * Called before each wait for a retry, with the retry's number, the wait and the error that
   * caused it (to log it, count it, or show it). A hook that throws stops the call: it throws
   * what the hook threw, and nothing more is sent.
   */
  onRetry?: (event: RetryEvent) => void;
  /**
   * Called with each answer of every call (each attempt's), before its result is returned or its
   * error thrown: the proxy's request id and the answer's `Server-Timing` (to log them beside your
   * own records). A call's own `onAnswer` is called after it. An error the hook throws is the call's.
   */
  onAnswer?: (answer: AnswerInfo) => void;
  /** The `fetch` to use; the global one by default. */
  fetch?: typeof fetch;
  /**
   * Send an `Idempotency-Key` (a fresh ULID per call, the same on the client's own retries) with
   * every execute call, so a write runs at most once even when an answer is lost and the client
   * retries it: then a -32010 is retried after its `Retry-After` and a dropped connection with the
   * same key too. Default `true`; `false` sends none (a proxy without a state store, or your own
   * keys per call with {@link CallOptions.idempotencyKey}). Reads ignore the key.
   */
  idempotency?: boolean;
}

/** Options of {@link ErpProxy.version}. */

/** The default of {@link ErpProxyOptions.retries}. */
export const DEFAULT_RETRIES = 2;
/**
 * How much later than the proxy's own answer the client gives up on a call: the proxy answers
 * -32003 at `x-request-timeout`; the margin covers the network and a cold start before it.
 */
export const ABORT_MARGIN_SECONDS = 3;
/** Without `timeoutSeconds` the proxy's timeout is unknown: API Gateway's longest (30 s) bounds it. */
export const GATEWAY_TIMEOUT_SECONDS = 30;

/** Network failure codes that come before a request could be sent: the call did not run. */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * A client of one erp-proxy deployment.
 *
 * @example
 * ```ts
 * const proxy = new ErpProxy({ url: 'http://127.0.0.1:8787', apiKey: process.env.PROXY_API_KEY! });
 * const erp = proxy.erp({ url: 'https://erp.example.com', db: 'prod', apiKey: erpKey, userId: 2 });
 * const companies = await erp.searchRead('res.partner', [['is_company', '=', true]], { fields: ['name'] });
 * ```
 */
export class ErpProxy implements ProxyCalls {
  readonly url: string;
  readonly timeoutSeconds: number | undefined;
  readonly retries: number;
  readonly maxRetryWaitSeconds: number;
  readonly idempotency: boolean;
  readonly #onRetry: ((event: RetryEvent) => void) | undefined;
  readonly #onAnswer: ((answer: AnswerInfo) => void) | undefined;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  readonly #versions = new Map<string, Promise<VersionInfo>>();

  constructor(options: ErpProxyOptions) {
    this.url = baseUrl(options.url, 'url');
    if (typeof options.apiKey !== 'string' || options.apiKey.length === 0) {
      throw new TypeError('ErpProxy: apiKey (the proxy key) is required');
    }
    this.#apiKey = options.apiKey;
    if (options.timeoutSeconds !== undefined)
      checkTimeout(options.timeoutSeconds, 'ErpProxy: timeoutSeconds');
    this.timeoutSeconds = options.timeoutSeconds;
    const retries = options.retries ?? DEFAULT_RETRIES;
    if (!Number.isInteger(retries) || retries < 0) {
      throw new TypeError(`ErpProxy: retries must be an integer of at least 0, not ${String(retries)}`);
    }
    this.retries = retries;
    const maxWait = options.maxRetryWaitSeconds ?? MAX_RETRY_AFTER_SECONDS;
    if (typeof maxWait !== 'number' || !Number.isFinite(maxWait) || maxWait < 0) {
      throw new TypeError(
        `ErpProxy: maxRetryWaitSeconds must be a number of seconds of at least 0, not ${String(maxWait)}`,
      );
    }
    this.maxRetryWaitSeconds = maxWait;
    if (options.onRetry !== undefined && typeof options.onRetry !== 'function') {
      throw new TypeError('ErpProxy: onRetry must be a function');
    }
    this.#onRetry = options.onRetry;
    if (options.onAnswer !== undefined && typeof options.onAnswer !== 'function') {
      throw new TypeError('ErpProxy: onAnswer must be a function');
    }
    this.#onAnswer = options.onAnswer;
    this.idempotency = options.idempotency ?? true;
    // Looked up at each call, so a fetch patched after construction is used.
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** One target ERP: calls choose v2 on ERP 19 and later, v1 below. */
  erp(target: ErpTargetOptions): ErpTarget {
    return new ErpTarget(this, target);
  }

  /** `POST /api/erp/execute`: the body as given (with a fresh ULID `id` unless it has one); returns `result`. */
  v1<T = unknown>(body: V1Body, options: CallOptions = {}): Promise<T> {
    return this.#send('/api/erp/execute', body, options) as Promise<T>;
  }

  /** `POST /v2/erp/execute`: the body as given (with a fresh ULID `id` unless it has one); returns `result`. */
  v2<T = unknown>(body: V2Body, options: CallOptions = {}): Promise<T> {
    return this.#send('/v2/erp/execute', body, options) as Promise<T>;
  }

  /**
   * The version of the ERP at `url` (`POST /api/erp/version`), asked once per target URL for the
   * life of this object: the answer changes only when the target is upgraded.
   */
  version(url: string, options: VersionOptions = {}): Promise<VersionInfo> {
    const target = baseUrl(url, 'the target url');
    const cached = this.#versions.get(target);
    if (cached && options.refresh !== true) return cached;
    const lookup = this.#send('/api/erp/version', { url: target }, options).then(checkVersion);
    this.#versions.set(target, lookup);
    // A failed lookup is not remembered: the next call asks again.
    lookup.catch(() => {
      if (this.#versions.get(target) === lookup) this.#versions.delete(target);
    });
    return lookup;
  }

  /** The `Idempotency-Key` of an execute call: the caller's, none, or a fresh ULID. */
  #idempotencyKeyOf(path: string, options: CallOptions): string | undefined {
    if (path === '/api/erp/version') return undefined;
    if (options.idempotencyKey === false) return undefined;
    if (options.idempotencyKey !== undefined) {
      if (!/^[\x21-\x2b\x2d-\x7e]{1,255}$/.test(options.idempotencyKey)) {
        throw new TypeError('idempotencyKey must be 1 to 255 visible ASCII characters (no spaces or commas)');
      }
      return options.idempotencyKey;
    }
    return this.idempotency ? ulid() : undefined;
  }

  /**
   * Sends one call, and sends it again only while it certainly did not run (or met a lock
   * conflict); with an `Idempotency-Key`, also after a -32010 and a dropped connection, with the
   * same key: the proxy answers those from its record, never running the call twice.
   */
  async #send(path: string, body: object, options: CallOptions): Promise<unknown> {
    const given: unknown = (body as { id?: unknown }).id;
    const id = options.id ?? (typeof given === 'string' ? given : ulid());
    const payload = JSON.stringify({ ...body, id });
    const timeoutSeconds = options.timeoutSeconds ?? this.timeoutSeconds;
    if (timeoutSeconds !== undefined) checkTimeout(timeoutSeconds, 'timeoutSeconds');
    const idempotencyKey = this.#idempotencyKeyOf(path, options);
    const onAnswer = (answer: AnswerInfo): void => {
      this.#onAnswer?.(answer);
      options.onAnswer?.(answer);
    };
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#sendOnce(path, payload, id, timeoutSeconds, idempotencyKey, onAnswer);
      } catch (error) {
        const retryable =
          isRetryable(error) ||
          (idempotencyKey !== undefined &&
            error instanceof ErpProxyError &&
            (error.code === IDEMPOTENCY_IN_PROGRESS || error.connectionLost));
        if (attempt >= this.retries || !retryable) throw error;
        const delay = retryDelayMs(
          attempt,
          error instanceof ErpProxyError ? error.retryAfterSeconds : undefined,
          Math.random,
          this.maxRetryWaitSeconds,
        );
        if (delay === undefined) throw error;
        this.#onRetry?.({
          retry: attempt + 1,
          waitMs: delay,
          error: error as ErpProxyError | ErpError,
          id,
          idempotencyKey,
        });
        await sleep(delay);
      }
    }
  }

  async #sendOnce(
    path: string,
    payload: string,
    id: string,
    timeoutSeconds: number | undefined,
    idempotencyKey: string | undefined,
    onAnswer: (answer: AnswerInfo) => void,
  ): Promise<unknown> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
      'x-api-key': this.#apiKey,
    };
    if (timeoutSeconds !== undefined) headers['x-request-timeout'] = String(timeoutSeconds);
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKeyHeader(idempotencyKey);
    try {
      return await this.#exchange(path, payload, id, timeoutSeconds, headers, onAnswer);
    } catch (error) {
      if (idempotencyKey === undefined || !(error instanceof ErpProxyError)) throw error;
      // The error names the key: with -32003 the outcome is unknown under it.
      throw new ErpProxyError({
        code: error.code,
        message: error.message,
        data: error.data,
        httpStatus: error.httpStatus,
        mayHaveRun: error.mayHaveRun,
        id: error.id,
        retryAfterSeconds: error.retryAfterSeconds,
        idempotencyKey,
        connectionLost: error.connectionLost,
        requestId: error.requestId,
        serverTiming: error.serverTiming,
        cause: error.cause,
      });
    }
  }

  async #exchange(
    path: string,
    payload: string,
    id: string,
    timeoutSeconds: number | undefined,
    headers: Record<string, string>,
    onAnswer: (answer: AnswerInfo) => void,
  ): Promise<unknown> {
    const abortAfterSeconds = (timeoutSeconds ?? GATEWAY_TIMEOUT_SECONDS) + ABORT_MARGIN_SECONDS;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), abortAfterSeconds * 1000);
    try {
      let response: Response;
      try {
        response = await this.#fetch(`${this.url}${path}`, {
          method: 'POST',
          headers,
          body: payload,
          signal: controller.signal,
        });
      } catch (error) {
        throw networkError(error, controller.signal.aborted, abortAfterSeconds, this.url, id);
      }
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        // The proxy answered: whatever broke, the call may have run.
        throw networkError(error, controller.signal.aborted, abortAfterSeconds, this.url, id, true);
      }
      const requestId =
        response.headers.get('request-id') ?? response.headers.get('apigw-requestid') ?? undefined;
      const serverTiming = parseServerTiming(response.headers.get('server-timing'));
      onAnswer({ requestId, serverTiming, httpStatus: response.status, id });
      return readAnswer(response, text, id, { requestId, serverTiming });
    } finally {
      clearTimeout(timer);
    }
  }
}

/** `url` without trailing slashes, checked to be an absolute http(s) URL. */
/**
 * The `Idempotency-Key` header that carries `key` (draft-ietf-httpapi-idempotency-key-header: one
 * item): the key as it is, or, when it starts with a quote (which the proxy would read as the start
 * of a structured-field string), as that string, `"` and `\\` escaped (RFC 9651), so the proxy
 * reads back exactly `key`.
 */
export function idempotencyKeyHeader(key: string): string {
  return key.startsWith('"') ? `"${key.replace(/[\\"]/g, (char) => `\\${char}`)}"` : key;
}

function baseUrl(url: unknown, what: string): string {
  if (typeof url !== 'string' || !/^https?:\/\/[^/]/i.test(url)) {
    throw new TypeError(`${what} must be an absolute http(s) URL, not ${JSON.stringify(url)}`);
  }
  return url.replace(/\/+$/, '');
}

function checkTimeout(seconds: number, what: string): void {
  if (!Number.isInteger(seconds) || seconds < 1) {
    throw new TypeError(`${what} must be a whole number of seconds, at least 1, not ${String(seconds)}`);
  }
}

/** The error of a call that got no (complete) answer. */
function networkError(
  error: unknown,
  aborted: boolean,
  abortAfterSeconds: number,
  proxyUrl: string,
  id: string,
  answered = false,
): ErpProxyError {
  if (aborted) {
    return new ErpProxyError({
      code: UPSTREAM_TIMEOUT,
      message: `No answer from the proxy within ${abortAfterSeconds} s; the client gave up. The call may have run: check before retrying.`,
      httpStatus: 0,
      mayHaveRun: true,
      id,
      cause: error,
    });
  }
  const code = networkCode(error);
  if (!answered && code !== undefined && NOT_SENT_CODES.has(code)) {
    return new ErpProxyError({
      code: UPSTREAM_UNAVAILABLE,
      message: `Could not connect to the proxy at ${proxyUrl} (${code}). The call did not run; retrying is safe.`,
      httpStatus: 0,
      mayHaveRun: false,
      connectionLost: true,
      id,
      cause: error,
    });
  }
  return new ErpProxyError({
    code: UPSTREAM_TIMEOUT,
    message: `The connection to the proxy failed (${code ?? describeError(error)}). The call may have run: check before retrying.`,
    httpStatus: 0,
    mayHaveRun: true,
    connectionLost: true,
    id,
    cause: error,
  });
}

/** The system error code behind a failed `fetch` (`ECONNREFUSED`...), when there is one. */
function networkCode(error: unknown): string | undefined {
  const cause: unknown = error instanceof Error ? (error.cause ?? error) : error;
  if (typeof cause !== 'object' || cause === null) return undefined;
  const code: unknown = (cause as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // Several addresses tried (localhost: ::1, then 127.0.0.1): an AggregateError of one code each.
  if (cause instanceof AggregateError) {
    const codes = new Set(cause.errors.map((inner) => networkCode(inner)));
    const [only] = codes;
    return codes.size === 1 ? only : undefined;
  }
  return undefined;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

interface EnvelopeError {
  code: number;
  message: string;
  data?: unknown;
}

interface Envelope {
  jsonrpc: '2.0';
  result?: unknown;
  error?: EnvelopeError | null;
}

function isEnvelope(value: unknown): value is Envelope {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const candidate = value as { jsonrpc?: unknown; error?: unknown; result?: unknown };
  if (candidate.jsonrpc !== '2.0' || !('result' in candidate || 'error' in candidate)) return false;
  const error = candidate.error;
  if (error === null || error === undefined) return true;
  if (typeof error !== 'object') return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === 'number' && typeof message === 'string';
}

/**
 * A `Server-Timing` header's metrics with a duration, in milliseconds by name
 * (`erp;dur=12.5, proxy;dur=0.8` is `{ erp: 12.5, proxy: 0.8 }`); `undefined` without any.
 */
export function parseServerTiming(header: string | null | undefined): ServerTiming | undefined {
  if (!header) return undefined;
  const timing: Record<string, number> = {};
  for (const metric of header.split(',')) {
    const [name, ...params] = metric.split(';').map((part) => part.trim());
    const dur = params.find((param) => /^dur\s*=/i.test(param));
    const ms = dur === undefined ? Number.NaN : Number(dur.replace(/^dur\s*=\s*"?|"$/gi, ''));
    if (name && Number.isFinite(ms)) timing[name] = ms;
  }
  return Object.keys(timing).length > 0 ? timing : undefined;
}

/** The `result` of an answer, or the error it reports (naming the answer's request id and timing). */
function readAnswer(response: Response, text: string, id: string, answered: AnsweredBy): unknown {
  const status = response.status;
  const retryAfterSeconds = parseRetryAfter(response.headers.get('retry-after'));
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (isEnvelope(json)) {
    const error = json.error;
    if (error === null || error === undefined) {
      if (status === 200) return json.result ?? null;
    } else if (status === 200 && error.code >= 0) {
      // ERP-side errors come with HTTP 200 (code 0 on v1, the ERP's status on v2); the license
      // error shares code 0 but comes with 403.
      throw new ErpError({ code: error.code, message: error.message, data: error.data, id, ...answered });
    } else {
      throw new ErpProxyError({
        code: error.code,
        message: error.message,
        data: error.data,
        httpStatus: status,
        id,
        retryAfterSeconds,
        ...answered,
      });
    }
  }
  const contentType = response.headers.get('content-type') ?? '';
  if (status === 400 && /^text\/plain/i.test(contentType)) {
    // v2: a body that cannot be decoded into the request shape, answered in plain text.
    return throwError({ code: INVALID_REQUEST, message: text.trim(), httpStatus: 400, id, ...answered });
  }
  return throwError({ ...notAnEnvelope(status, text, id, retryAfterSeconds), ...answered });
}

function throwError(init: ConstructorParameters<typeof ErpProxyError>[0]): never {
  throw new ErpProxyError(init);
}

/**
 * An answer that is not an envelope: API Gateway's own (404 unknown route, 413 body too large,
 * 429 throttled, 500 function timed out), or something in front of the proxy.
 */
function notAnEnvelope(
  status: number,
  text: string,
  id: string,
  retryAfterSeconds: number | undefined,
): ConstructorParameters<typeof ErpProxyError>[0] {
  const shown = `HTTP ${status}${text.length > 0 ? `: ${text.slice(0, 200).trim()}` : ''}`;
  const data = { body: text.slice(0, 4096) };
  if (status === 429) {
    return {
      code: UPSTREAM_UNAVAILABLE,
      message: `The gateway throttled the call (${shown}). The call did not run; retry later.`,
      data,
      httpStatus: status,
      mayHaveRun: false,
      id,
      retryAfterSeconds,
    };
  }
  if (status >= 400 && status < 500) {
    return {
      code: INVALID_REQUEST,
      message: `The proxy refused the request without an envelope (${shown}); check the proxy URL and the request.`,
      data,
      httpStatus: status,
      mayHaveRun: false,
      id,
    };
  }
  return {
    code: BAD_RESPONSE,
    message: `The answer is not an erp-proxy envelope (${shown}). The call may have run: check before retrying.`,
    data,
    httpStatus: status,
    mayHaveRun: true,
    id,
  };
}

function checkVersion(result: unknown): VersionInfo {
  const info = result as Partial<VersionInfo> | null;
  if (typeof info !== 'object' || info === null || !Array.isArray(info.version_info)) {
    throw new ErpProxyError({
      code: BAD_RESPONSE,
      message: 'The version endpoint answered without version_info.',
      data: result,
      httpStatus: 200,
      mayHaveRun: false,
    });
  }
  return info as VersionInfo;
}
