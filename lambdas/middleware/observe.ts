/**
 * @module middleware/observe
 * The request log line and the request metrics. Register it FIRST in every chain: its `before`
 * creates the per-request state (`context.proxy`) that the other middlewares fill in, and its
 * `after` / `onError` run LAST, once the envelope middleware has set the response and the
 * outcome, error code and response size.
 *
 * One structured line per request (message `request`), never a body, `params`, `keyword`,
 * `kwargs` or a result; the Logger redacts secret-looking keys anyway. This middleware never
 * throws: a logging or metrics failure must not change a response.
 *
 * Middy skips the remaining `after` (and `onError`) middlewares when one of them returns a value,
 * and skips the handler and all `after` middlewares when a `before` returns one; middlewares in
 * these chains set `request.response` instead of returning it, so this one always runs.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import type { ApiName, Outcome, ProxyContext, RequestState } from '../core/request-state.ts';
import { PROXY_ERRORS } from '../platform/error-table.ts';
import { InternalError, ProxyError } from '../platform/errors.ts';
import { truncateForLog } from '../platform/logger.ts';
import { recordRequest, roundMs } from '../platform/metrics/record.ts';
import type { McpToolName, UpstreamProtocol } from '../platform/names.ts';

export interface ObserveOptions {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly api: ApiName;
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
  duration_ms: number;
  outcome: Outcome;
  error_code: number | null;
  http_status: number | null;
  response_bytes: number | null;
  /** `POST /mcp`: the MCP message's JSON-RPC method (`initialize`, `tools/list`, `tools/call`...). */
  mcp_method: string | null;
  /** `POST /mcp`: the tool a `tools/call` ran. */
  tool: McpToolName | null;
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
 * The error whose stack goes into the log line: for an `InternalError`, the original error it
 * wraps; for any other non-`ProxyError`, the error itself; `undefined` for an expected
 * `ProxyError` (its code says all). A thrown non-Error is described by its type only, since
 * its contents could be anything.
 */
function errorToLog(error: unknown): Error | undefined {
  if (error === null || error === undefined) return undefined;
  if (error instanceof InternalError) return error.cause instanceof Error ? error.cause : error;
  if (error instanceof ProxyError) return undefined;
  if (error instanceof Error) return error;
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
 * Observability middleware factory. `before` creates `context.proxy`, gives the Logger the
 * Lambda context (for `cold_start`) and sets the API Gateway request id as its correlation id;
 * `after` and `onError` write the request line, record the metrics and publish them.
 *
 * Outcome and error code: the envelope helpers always set both. The fallbacks below (for a
 * chain that failed before the envelope middleware could) are the only ones; `recordRequest`
 * takes what this middleware decided.
 *
 * @example
 * const handler = middy<APIGatewayProxyEventV2, LambdaResponse, Error, ProxyContext>()
 *   .use(observe({ logger, metrics, api: 'v1' }))
 *   .use(envelopeMiddleware())
 *   .handler(executeV1);
 */
export function observe(
  options: ObserveOptions,
): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyResultV2, Error, ProxyContext> {
  const { logger, metrics, api } = options;
  /** States already reported, so a request is never logged twice (after throwing into onError). */
  const reported = new WeakSet<RequestState>();

  const observeBefore = (request: ObserveRequest): void => {
    const state: RequestState = { api, startedAt: performance.now(), envelopeId: null };
    request.context.proxy = state;
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
    let state = request.context?.proxy;
    if (state === undefined) {
      // `before` did not run (the middleware was registered after one that returned early).
      state = { api, startedAt: performance.now(), envelopeId: null };
    }
    if (reported.has(state)) return;
    reported.add(state);

    const durationMs = Math.max(0, performance.now() - state.startedAt);
    // A bug an MCP tool answered as its result (state.internalError) is logged like a thrown one.
    const error: unknown = request.error ?? state.internalError ?? undefined;
    const response = request.response;
    const httpStatus = httpStatusOf(response, error);
    // The one fallback for a chain whose envelope middleware did not set these.
    const errorCode =
      state.errorCode ??
      (error === undefined ? undefined : error instanceof ProxyError ? error.code : INTERNAL_ERROR_CODE);
    const outcome: Outcome =
      state.outcome ?? (error !== undefined || (httpStatus ?? 200) >= 400 ? 'proxy_error' : 'success');

    try {
      const requestId = requestIdOf(request.event);
      // Set again right before the line: locally, concurrent requests share the Logger.
      if (requestId !== null) logger.setCorrelationId(requestId);
      const fields: RequestLogFields = {
        ...lambdaContextFields(request.context),
        envelope_id: callerValue(state.envelopeId),
        request_id: requestId,
        route: nonEmptyString(request.event?.routeKey),
        api: state.api,
        action: callerValue(state.action),
        model: callerValue(state.model),
        erp_host: callerValue(state.erpHost),
        erp_db: callerValue(state.erpDb),
        caller: state.callerKeyName ?? null,
        upstream_status: state.upstreamStatus ?? null,
        upstream_protocol: state.upstreamProtocol ?? null,
        upstream_ms: state.upstreamMs === undefined ? null : roundMs(state.upstreamMs),
        duration_ms: roundMs(durationMs),
        outcome,
        error_code: errorCode ?? null,
        http_status: httpStatus,
        response_bytes: state.responseBytes ?? bodyBytesOf(response),
        mcp_method: callerValue(state.mcpMethod),
        tool: state.tool ?? null,
      };
      const stackError = errorToLog(error);
      const extra = stackError === undefined ? fields : { ...fields, error: stackError };
      if (errorCode === INTERNAL_ERROR_CODE) logger.error('request', extra);
      else if (outcome === 'proxy_error') logger.warn('request', extra);
      else logger.info('request', extra);
    } catch (logError) {
      lastResort('writing the request log line', logError);
    }

    try {
      recordRequest(metrics, { ...state, outcome, errorCode }, durationMs);
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
