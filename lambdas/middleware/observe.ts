/**
 * @module middleware/observe
 * The request log line, the request metrics and the answer's `Request-Id` and `Server-Timing`
 * headers: the edge. The chain builder (`handlers/chain.ts`)
 * always registers it first: its `before` creates the request's record (`context.record`), into
 * which the chain merges what each step, the handler and the envelope middleware return
 * (`middleware/step.ts`, `learn`), and its `after` / `onError` run LAST and assemble the line and
 * the metrics from those facts. It is the record's one reader. Its `before` also reads the caller's
 * W3C `traceparent` (or starts a trace) and opens the request's store meter: both go to the chain's
 * steps as values (`Observed`), and the edge hands them to the core.
 *
 * One structured line per request (message `request`), never a body, `params`, `keyword`,
 * `kwargs` or a result; the Logger redacts secret-looking keys anyway. This middleware never
 * throws: a logging or metrics failure must not change a response.
 *
 * Middy skips the remaining `after` (and `onError`) middlewares when one of them returns a value,
 * and skips the handler and all `after` middlewares when a `before` returns one; the steps the
 * chain builder adds return nothing to Middy (`middleware/step.ts`), so this one always runs.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import {
  type ApiName,
  type ConfirmationOutcome,
  emptyFacts,
  type IdempotencyOutcome,
  type Outcome,
  type ProxyContext,
  type RequestFacts,
  type RequestRecord,
  StoreMeter,
} from '../core/request-facts.ts';
import { monotonicMs } from '../platform/clock.ts';
import { PROXY_ERRORS } from '../platform/error-table.ts';
import { InternalError, ProxyError } from '../platform/errors.ts';
import type { KeyPolicyRule } from '../platform/key-policy.ts';
import type { LimitRule } from '../platform/limits.ts';
import { truncateForLog } from '../platform/logger.ts';
import { type RequestMetrics, recordRequest, roundMs } from '../platform/metrics/record.ts';
import type { UpstreamProtocol } from '../platform/names.ts';
import { withReadableStack } from '../platform/stack-trace.ts';
import { newTrace, parseTraceparent } from '../platform/trace-context.ts';

export interface ObserveOptions {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly api: ApiName;
  /** Answers carry `Server-Timing` (execute and MCP, unless `SERVER_TIMING=off`). */
  readonly serverTiming?: boolean;
}

type ObserveRequest = middy.Request<APIGatewayProxyEventV2, APIGatewayProxyResultV2, Error, ProxyContext>;

/**
 * The fields of the request log line, snake_case. `null` means unknown or not applicable; Powertools
 * leaves such keys out of the printed line (it drops `null`, `undefined` and `''` values).
 *
 * The `function_*` fields carry the request's own Lambda context. Powertools prints the same keys
 * from the context last given to `logger.addContext`, which the local server's concurrent requests
 * share on one Logger; explicit fields override those (same keys, same place in the line). Only
 * `cold_start` comes from Powertools: it is per execution environment, not per request.
 */
export type RequestLogFields = {
  function_request_id: string | null;
  function_name: string | null;
  function_arn: string | null;
  function_memory_size: string | number | null;
  envelope_id: string | null;
  request_id: string | null;
  /** The call's W3C trace id: the caller's `traceparent`'s, or one the proxy started (docs/operators-observability.md, "Tracing"). */
  trace_id: string | null;
  /** The API Gateway route (`POST /v2/erp/version`): which path and alias the client used. */
  route: string | null;
  api: ApiName;
  action: string | null;
  model: string | null;
  erp_host: string | null;
  erp_db: string | null;
  caller: string | null;
  upstream_status: number | null;
  /** The ERP protocol that served the call: `jsonrpc` or `json2` (README, "One envelope for every ERP version"). */
  upstream_protocol: UpstreamProtocol | null;
  upstream_ms: number | null;
  /** Milliseconds waited on the state store or the audit's store (`Server-Timing`'s `store`). */
  store_ms: number | null;
  duration_ms: number;
  outcome: Outcome;
  error_code: number | null;
  http_status: number | null;
  response_bytes: number | null;
  /** `POST /mcp`: the MCP message's JSON-RPC method (`initialize`, `tools/list`, `tools/call`...). */
  mcp_method: string | null;
  /** `POST /mcp`: the tool a `tools/call` ran. */
  tool: string | null;
  /** The rule of the caller key's policy that refused the call (README, "Key policies"). */
  policy_rule: KeyPolicyRule | null;
  /** The limit that refused the call (README, "Limits"): `key_minute`, `person_second`, `erp_in_flight`... */
  limit_rule: LimitRule | null;
  /** The configured ERP host of that limit, for an ERP's limit. */
  limit_host: string | null;
  /** `true`: limits applied but the store could not be asked, and the call was served (fail open). */
  limits_failed_open: boolean | null;
  /** The operator's brake that stopped the call (-32012). */
  brake_id: string | null;
  /** What the call's `Idempotency-Key` did: `recorded`, `replayed`, `in_progress`, `key_reused`... (README, "Retrying writes safely"). */
  idempotency: IdempotencyOutcome | null;
  /** How a person's confirmation of an MCP write ended: `asked`, `accepted`, `declined`... (docs/guide/confirmations.md). */
  confirmation: ConfirmationOutcome | null;
  /** The call's audit record (docs/guide/audit.md): `GET /_/audit` finds it by this id. */
  audit_id: string | null;
  /** Writes of that record that failed (`AuditWriteFailures`), and why (the store's first words). */
  audit_write_failures: number | null;
  audit_error: string | null;
};

