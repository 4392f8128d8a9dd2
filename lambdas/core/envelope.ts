/**
 * @module core/envelope
 * The response envelope `{jsonrpc, id, result, error}` and the HTTP responses built from it.
 * `errorResponse` is the one mapping from errors to responses: a `ProxyError` keeps its code,
 * status and message; anything else is a bug and becomes -32603 with nothing internal shown.
 */
import { brotliCompressSync, gzipSync, constants as zlibConstants } from 'node:zlib';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { wrapBytes } from '../platform/buffers.ts';
import { LAMBDA_RESPONSE_LIMIT_BYTES } from '../platform/config.ts';
import { InternalError, ProxyError, ResponseTooLargeError } from '../platform/errors.ts';
import type { RequestState } from './request-state.ts';

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

/** What an execute or version call produced, before it becomes an envelope. */
export type ProxyOutcome =
  | { readonly kind: 'result'; readonly value: unknown }
  /** A result passed on as the ERP's own JSON bytes (already validated), never parsed. */
  | { readonly kind: 'raw_result'; readonly json: Buffer }
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

export function envelope(
  id: string | null,
  outcome: Exclude<ProxyOutcome, { kind: 'raw_result' }> | EnvelopeError,
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

/** The HTTP 200 response for a call that reached the ERP (successful or ERP-side error). */
export function outcomeResponse(state: RequestState, outcome: ProxyOutcome): LambdaResponse {
  state.outcome = outcome.kind === 'erp_error' ? 'erp_error' : 'success';
  if (outcome.kind === 'erp_error') state.errorCode = outcome.code;
  if (outcome.kind === 'raw_result') {
    // The same bytes JSON.stringify(envelope) would give, with the ERP's JSON spliced in as is.
    const bodyBytes = wrapBytes(
      Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(state.envelopeId)},"result":`, 'utf8'),
      outcome.json,
      Buffer.from(',"error":null}', 'utf8'),
    );
    return { statusCode: 200, headers: { 'content-type': JSON_TYPE }, body: '', bodyBytes };
  }
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
  if (proxyError.row.answer === 'text') {
    // The error table says which errors are no envelope: a v2 body that cannot be decoded is
    // answered in plain text (README, "Responses and errors").
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
  // Base64 has nothing to escape.
  const body = response.isBase64Encoded ? response.body.length + 2 : escapedJsonStringBytes(response.body);
  return body + headerBytes(response.headers) + 64;
}

/**
 * UTF-8 size of `JSON.stringify(text)`, without building it (for a multi-megabyte body that is
 * a whole copy): every `"` and `\` gains a backslash, control characters become escapes.
 */
export function escapedJsonStringBytes(text: string): number {
  let extra = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 0x22 || code === 0x5c) extra += 1;
    else if (code < 0x20)
      extra += code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 1 : 5;
    // Lone surrogates are written as \uXXXX escapes (6 bytes instead of 3).
    else if (code >= 0xd800 && code <= 0xdfff) {
      const pairs =
        code <= 0xdbff
          ? (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00
          : i > 0 && (text.charCodeAt(i - 1) & 0xfc00) === 0xd800;
      if (!pairs) extra += 3;
    }
  }
  return Buffer.byteLength(text, 'utf8') + 2 + extra;
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
  const { bodyBytes, ...plain } = response;
  let final: LambdaResponse = plain;
  const encoding = negotiateEncoding(acceptEncoding);
  const size = bodyBytes ? bodyBytes.length : Buffer.byteLength(response.body);
  if (encoding && !response.isBase64Encoded && size >= COMPRESSION_THRESHOLD_BYTES) {
    const raw = bodyBytes ?? Buffer.from(response.body, 'utf8');
    // The fastest settings: on a 5 MB search_read (this machine) gzip level 1 takes 22 ms for
    // 584 KB (level 3: 28 ms, 561 KB; the default 6: 55 ms, 508 KB), brotli quality 1 13.5 ms
    // for 462 KB (quality 4: 54 ms, 367 KB). The answer is sent once; CPU time is latency.
    const compressed =
      encoding === 'gzip'
        ? gzipSync(raw, { level: 1 })
        : brotliCompressSync(raw, {
            params: {
              [zlibConstants.BROTLI_PARAM_QUALITY]: 1,
              [zlibConstants.BROTLI_PARAM_SIZE_HINT]: raw.length,
            },
          });
    final = {
      ...plain,
      headers: { ...plain.headers, 'content-encoding': encoding, vary: 'accept-encoding' },
      body: compressed.toString('base64'),
      isBase64Encoded: true,
    };
  } else if (bodyBytes) {
    final = { ...plain, body: bodyBytes.toString('utf8') };
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
