/**
 * @module core/response-encoding
 * The last step of every response ({@link finalizeResponse}): compression when the client asked
 * for it (`Accept-Encoding`), and the byte accounting that keeps an answer within Lambda's 6 MB
 * response limit; an answer that does not fit becomes -32009.
 */
import { LAMBDA_RESPONSE_LIMIT_BYTES } from '../platform/config.ts';
import { ResponseTooLargeError } from '../platform/errors.ts';
import { type Answer, type ErrorShape, errorResponse, type LambdaResponse } from './envelope.ts';
import type { RequestFacts } from './request-facts.ts';

/** Room kept for the API Gateway payload wrapper and headers when checking the 6 MB limit. */
const RESPONSE_OVERHEAD_BYTES = 8 * 1024;
/** Bodies smaller than this are not worth compressing. */
const COMPRESSION_THRESHOLD_BYTES = 1024;

/** A response encoding the proxy sends. */
export type Encoding = 'gzip' | 'br';

/**
 * `node:zlib`, loaded on the first response worth compressing rather than at import: loading it
 * is 1-3 ms of every cold start on this machine, and a process may never compress (answers under
 * the threshold, clients that do not ask). `process.getBuiltinModule` loads it synchronously.
 */
function zlib(): typeof import('node:zlib') {
  return process.getBuiltinModule('node:zlib');
}

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
function escapedJsonStringBytes(text: string): number {
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
  shape: ErrorShape,
  response: LambdaResponse,
  encoding: Encoding | undefined,
): Answer {
  const { bodyBytes, ...plain } = response;
  let final: LambdaResponse = plain;
  let facts: RequestFacts | undefined;
  const size = bodyBytes ? bodyBytes.length : Buffer.byteLength(response.body);
  if (encoding && !response.isBase64Encoded && size >= COMPRESSION_THRESHOLD_BYTES) {
    const raw = bodyBytes ?? Buffer.from(response.body, 'utf8');
    // The fastest settings: on a 5 MB search_read (this machine) gzip level 1 takes 22 ms for
    // 584 KB (level 3: 28 ms, 561 KB; the default 6: 55 ms, 508 KB), brotli quality 1 13.5 ms
    // for 462 KB (quality 4: 54 ms, 367 KB). The answer is sent once; CPU time is latency.
    const { brotliCompressSync, constants, gzipSync } = zlib();
    const compressed =
      encoding === 'gzip'
        ? gzipSync(raw, { level: 1 })
        : brotliCompressSync(raw, {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: 1,
              [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
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
    const refused = errorResponse(shape, tooLarge);
    final = refused.response;
    facts = refused.facts;
  }
  const responseBytes = final.isBase64Encoded
    ? Buffer.byteLength(final.body, 'base64')
    : Buffer.byteLength(final.body, 'utf8');
  return { response: final, facts: Object.assign({ responseBytes }, facts) };
}
