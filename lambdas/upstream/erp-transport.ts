/**
 * @module upstream/erp-transport
 * The port both upstream protocols implement, and what they share: sending one exchange
 * (common headers, timing into the call's meter) and classifying answers that are not ERP
 * answers (redirects, front-proxy errors, HTML pages).
 */

import type { AnswerLease } from '../platform/answer-budget.ts';
import { echoed } from '../platform/bounded-text.ts';
import { monotonicMs } from '../platform/clock.ts';
import {
  BadUpstreamResponseError,
  type ProxyError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '../platform/errors.ts';
import { exceedsDepth, isJsonObject, MAX_JSON_DEPTH } from '../platform/json.ts';
import type { UpstreamProtocol } from '../platform/names.ts';
import { USER_AGENT } from '../platform/package-info.ts';
import { childTraceparent, type TraceContext } from '../platform/trace-context.ts';
import type { ConnectTo, HttpClient, UpstreamResponse } from './http-client.ts';
import { dataWithoutInfrastructure } from './infrastructure-text.ts';

/** One call to a target ERP, protocol-neutral. */
export interface ErpCall {
  readonly baseUrl: URL;
  readonly db: string;
  readonly apiKey: string;
  /**
   * The ERP user id that owns `apiKey`: required on v1, optional on v2 (used only when a v2
   * call to an ERP older than 19 runs over `/jsonrpc`, `ERP_V2_TRANSPORT=auto`).
   */
  readonly uid?: number;
  /**
   * v1 only: the call is one of the 8 standard actions (not `call_method`), whose parameter
   * names the proxy knows without asking the ERP.
   */
  readonly standardAction?: boolean;
  readonly model: string;
  readonly method: string;
  /** v1 only: positional arguments (`params`), the JSON text of an array, as the client wrote it. */
  readonly argsJson?: string;
  /** Named arguments (v1 `keyword`, v2 `kwargs`): the JSON text of an object, as the client wrote it. */
  readonly kwargsJson: string;
}

/** What one call to the ERP produced: a result, or the ERP's own error. */
export type ErpOutcome =
  | { readonly kind: 'result'; readonly value: unknown }
  /** A result passed on as the ERP's own JSON bytes (already validated), never parsed. */
  | { readonly kind: 'raw_result'; readonly json: Buffer }
  | { readonly kind: 'erp_error'; readonly code: number; readonly message: string; readonly data: unknown };

/** What the upstream layer learned about one call, for the request log and the metrics. */
export interface UpstreamFacts {
  /** HTTP status of the last upstream answer. */
  readonly upstreamStatus?: number;
  /** Milliseconds spent waiting on the upstream (sum over exchanges). */
  readonly upstreamMs?: number;
  /** The ERP protocol that served the call (the last one tried). */
  readonly upstreamProtocol?: UpstreamProtocol;
}

/**
 * Adds up the exchanges of one call: created by the core for that call alone (`withCallContext`),
 * fed by `sendExchange` and the transports, and read back once as an {@link UpstreamFacts} value.
 * It is no request state: nothing but the call that created it sees it.
 */
export class UpstreamMeter {
  private status: number | undefined;
  private ms: number | undefined;
  private protocol: UpstreamProtocol | undefined;

  /** `before`: what an earlier phase of the same call measured (an MCP tool's policy-step lookups). */
  constructor(before?: UpstreamFacts) {
    this.status = before?.upstreamStatus;
    this.ms = before?.upstreamMs;
    this.protocol = before?.upstreamProtocol;
  }

  /** The transport about to serve the call. */
  servedBy(protocol: UpstreamProtocol): void {
    this.protocol = protocol;
  }

  /** One exchange: its status when an answer came, and the time it took either way. */
  exchanged(status: number | undefined, ms: number): void {
    if (status !== undefined) this.status = status;
    this.ms = (this.ms ?? 0) + ms;
  }

  facts(): UpstreamFacts {
    const facts: { -readonly [K in keyof UpstreamFacts]: UpstreamFacts[K] } = {};
    if (this.status !== undefined) facts.upstreamStatus = this.status;
    if (this.ms !== undefined) facts.upstreamMs = this.ms;
    if (this.protocol !== undefined) facts.upstreamProtocol = this.protocol;
    return facts;
  }
}

/** Per-request settings every upstream exchange needs. */
export interface CallContext {
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  /** The response will be compressed (the client sent Accept-Encoding: gzip or br). */
  readonly compressedResponse: boolean;
  /** The client's source IP, sent as `X-Forwarded-For`. */
  readonly clientIp: string | undefined;
  /** The request's trace: each exchange carries a `traceparent` continuing it (and its `tracestate`). */
  readonly trace?: TraceContext | undefined;
  /** Remove `debug` (server tracebacks) from ERP error data. */
  readonly stripDebug: boolean;
  /** Every exchange of this request only reads (the version endpoints). */
  readonly readOnly?: boolean;
  /** The invocation's share of the local server's memory for ERP answers; none on Lambda. */
  readonly answerLease?: AnswerLease;
  /** What this call's exchanges add up to (its status, time and protocol). */
  readonly meter: UpstreamMeter;
  /** Where its connections go: the DNS answer the limits counted it by (core/limits-check.ts); none: where the URL leads. */
  readonly connectTo?: ConnectTo;
}

/** v1 (`/jsonrpc` execute_kw) and v2 (JSON-2) are two implementations of this. */
export interface ErpTransport {
  call(call: ErpCall, context: CallContext): Promise<ErpOutcome>;
  /** The target's version as last learned (a cache key part), if the transport keeps one. */
  knownVersion?(baseUrl: URL): string | undefined;
}

/** Where an exchange goes: the target's URL (parsed once, from the request) and the path on it. */
export interface Endpoint {
  readonly base: URL;
  /** The base URL's path prefix (without trailing slashes) and the endpoint's path. */
  readonly path: string;
}

/** Appends a path to a base URL that may itself have a path prefix; the base's query is dropped. */
export function upstreamUrl(base: URL, path: string): Endpoint {
  return { base, path: `${base.pathname.replace(/\/+$/, '')}${path}` };
}

export interface Exchange {
  readonly method: 'GET' | 'POST';
  readonly url: Endpoint;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** A value that can be sent as an HTTP header value unchanged: visible ASCII, inner spaces only. */
export const HEADER_SAFE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * Longest value the proxy puts in a header it builds from the request (`X-Odoo-Database`,
 * `Authorization`): servers refuse header lines over 8 KB or so with 431, which would look like
 * an ERP failure after sending.
 */
export const MAX_HEADER_VALUE_LENGTH = 4096;

/**
 * The `X-Odoo-Database` header for a database name, or none when the name cannot travel in a
 * header as it is. On `/jsonrpc` the header only spares the ERP a database listing per request
 * (a new PostgreSQL connection each time on a host with several databases); the `db` argument
 * still decides the database, so a call without the header works the same, only slower.
 */
export function databaseHeader(db: string | undefined): Record<string, string> {
  return db !== undefined && db.length <= MAX_HEADER_VALUE_LENGTH && HEADER_SAFE.test(db)
    ? { 'x-odoo-database': db }
    : {};
}

/**
 * Sends one exchange with the headers every upstream call carries (the request's trace continued
 * with a new span id; never the caller's `baggage`); records status and time.
 */
export async function sendExchange(
  client: HttpClient,
  context: CallContext,
  exchange: Exchange,
): Promise<UpstreamResponse> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    'user-agent': USER_AGENT,
    ...(context.clientIp ? { 'x-forwarded-for': context.clientIp } : {}),
    ...(exchange.headers ?? {}),
  };
  const { trace } = context;
  if (trace !== undefined) {
    headers.traceparent = childTraceparent(trace);
    if (trace.state !== undefined) headers.tracestate = trace.state;
  }
  const started = monotonicMs();
  let status: number | undefined;
  try {
    const response = await client.send({
      method: exchange.method,
      url: exchange.url.base,
      path: exchange.url.path,
      headers,
      ...(exchange.body === undefined ? {} : { body: exchange.body }),
      signal: context.signal,
      timeoutMs: context.timeoutMs,
      maxResponseBytes: context.maxResponseBytes,
      compressedResponse: context.compressedResponse,
      ...(context.readOnly ? { readOnly: true } : {}),
      ...(context.answerLease ? { answerLease: context.answerLease } : {}),
      ...(context.connectTo ? { connectTo: context.connectTo } : {}),
    });
    status = response.status;
    return response;
  } finally {
    context.meter.exchanged(status, monotonicMs() - started);
  }
}