/** `InternalError`: a bug, logged at ERROR with its stack. */
const INTERNAL_ERROR_CODE = PROXY_ERRORS.internal.code;

function nonEmptyString(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** A value the caller chose, as the log line holds it: bounded (`truncateForLog`). */
function callerValue(value: string | null | undefined): string | null {
  return value === null || value === undefined ? null : truncateForLog(value);
}

/** The request's own Lambda context values, as Powertools names them in a log line. */
function lambdaContextFields(
  context: Partial<ProxyContext> | undefined,
): Pick<RequestLogFields, 'function_request_id' | 'function_name' | 'function_arn' | 'function_memory_size'> {
  // `memoryLimitInMB` is a string in a real context; Powertools prints it as given.
  const memory: unknown = context?.memoryLimitInMB;
  return {
    function_request_id: nonEmptyString(context?.awsRequestId),
    function_name: nonEmptyString(context?.functionName),
    function_arn: nonEmptyString(context?.invokedFunctionArn),
    function_memory_size: typeof memory === 'string' || typeof memory === 'number' ? memory : null,
  };
}

function requestIdOf(event: APIGatewayProxyEventV2 | undefined): string | null {
  const id = event?.requestContext?.requestId;
  return typeof id === 'string' && id !== '' ? id : null;
}

/** HTTP status of the response; a payload-2.0 result without `statusCode` is a 200. */
function httpStatusOf(response: APIGatewayProxyResultV2 | null | undefined, error: unknown): number | null {
  if (response !== null && response !== undefined) {
    if (typeof response === 'object' && typeof response.statusCode === 'number') return response.statusCode;
    return 200;
  }
  if (error instanceof ProxyError) return error.httpStatus;
  // Any other error is answered as an InternalError.
  return error ? PROXY_ERRORS.internal.httpStatus : null;
}

function bodyBytesOf(response: APIGatewayProxyResultV2 | null | undefined): number | null {
  if (typeof response === 'string') return Buffer.byteLength(response);
  if (response && typeof response === 'object' && typeof response.body === 'string') {
    return Buffer.byteLength(response.body);
  }
  return null;
}

/**
 * The `Server-Timing` value (W3C Server Timing) of an answer: the ERP's part, the stores' when they
 * were used, and the proxy's own, the rest of `durationMs`.
 */
export function serverTimingOf(durationMs: number, upstreamMs?: number, storeMs?: number): string {
  const proxyMs = roundMs(Math.max(0, durationMs - (upstreamMs ?? 0) - (storeMs ?? 0)));
  return (
    (upstreamMs === undefined ? '' : `erp;dur=${roundMs(upstreamMs)}, `) +
    (storeMs === undefined ? '' : `store;dur=${roundMs(storeMs)}, `) +
    `proxy;dur=${proxyMs}`
  );
}

/**
 * The error whose stack goes into the log line: for an `InternalError`, the original error it
 * wraps; for any other non-`ProxyError`, the error itself; `undefined` for an expected
 * `ProxyError` (its code says all). A thrown non-Error is described by its type only, since
 * its contents could be anything.
 */
function errorToLog(error: unknown): Error | undefined {
  if (error === null || error === undefined) return undefined;
  if (error instanceof InternalError)
    return withReadableStack(error.cause instanceof Error ? error.cause : error);
  if (error instanceof ProxyError) return undefined;
  if (error instanceof Error) return withReadableStack(error);
  return new Error(`a non-Error value was thrown (${typeof error})`);
}

function lastResort(what: string, error: unknown): void {
  try {
    const name = error instanceof Error ? error.name : typeof error;
    process.stderr.write(`erp-proxy: observe: ${what} failed (${name})\n`);
  } catch {
    // Nothing left to report to.
  }
}

/**
 * The facts the metrics read (RequestMetrics names them as the facts do), and the decided outcome.
 * Named one by one, not a spread of the facts: a spread of that many members costs microseconds on
 * every request (the handler overhead's budget, BENCHMARKS.md). Every member of RequestMetrics is
 * named: one added there and forgotten here fails to compile.
 */
function requestMetricsOf(
  api: RequestMetrics['api'],
  outcome: RequestMetrics['outcome'],
  errorCode: number | undefined,
  facts: RequestFacts,
): RequestMetrics {
  return {
    api,
    outcome,
    errorCode,
    upstreamMs: facts.upstreamMs,
    responseBytes: facts.responseBytes,
    upstreamProtocol: facts.upstreamProtocol,
    tool: facts.tool,
    callerKeyName: facts.callerKeyName,
    policyRule: facts.policyRule,
    limitRule: facts.limitRule,
    limitHost: facts.limitHost,
    limitsFailedOpen: facts.limitsFailedOpen,
    brake: facts.brake,
    idempotency: facts.idempotency,
    confirmation: facts.confirmation,
    auditOutcome: facts.auditOutcome,
    auditWriteFailures: facts.auditWriteFailures,
  } satisfies Record<keyof RequestMetrics, unknown>;
}

/** What the request line says of a request's end (observe's `reportRequest` decided it). */
interface RequestEnd {
  readonly requestId: string | null;
  readonly storeMs: number | undefined;
  readonly durationMs: number;
  readonly outcome: Outcome;
  readonly errorCode: number | undefined;
  readonly httpStatus: number | null;
  readonly response: ObserveRequest['response'];
}

/** The fields of a request's log line: never a key, never params, kwargs or a result. */
function requestLine(request: ObserveRequest, record: RequestRecord, end: RequestEnd): RequestLogFields {
  const { facts } = record;
  const { requestId, storeMs, durationMs, outcome, errorCode, httpStatus, response } = end;
  return {
    ...lambdaContextFields(request.context),
    envelope_id: callerValue(facts.envelopeId),
    request_id: requestId,
    trace_id: facts.traceId ?? null,
    route: nonEmptyString(request.event?.routeKey),
    api: record.api,
    action: callerValue(facts.action),
    model: callerValue(facts.model),
    erp_host: callerValue(facts.erpHost),
    erp_db: callerValue(facts.erpDb),
    caller: facts.callerKeyName ?? null,
    upstream_status: facts.upstreamStatus ?? null,
    upstream_protocol: facts.upstreamProtocol ?? null,
    upstream_ms: facts.upstreamMs === undefined ? null : roundMs(facts.upstreamMs),
    store_ms: storeMs === undefined ? null : roundMs(storeMs),
    duration_ms: roundMs(durationMs),
    outcome,
    error_code: errorCode ?? null,
    http_status: httpStatus,
    response_bytes: facts.responseBytes ?? bodyBytesOf(response),
    mcp_method: callerValue(facts.mcpMethod),
    tool: facts.tool ?? null,
    policy_rule: facts.policyRule ?? null,
    limit_rule: facts.limitRule ?? null,
    limit_host: facts.limitHost ?? null,
    limits_failed_open: facts.limitsFailedOpen ?? null,
    brake_id: facts.brake?.id ?? null,
    idempotency: facts.idempotency ?? null,
    confirmation: facts.confirmation ?? null,
    audit_id: facts.auditId ?? null,
    audit_write_failures: facts.auditWriteFailures ?? null,
    audit_error: facts.auditError ?? null,
  };
}

/**
 * Observability middleware factory. `before` creates `context.record`, gives the Logger the
 * Lambda context (for `cold_start`) and sets the API Gateway request id as its correlation id;
 * `after` and `onError` write the request line, record the metrics and publish them.
 *
 * Outcome and error code: the envelope helpers always return both. The fallbacks below (for a
 * chain that failed before the envelope middleware could) are the only ones; `recordRequest`
 * takes what this middleware decided.
 *
 * @example
 * // What the chain builder (handlers/chain.ts) does first for every chain:
 * middy<ProxyEvent, LambdaResponse, Error, ProxyContext>()
 *   .use(observe({ logger, metrics, api: 'v1' }))
 *   .use(envelopeMiddleware('v1'))
 */
export function observe(
  options: ObserveOptions,
): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyResultV2, Error, ProxyContext> {
  const { logger, metrics, api, serverTiming } = options;
  /** Records already reported, so a request is never logged twice (after throwing into onError). */
  const reported = new WeakSet<RequestRecord>();

  const observeBefore = (request: ObserveRequest): void => {
    const headers = request.event?.headers;
    const trace = (headers && parseTraceparent(headers.traceparent, headers.tracestate)) || newTrace();
    const storeMeter = new StoreMeter();
    const facts = emptyFacts();
    facts.traceId = trace.traceId;
    request.context.record = {
      api,
      startedAt: monotonicMs(),
      facts,
      values: { trace, storeMeter },
      storeMeter,
    };
    try {
      // Once per request: `addContext` also flips Powertools' cold-start flag. The request line
      // writes this request's own context values explicitly (the Logger is shared locally).
      if (typeof request.context.awsRequestId === 'string') logger.addContext(request.context);
      const requestId = requestIdOf(request.event);
      if (requestId !== null) logger.setCorrelationId(requestId);
    } catch (error) {
      lastResort('setting the Lambda context and correlation id', error);
    }
  };

  const observeAfter = (request: ObserveRequest): void => {
    try {
      reportRequest(request);
    } catch (error) {
      lastResort('reporting the request', error);
    }
  };

  const reportRequest = (request: ObserveRequest): void => {
    let record = request.context?.record;
    if (record === undefined) {
      // `before` did not run (the middleware was registered after one that returned early).
      record = {
        api,
        startedAt: monotonicMs(),
        facts: emptyFacts(),
        values: {},
        storeMeter: new StoreMeter(),
      };
    }
    if (reported.has(record)) return;
    reported.add(record);

    const durationMs = Math.max(0, monotonicMs() - record.startedAt);
    const facts: RequestFacts = record.facts;
    const storeMs = record.storeMeter.ms;
    const requestId = requestIdOf(request.event);
    // A bug an MCP tool answered as its result (facts.internalError) is logged like a thrown one.
    const error: unknown = request.error ?? facts.internalError ?? undefined;
    let response = request.response;
    if (typeof response === 'object' && response !== null) {
      // Copies: a handler's answer may be shared (a constant), and its headers with it. Object.assign,
      // not spreads: spreading the headers and adding two took 4.4 µs on Node 20 here, this 0.08 µs.
      const headers: Record<string, string | number | boolean> = Object.assign({}, response.headers);
      if (requestId !== null) headers['request-id'] = requestId;
      if (serverTiming) headers['server-timing'] = serverTimingOf(durationMs, facts.upstreamMs, storeMs);
      response = request.response = Object.assign({}, response, { headers });
    }
    const httpStatus = httpStatusOf(response, error);
    // The one fallback for a chain whose envelope middleware did not set these.
    const errorCode =
      facts.errorCode ??
      (error === undefined ? undefined : error instanceof ProxyError ? error.code : INTERNAL_ERROR_CODE);
    const outcome: Outcome =
      facts.outcome ?? (error !== undefined || (httpStatus ?? 200) >= 400 ? 'proxy_error' : 'success');

    try {
      // Set again right before the line: locally, concurrent requests share the Logger.
      if (requestId !== null) logger.setCorrelationId(requestId);
      const fields = requestLine(request, record, {
        requestId,
        storeMs,
        durationMs,
        outcome,
        errorCode,
        httpStatus,
        response,
      });
      const stackError = errorToLog(error);
      const extra = stackError === undefined ? fields : { ...fields, error: stackError };
      if (errorCode === INTERNAL_ERROR_CODE) logger.error('request', extra);
      else if (
        outcome === 'proxy_error' ||
        facts.limitsFailedOpen === true ||
        facts.auditWriteFailures !== undefined
      )
        logger.warn('request', extra);
      else logger.info('request', extra);
    } catch (logError) {
      lastResort('writing the request log line', logError);
    }

    try {
      recordRequest(metrics, requestMetricsOf(record.api, outcome, errorCode, facts), durationMs);
      metrics.publishStoredMetrics();
    } catch (metricsError) {
      try {
        metrics.clearMetrics();
        metrics.clearDimensions();
      } catch {
        // Ignored: the next publish clears them too.
      }
      lastResort('recording metrics', metricsError);
    }
  };

  return { before: observeBefore, after: observeAfter, onError: observeAfter };
}
