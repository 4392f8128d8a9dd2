/**
 * The last step of every response: content negotiation, compression and the 6 MB Lambda
 * response limit.
 */
import { randomBytes } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { Envelope, LambdaResponse } from '../../lambdas/core/envelope.ts';
import type { FactSheet } from '../../lambdas/core/request-facts.ts';
import * as encoding from '../../lambdas/core/response-encoding.ts';
import { lambdaPayloadBytes, negotiateEncoding } from '../../lambdas/core/response-encoding.ts';
import { LAMBDA_RESPONSE_LIMIT_BYTES } from '../../lambdas/platform/config.ts';

/** The request as `finalizeResponse` sees it (API, envelope `id`), and the facts it returned, gathered. */
type State = FactSheet & { readonly api: 'v1'; readonly envelopeId: string | null };

function newState(envelopeId: string | null = 'req-1'): State {
  return { api: 'v1', envelopeId };
}

/** `finalizeResponse`, its facts gathered onto `state`. */
function finalizeResponse(
  state: State,
  response: LambdaResponse,
  accepted: encoding.Encoding | undefined,
): LambdaResponse {
  const answer = encoding.finalizeResponse(state, response, accepted);
  Object.assign(state, answer.facts);
  return answer.response;
}

function envelopeOf(response: LambdaResponse): Envelope {
  return JSON.parse(response.body) as Envelope;
}

function jsonResponse(body: string, statusCode = 200): LambdaResponse {
  return { statusCode, headers: { 'content-type': 'application/json; charset=utf-8' }, body };
}

describe('negotiateEncoding', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['identity', undefined],
    ['deflate', undefined],
    ['deflate, identity', undefined],
    ['gzip', 'gzip'],
    ['GZIP', 'gzip'],
    ['Gzip;Q=0.5', 'gzip'],
    ['br', 'br'],
    ['BR', 'br'],
    ['deflate, br', 'br'],
    ['gzip, br', 'gzip'],
    ['br, gzip', 'gzip'],
    ['br;q=0.8, gzip;q=0.8', 'gzip'],
    ['gzip;q=0.5, br;q=0.8', 'br'],
    ['gzip;q=0.9, br', 'br'],
    ['gzip; q=0.2, br; Q=0.1', 'gzip'],
    [' gzip ; q = 0.5 , br ; q=0.4 ', 'gzip'],
    ['gzip;q=0', undefined],
    ['gzip;q=0, br;q=0', undefined],
    ['gzip;q=0.000', undefined],
    ['gzip;q=0, br', 'br'],
    ['*', 'gzip'],
    ['*;q=0', undefined],
    ['gzip;q=0, *', 'br'],
    ['br;q=0, *;q=0.5', 'gzip'],
    ['*;q=0.1, br;q=0.5', 'br'],
    ['identity, *;q=0', undefined],
    ['identity;q=1, gzip;q=0', undefined],
    [',,gzip,,', 'gzip'],
  ])('%j → %s', (header, expected) => {
    expect(negotiateEncoding(header)).toBe(expected);
  });
});

