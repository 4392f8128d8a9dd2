/**
 * The envelope and the HTTP responses built from it: the one error mapping, the outcome
 * responses, content negotiation, compression and the 6 MB Lambda response limit.
 */
import { randomBytes } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  type Envelope,
  errorResponse,
  finalizeResponse,
  type LambdaResponse,
  lambdaPayloadBytes,
  negotiateEncoding,
  outcomeResponse,
} from '../../lambdas/core/envelope.ts';
import type { RequestState } from '../../lambdas/core/request-state.ts';
import { LAMBDA_RESPONSE_LIMIT_BYTES } from '../../lambdas/platform/config.ts';
import {
  AuthenticationError,
  BadUpstreamResponseError,
  InternalError,
  InvalidRequestError,
  InvalidV2TargetError,
  Json2UnavailableError,
  LicenseError,
  MissingFunctionNameError,
  ParseError,
  type ProxyError,
  ResponseTooLargeError,
  TargetRefusedError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
  V2RequestShapeError,
} from '../../lambdas/platform/errors.ts';

function newState(envelopeId: string | null = 'req-1'): RequestState {
  return { api: 'v1', startedAt: 0, envelopeId };
}

function envelopeOf(response: LambdaResponse): Envelope {
  return JSON.parse(response.body) as Envelope;
}

function jsonResponse(body: string, statusCode = 200): LambdaResponse {
  return { statusCode, headers: { 'content-type': 'application/json; charset=utf-8' }, body };
}

describe('errorResponse', () => {
  const cases: ReadonlyArray<[ProxyError, number, number]> = [
    [new ParseError('Parse error: Unexpected token'), -32700, 400],
    [new InvalidRequestError('Invalid request: id: is required'), -32600, 400],
    [new AuthenticationError(), -32000, 401],
    [new LicenseError('The license expired on 2020-01-01'), 0, 403],
    [new MissingFunctionNameError(), -32002, 400],
    [new UpstreamTimeoutError('The ERP did not answer within 15 s'), -32003, 504],
    [new UpstreamUnavailableError('Connection refused'), -32004, 503],
    [new BadUpstreamResponseError('HTTP 500 text/html'), -32005, 502],
    [new Json2UnavailableError('JSON-2 is not available'), -32006, 502],
    [new InvalidV2TargetError('Invalid model_id'), -32007, 400],
    [new TargetRefusedError('Target refused'), -32008, 403],
    [new ResponseTooLargeError('Too large'), -32009, 502],
  ];

  it.each(cases)('%s keeps its code, status and message', (error, code, status) => {
    // Prepare
    const state = newState('abc');
    // Act
    const response = errorResponse(state, error);
    // Assess
    const body = envelopeOf(response);
    expect(response.statusCode).toBe(status);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(body).toEqual({
      jsonrpc: '2.0',
      id: 'abc',
      result: null,
      error: { code, message: error.message, data: null },
    });
    expect(state.outcome).toBe('proxy_error');
    expect(state.errorCode).toBe(code);
  });

  it('AuthenticationError says "Authentication failed" by default (README example)', () => {
    const body = envelopeOf(errorResponse(newState(), new AuthenticationError()));
    expect(body.error?.message).toBe('Authentication failed');
  });

  it('passes extra headers such as Retry-After on, next to the content type', () => {
    // Prepare
    const busy = new UpstreamUnavailableError('busy', { headers: { 'Retry-After': '120' } });
    // Act
    const response = errorResponse(newState(), busy);
    // Assess
    expect(response.statusCode).toBe(503);
    expect(response.headers['Retry-After']).toBe('120');
    expect(response.headers['content-type']).toMatch(/^application\/json/);
  });

  it('passes error data on', () => {
    const error = new BadUpstreamResponseError('bad', { data: { status: 500 } });
    expect(envelopeOf(errorResponse(newState(), error)).error?.data).toEqual({ status: 500 });
  });

  it('echoes a null id when there is no state', () => {
    const response = errorResponse(undefined, new ParseError('Parse error'));
    expect(envelopeOf(response).id).toBeNull();
    expect(response.statusCode).toBe(400);
  });

  it.each([
    ['an Error', new Error('connect ECONNREFUSED 10.0.0.7:5432 password=hunter2')],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'hunter2')")],
    ['a thrown string', 'hunter2 exploded'],
    ['a thrown object', { secret: 'hunter2' }],
    ['undefined', undefined],
  ])('%s becomes -32603 "Internal error" with nothing internal shown', (_label, thrown) => {
    // Prepare
    const state = newState('id-9');
    // Act
    const response = errorResponse(state, thrown);
    // Assess
    expect(response.statusCode).toBe(500);
    expect(envelopeOf(response)).toEqual({
      jsonrpc: '2.0',
      id: 'id-9',
      result: null,
      error: { code: -32603, message: 'Internal error', data: null },
    });
    expect(response.body).not.toContain('hunter2');
    expect(response.body).not.toMatch(/ECONNREFUSED|TypeError|stack/);
    expect(state.errorCode).toBe(-32603);
    expect(state.outcome).toBe('proxy_error');
  });

  it('an InternalError keeps its cause out of the response', () => {
    const response = errorResponse(newState(), new InternalError(new Error('hunter2')));
    expect(response.body).not.toContain('hunter2');
    expect(envelopeOf(response).error?.message).toBe('Internal error');
  });

  it('answers a V2RequestShapeError in plain text, not as an envelope', () => {
    // Prepare
    const state = newState('v2-id');
    // Act
    const response = errorResponse(state, new V2RequestShapeError('kwargs: expected object, received array'));
    // Assess
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(response.body).toBe('kwargs: expected object, received array\n');
    expect(() => JSON.parse(response.body)).toThrow();
    expect(state.outcome).toBe('proxy_error');
  });
});

