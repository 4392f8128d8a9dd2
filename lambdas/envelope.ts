/**
 * @module envelope
 * The response envelope `{jsonrpc, id, result, error}` and the HTTP responses built from it.
 * `errorResponse` is the one mapping from errors to responses: a `ProxyError` keeps its code,
 * status and message; anything else is a bug and becomes -32603 with nothing internal shown.
 */
import { brotliCompressSync, gzipSync, constants as zlibConstants } from 'node:zlib';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { LAMBDA_RESPONSE_LIMIT_BYTES } from './config.ts';
import { InternalError, ProxyError, ResponseTooLargeError, V2RequestShapeError } from './errors.ts';
import type { RequestState } from './request-state.ts';

export type LambdaResponse = APIGatewayProxyStructuredResultV2 & {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
};

/** What an execute or version call produced, before it becomes an envelope. */
export type ProxyOutcome =
  | { readonly kind: 'result'; readonly value: unknown }
  | { readonly kind: 'erp_error'; readonly code: number; readonly message: string; readonly data: unknown };

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

/** Room kept for the API Gateway payload wrapper and headers when checking the 6 MB limit. */
const RESPONSE_OVERHEAD_BYTES = 8 * 1024;
/** Bodies smaller than this are not worth compressing. */
const COMPRESSION_THRESHOLD_BYTES = 1024;

export function envelope(id: string | null, outcome: ProxyOutcome | EnvelopeError): Envelope {
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

/** The HTTP 200 response for a call that reached the ERP (successful or ERP-side error). */
export function outcomeResponse(state: RequestState, outcome: ProxyOutcome): LambdaResponse {
  state.outcome = outcome.kind === 'result' ? 'success' : 'erp_error';
  if (outcome.kind === 'erp_error') state.errorCode = outcome.code;
  return jsonResponse(200, envelope(state.envelopeId, outcome));
}

/** A JSON body that is not an envelope (`/_/license`, `/_/about`). */
export function plainJsonResponse(state: RequestState, body: unknown): LambdaResponse {
  state.outcome = 'success';
  return jsonResponse(200, body);
}

/** A non-JSON success body (`/_/metrics`). */
export function textResponse(state: RequestState, body: string, contentType: string): LambdaResponse {
  state.outcome = 'success';
  return { statusCode: 200, headers: { 'content-type': contentType }, body };
}

/** The one place an error becomes a response. */
export function errorResponse(state: RequestState | undefined, error: unknown): LambdaResponse {
  const proxyError = error instanceof ProxyError ? error : new InternalError(error);
  if (state) {
    state.outcome = 'proxy_error';
    state.errorCode = proxyError.code;
  }
  if (proxyError instanceof V2RequestShapeError) {
    // Spec, Behaviours 4: a v2 body that cannot be decoded is answered in plain text.
    return {
      statusCode: proxyError.httpStatus,
      headers: { 'content-type': TEXT_TYPE },
      body: `${proxyError.message}\n`,
    };
  }
  return jsonResponse(
    proxyError.httpStatus,
    envelope(state?.envelopeId ?? null, {
      code: proxyError.code,
      message: proxyError.message,
      data: proxyError.data,
    }),
    { ...proxyError.headers },
  );
}

type Encoding = 'gzip' | 'br';

/** Picks a response encoding from `Accept-Encoding` (q-values honoured; gzip preferred). */
export function negotiateEncoding(acceptEncoding: string | undefined): Encoding | undefined {
  if (!acceptEncoding) return undefined;
  const accepted = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [rawName, ...params] = part.trim().split(';');
    const name = (rawName ?? '').trim().toLowerCase();
    if (!name) continue;
    let q = 1;
    for (const param of params) {
      const match = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(param);
      if (match) q = Number(match[1]);
    }
    accepted.set(name, Number.isFinite(q) ? q : 0);
  }
  const weight = (name: Encoding): number => accepted.get(name) ?? accepted.get('*') ?? 0;
  const gzip = weight('gzip');
  const br = weight('br');
  if (gzip <= 0 && br <= 0) return undefined;
  return gzip >= br ? 'gzip' : 'br';
}

function headerBytes(headers: Record<string, string>): number {
  let total = 0;
  for (const [name, value] of Object.entries(headers)) total += name.length + value.length + 4;
  return total;
}

/** The serialized size of the response as Lambda returns it (the body string is JSON-escaped). */
export function lambdaPayloadBytes(response: LambdaResponse): number {
  return Buffer.byteLength(JSON.stringify(response.body), 'utf8') + headerBytes(response.headers) + 64;
}

/**
 * Last step for every response: compresses it when the client asked for it, and makes sure it
 * fits Lambda's 6 MB response limit (else -32009, the only safe answer left).
 */
export function finalizeResponse(
  state: RequestState | undefined,
  response: LambdaResponse,
  acceptEncoding: string | undefined,
): LambdaResponse {
  let final = response;
  const encoding = negotiateEncoding(acceptEncoding);
  if (
    encoding &&
    !response.isBase64Encoded &&
    Buffer.byteLength(response.body) >= COMPRESSION_THRESHOLD_BYTES
  ) {
    const raw = Buffer.from(response.body, 'utf8');
    const compressed =
      encoding === 'gzip'
        ? gzipSync(raw, { level: 6 })
        : brotliCompressSync(raw, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 5 } });
    final = {
      ...response,
      headers: { ...response.headers, 'content-encoding': encoding, vary: 'accept-encoding' },
      body: compressed.toString('base64'),
      isBase64Encoded: true,
    };
  }
  if (lambdaPayloadBytes(final) + RESPONSE_OVERHEAD_BYTES > LAMBDA_RESPONSE_LIMIT_BYTES) {
    const tooLarge = new ResponseTooLargeError(
      'The answer is too large for the gateway (6 MB). Ask for less: use limit/offset or fewer fields' +
        (encoding ? '.' : ', or send Accept-Encoding: gzip.'),
    );
    final = errorResponse(state, tooLarge);
  }
  if (state) {
    state.responseBytes = final.isBase64Encoded
      ? Buffer.byteLength(final.body, 'base64')
      : Buffer.byteLength(final.body, 'utf8');
  }
  return final;
}