export type JsonBody = { readonly ok: true; readonly value: unknown } | { readonly ok: false };

/** Parses a JSON body; an empty or non-JSON body is `{ok: false}`. */
export function parseJsonBody(response: UpstreamResponse): JsonBody {
  if (response.body.length === 0) return { ok: false };
  let value: unknown;
  try {
    value = JSON.parse(response.body.toString('utf8'));
  } catch {
    return { ok: false };
  }
  if (exceedsDepth(value)) throw new TooDeepAnswerError();
  return { ok: true, value };
}

/** -32005 for a JSON answer nested too deep to pass on: JSON, so no sign of a wrong URL. */
export class TooDeepAnswerError extends BadUpstreamResponseError {
  constructor() {
    super(`The ERP answer nests deeper than ${MAX_JSON_DEPTH} levels; the proxy cannot pass it on.`);
  }
}

/** `HTTP 404 text/html ("404 Not Found")`: what came back, without echoing the whole body. */
export function describeAnswer(response: UpstreamResponse): string {
  // The target chose it: repeated only as far as any supplied name is.
  const type = echoed((response.headers['content-type'] ?? 'no content type').split(';')[0]?.trim() ?? '');
  const text = response.body.subarray(0, 4096).toString('utf8');
  const title = /<title>([^<]{1,80})<\/title>/i.exec(text)?.[1]?.trim();
  return `HTTP ${response.status} ${type}${title ? ` ("${title}")` : ''}`;
}