describe('finalizeResponse', () => {
  const largeJson = JSON.stringify({
    rows: Array.from({ length: 200 }, (_, i) => ({ id: i, name: `partner ${i}` })),
  });

  it('leaves a small response alone even when gzip is accepted', () => {
    // Prepare
    const state = newState();
    const response = jsonResponse('{"jsonrpc":"2.0","id":"1","result":1,"error":null}');
    // Act
    const final = finalizeResponse(state, response, negotiateEncoding('gzip'));
    // Assess
    expect(final).toEqual(response);
    expect(final.headers['content-encoding']).toBeUndefined();
    expect(state.responseBytes).toBe(Buffer.byteLength(response.body));
  });

  it('leaves a large response uncompressed when the client did not ask', () => {
    const state = newState();
    const final = finalizeResponse(state, jsonResponse(largeJson), undefined);
    expect(final.body).toBe(largeJson);
    expect(final.isBase64Encoded).toBeFalsy();
    expect(state.responseBytes).toBe(Buffer.byteLength(largeJson));
  });

  it('compresses from the threshold on (1023 bytes stays, 1024 bytes is compressed)', () => {
    const below = finalizeResponse(newState(), jsonResponse('x'.repeat(1023)), negotiateEncoding('gzip'));
    const at = finalizeResponse(newState(), jsonResponse('x'.repeat(1024)), negotiateEncoding('gzip'));
    expect(below.isBase64Encoded).toBeFalsy();
    expect(at.isBase64Encoded).toBe(true);
  });

  it('gzips a large response: base64 body, content-encoding and vary', () => {
    // Prepare
    const state = newState();
    // Act
    const final = finalizeResponse(state, jsonResponse(largeJson), negotiateEncoding('gzip, deflate'));
    // Assess
    expect(final.isBase64Encoded).toBe(true);
    expect(final.headers['content-encoding']).toBe('gzip');
    expect(final.headers.vary).toBe('accept-encoding');
    expect(final.headers['content-type']).toBe('application/json; charset=utf-8');
    const compressed = Buffer.from(final.body, 'base64');
    expect(gunzipSync(compressed).toString('utf8')).toBe(largeJson);
    expect(compressed.length).toBeLessThan(Buffer.byteLength(largeJson));
    expect(state.responseBytes).toBe(compressed.length);
  });

  it('uses brotli when only br is accepted', () => {
    const final = finalizeResponse(newState(), jsonResponse(largeJson), negotiateEncoding('br'));
    expect(final.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(Buffer.from(final.body, 'base64')).toString('utf8')).toBe(largeJson);
  });

  it('does not compress a body that is already base64', () => {
    const response: LambdaResponse = {
      ...jsonResponse(Buffer.from(largeJson).toString('base64')),
      isBase64Encoded: true,
    };
    const final = finalizeResponse(newState(), response, negotiateEncoding('gzip'));
    expect(final).toEqual(response);
  });

  it('keeps the status and other headers of the response it compresses', () => {
    const response: LambdaResponse = {
      statusCode: 503,
      headers: { 'content-type': 'application/json; charset=utf-8', 'Retry-After': '5' },
      body: largeJson,
    };
    const final = finalizeResponse(newState(), response, negotiateEncoding('gzip'));
    expect(final.statusCode).toBe(503);
    expect(final.headers['Retry-After']).toBe('5');
  });

  describe('the 6 MB Lambda response limit', () => {
    // Every `"` doubles once the body string is itself JSON-escaped in the Lambda payload.
    const quotes = '"'.repeat(3_200_000);

    it('refuses a body under 6 MB whose escaped form is over it, with -32009', () => {
      // Prepare
      const state = newState('big');
      const response = jsonResponse(quotes);
      expect(Buffer.byteLength(response.body)).toBeLessThan(LAMBDA_RESPONSE_LIMIT_BYTES);
      expect(lambdaPayloadBytes(response)).toBeGreaterThan(LAMBDA_RESPONSE_LIMIT_BYTES);
      // Act
      const final = finalizeResponse(state, response, undefined);
      // Assess
      expect(final.statusCode).toBe(502);
      const body = envelopeOf(final);
      expect(body.id).toBe('big');
      expect(body.error?.code).toBe(-32009);
      expect(body.error?.message).toMatch(/limit\/offset/);
      expect(body.error?.message).toMatch(/Accept-Encoding: gzip/);
      expect(state.errorCode).toBe(-32009);
      expect(state.outcome).toBe('proxy_error');
      expect(state.responseBytes).toBe(Buffer.byteLength(final.body));
    });

    it('keeps 8 KB of room for the gateway wrapper: 4 KB under 6 MB is refused, 16 KB under passes', () => {
      // Prepare: plain bodies (nothing to escape) whose Lambda payload is just under the limit.
      const sized = (payloadBytes: number): LambdaResponse => {
        const probe = jsonResponse('');
        return jsonResponse('a'.repeat(payloadBytes - lambdaPayloadBytes(probe)));
      };
      const nearly = sized(LAMBDA_RESPONSE_LIMIT_BYTES - 4 * 1024);
      const roomy = sized(LAMBDA_RESPONSE_LIMIT_BYTES - 16 * 1024);
      expect(lambdaPayloadBytes(nearly)).toBe(LAMBDA_RESPONSE_LIMIT_BYTES - 4 * 1024);
      // Act
      const refused = finalizeResponse(newState(), nearly, undefined);
      const passed = finalizeResponse(newState(), roomy, undefined);
      // Assess
      expect(envelopeOf(refused).error?.code).toBe(-32009);
      expect(passed.statusCode).toBe(200);
      expect(passed.body).toBe(roomy.body);
    });

    it('lets a body of the same raw size through when it needs no escaping', () => {
      const state = newState();
      const final = finalizeResponse(state, jsonResponse('a'.repeat(3_200_000)), undefined);
      expect(final.statusCode).toBe(200);
      expect(state.responseBytes).toBe(3_200_000);
    });

    it('lets the escaped-too-large body through once it is compressed', () => {
      const final = finalizeResponse(newState(), jsonResponse(quotes), negotiateEncoding('gzip'));
      expect(final.statusCode).toBe(200);
      expect(final.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(Buffer.from(final.body, 'base64')).toString('utf8')).toBe(quotes);
    });

    it('refuses a compressed body that is still too large, without suggesting gzip again', () => {
      // Prepare: random data barely compresses.
      const incompressible = randomBytes(6 * 1024 * 1024).toString('base64');
      // Act
      const final = finalizeResponse(newState(), jsonResponse(incompressible), negotiateEncoding('gzip'));
      // Assess
      expect(final.statusCode).toBe(502);
      expect(final.isBase64Encoded).toBeFalsy();
      expect(final.headers['content-encoding']).toBeUndefined();
      const body = envelopeOf(final);
      expect(body.error?.code).toBe(-32009);
      expect(body.error?.message).not.toMatch(/Accept-Encoding/);
    });
  });
});