describe('outcomeResponse', () => {
  it('answers a result with HTTP 200 and error null', () => {
    const state = newState('r1');
    const response = outcomeResponse(state, { kind: 'result', value: [1, 2, 3] });
    expect(response.statusCode).toBe(200);
    expect(envelopeOf(response)).toEqual({ jsonrpc: '2.0', id: 'r1', result: [1, 2, 3], error: null });
    expect(state.outcome).toBe('success');
    expect(state.errorCode).toBeUndefined();
  });

  it('turns an undefined result into null', () => {
    const response = outcomeResponse(newState(), { kind: 'result', value: undefined });
    expect(JSON.parse(response.body)).toHaveProperty('result', null);
  });

  it.each([0, false, '', []])('keeps the falsy result %j as it is', (value) => {
    const response = outcomeResponse(newState(), { kind: 'result', value });
    expect(envelopeOf(response).result).toEqual(value);
  });

  it('answers an ERP error with HTTP 200, result null and the ERP data', () => {
    // Prepare
    const state = newState('e1');
    const data = { name: 'odoo.exceptions.AccessError', message: 'no access', debug: 'Traceback' };
    // Act
    const response = outcomeResponse(state, { kind: 'erp_error', code: 403, message: 'no access', data });
    // Assess
    expect(response.statusCode).toBe(200);
    expect(envelopeOf(response)).toEqual({
      jsonrpc: '2.0',
      id: 'e1',
      result: null,
      error: { code: 403, message: 'no access', data },
    });
    expect(state.outcome).toBe('erp_error');
    expect(state.errorCode).toBe(403);
  });

  it('answers an ERP error without data with data null', () => {
    const response = outcomeResponse(newState(), {
      kind: 'erp_error',
      code: 0,
      message: 'x',
      data: undefined,
    });
    expect(envelopeOf(response).error).toEqual({ code: 0, message: 'x', data: null });
  });
});

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
    const final = finalizeResponse(state, response, 'gzip');
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
    const below = finalizeResponse(newState(), jsonResponse('x'.repeat(1023)), 'gzip');
    const at = finalizeResponse(newState(), jsonResponse('x'.repeat(1024)), 'gzip');
    expect(below.isBase64Encoded).toBeFalsy();
    expect(at.isBase64Encoded).toBe(true);
  });

  it('gzips a large response: base64 body, content-encoding and vary', () => {
    // Prepare
    const state = newState();
    // Act
    const final = finalizeResponse(state, jsonResponse(largeJson), 'gzip, deflate');
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
    const final = finalizeResponse(newState(), jsonResponse(largeJson), 'br');
    expect(final.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(Buffer.from(final.body, 'base64')).toString('utf8')).toBe(largeJson);
  });

  it('does not compress a body that is already base64', () => {
    const response: LambdaResponse = {
      ...jsonResponse(Buffer.from(largeJson).toString('base64')),
      isBase64Encoded: true,
    };
    const final = finalizeResponse(newState(), response, 'gzip');
    expect(final).toEqual(response);
  });

  it('keeps the status and other headers of the response it compresses', () => {
    const response: LambdaResponse = {
      statusCode: 503,
      headers: { 'content-type': 'application/json; charset=utf-8', 'Retry-After': '5' },
      body: largeJson,
    };
    const final = finalizeResponse(newState(), response, 'gzip');
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
      const final = finalizeResponse(newState(), jsonResponse(quotes), 'gzip');
      expect(final.statusCode).toBe(200);
      expect(final.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(Buffer.from(final.body, 'base64')).toString('utf8')).toBe(quotes);
    });

    it('refuses a compressed body that is still too large, without suggesting gzip again', () => {
      // Prepare: random data barely compresses.
      const incompressible = randomBytes(6 * 1024 * 1024).toString('base64');
      // Act
      const final = finalizeResponse(newState(), jsonResponse(incompressible), 'gzip');
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