function retryAfter(response: UpstreamResponse): Record<string, string> {
  const value = response.headers['retry-after'];
  return value && /^[\w ,:+-]{1,64}$/.test(value) ? { 'Retry-After': value } : {};
}

/**
 * -32005 for a redirect: what came back (`answered`), then the advice to use the URL it leads to.
 * Where the URL has a path, the path hint takes the advice's place (`path-hint.ts`): the redirect
 * then comes from a page of the ERP's web client, whose final URL is no ERP endpoint either.
 */
export class RedirectAnswerError extends BadUpstreamResponseError {
  /** The sentence that says what came back, without the advice. */
  readonly answered: string;

  constructor(answered: string) {
    super(`${answered} Use the final URL as erp_instance.url (often https:// instead of http://).`);
    this.answered = answered;
  }
}

/**
 * Answers that are about the path to the ERP rather than from it: redirects (never followed),
 * and errors a front proxy or the ERP's own overload protection sends. `undefined` otherwise.
 */
export function classifyGatewayAnswer(response: UpstreamResponse): ProxyError | undefined {
  const { status } = response;
  if (status >= 300 && status < 400) {
    const location = response.headers.location;
    return new RedirectAnswerError(
      `The ERP answered with a redirect (HTTP ${status}${location ? ` to ${echoed(location)}` : ''}); ` +
        'redirects are not followed.',
    );
  }
  if (status === 429 || status === 503) {
    const hint = retryAfter(response);
    return new UpstreamUnavailableError(
      `The ERP is busy or unavailable (HTTP ${status}). The call did not run; retry later` +
        (hint['Retry-After'] ? ` (Retry-After: ${hint['Retry-After']}).` : '.'),
      { headers: hint },
    );
  }
  if (status === 502) {
    return new UpstreamUnavailableError(
      'A proxy in front of the ERP answered HTTP 502 (bad gateway): it could not reach the ERP. ' +
        'The call did not run; retrying is safe.',
      { headers: retryAfter(response) },
    );
  }
  if (status === 504) {
    return new UpstreamTimeoutError(
      'A proxy in front of the ERP answered HTTP 504 (gateway timeout). The call may have run on the ERP: check before retrying.',
    );
  }
  return undefined;
}

/**
 * ERP error data as the proxy passes it on: without the ERP's database server address
 * (`infrastructure-text.ts`), and without `debug` (a server traceback) when configured to.
 */
export function scrubErrorData(data: unknown, stripDebug: boolean): unknown {
  if (!isJsonObject(data)) return data ?? null;
  const clean = dataWithoutInfrastructure(data);
  if (!stripDebug || !('debug' in clean)) return clean;
  const { debug: _debug, ...rest } = clean;
  return rest;
}
