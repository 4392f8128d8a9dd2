/**
 * @module core/envelope
 * The response envelope `{jsonrpc, id, result, error}` and the HTTP responses built from it.
 * `errorResponse` is the one mapping from errors to responses: a `ProxyError` keeps its code,
 * status and message; anything else is a bug and becomes -32603 with nothing internal shown.
 * What happens to a response last (compression, the 6 MB limit) is in `response-encoding.ts`.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { wrapBytes } from '../platform/buffers.ts';
import { InternalError, ProxyError } from '../platform/errors.ts';
import type { ErpOutcome } from '../upstream/erp-transport.ts';
import type { ApiName, RequestFacts } from './request-facts.ts';

export type LambdaResponse = APIGatewayProxyStructuredResultV2 & {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  /**
   * The body as bytes, when it was assembled from the ERP's raw answer; `finalizeResponse`
   * turns it into `body` (text or compressed base64) and removes it.
   */
  bodyBytes?: Buffer;
};

/** A response and what producing it taught: what the handlers, the endpoints and these helpers return. */
export interface Answer {
  readonly response: LambdaResponse;
  readonly facts: RequestFacts;
}

export interface EnvelopeError {
  readonly code: number;
  readonly message: string;
  readonly data: unknown;
}

export interface Envelope {
  readonly jsonrpc: '2.0';
  readonly id: string | null;
  readonly result: unknown;
  readonly error: EnvelopeError | null;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';

export function envelope(
  id: string | null,
  outcome: Exclude<ErpOutcome, { kind: 'raw_result' }> | EnvelopeError,
): Envelope {
  if ('kind' in outcome && outcome.kind === 'result') {
    return { jsonrpc: '2.0', id, result: outcome.value ?? null, error: null };
  }
  return {
    jsonrpc: '2.0',
    id,
    result: null,
    error: { code: outcome.code, message: outcome.message, data: outcome.data ?? null },
  };
}

function jsonResponse(
  statusCode: number,
  body: unknown,
  headers: Record<string, string> = {},
): LambdaResponse {
  return { statusCode, headers: { 'content-type': JSON_TYPE, ...headers }, body: JSON.stringify(body) };
}

const SUCCESS = Object.freeze({ outcome: 'success' as const });

/** The HTTP 200 response for a call that reached the ERP (successful or ERP-side error). */
export function outcomeResponse(envelopeId: string | null, outcome: ErpOutcome): Answer {
  if (outcome.kind === 'raw_result') {
    // The same bytes JSON.stringify(envelope) would give, with the ERP's JSON spliced in as is.
    const bodyBytes = wrapBytes(
      Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(envelopeId)},"result":`, 'utf8'),
      outcome.json,
      Buffer.from(',"error":null}', 'utf8'),
    );
    return {
      response: { statusCode: 200, headers: { 'content-type': JSON_TYPE }, body: '', bodyBytes },
      facts: SUCCESS,
    };
  }
  return {
    response: jsonResponse(200, envelope(envelopeId, outcome)),
    facts: outcome.kind === 'erp_error' ? erpErrorFacts(outcome) : SUCCESS,
  };
}

/** The facts of the ERP's own error: its code and exception name (`data.name`). */
function erpErrorFacts(outcome: Extract<ErpOutcome, { kind: 'erp_error' }>): RequestFacts {
  const data = outcome.data as { readonly name?: unknown } | null | undefined;
  const name =
    data !== null && typeof data === 'object' && typeof data.name === 'string' ? data.name : undefined;
  return {
    outcome: 'erp_error',
    errorCode: outcome.code,
    ...(name === undefined ? {} : { erpException: name.slice(0, 200) }),
  };
}

/** A JSON body that is not an envelope (`/_/license`, `/_/about`). */
export function plainJsonResponse(body: unknown): Answer {
  return { response: jsonResponse(200, body), facts: SUCCESS };
}

/** A non-JSON success body (`/_/metrics`). */
export function textResponse(body: string, contentType: string): Answer {
  return { response: { statusCode: 200, headers: { 'content-type': contentType }, body }, facts: SUCCESS };
}

/** What an error response needs of the request: the API (its shape) and the envelope `id` to echo. */
export interface ErrorShape {
  readonly api: ApiName;
  readonly envelopeId: string | null;
}

/**
 * The one place an error becomes a response: an envelope, plain text (the error table says when),
 * or on `POST /mcp` a JSON-RPC error response (README, "Agents (MCP)"). Its facts: the outcome and
 * code (the facts the error carries are the edge's to merge).
 */
export function errorResponse(shape: ErrorShape, error: unknown): Answer {
  const proxyError = error instanceof ProxyError ? error : new InternalError(error);
  return {
    response: errorBody(shape, proxyError),
    facts: { outcome: 'proxy_error', errorCode: proxyError.code },
  };
}

function errorBody(shape: ErrorShape, proxyError: ProxyError): LambdaResponse {
  if (proxyError.row.answer === 'text') {
    // The error table says which errors are no envelope: a v2 body that cannot be decoded is
    // answered in plain text (README, "Responses and errors").
    return {
      statusCode: proxyError.httpStatus,
      headers: { 'content-type': TEXT_TYPE },
      body: `${proxyError.message}\n`,
    };
  }
  if (shape.api === 'mcp') {
    // `POST /mcp` speaks JSON-RPC as MCP does: an error response has no `result` member, and the
    // id is null (the failure came before the message was read).
    return jsonResponse(
      proxyError.httpStatus,
      { jsonrpc: '2.0', id: null, error: { code: proxyError.code, message: proxyError.message } },
      { ...proxyError.headers },
    );
  }
  return jsonResponse(
    proxyError.httpStatus,
    envelope(shape.envelopeId, {
      code: proxyError.code,
      message: proxyError.message,
      data: proxyError.data,
    }),
    { ...proxyError.headers },
  );
}
