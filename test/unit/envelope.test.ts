/**
 * The envelope and the HTTP responses built from it: the one error mapping and the outcome
 * responses. Compression and the 6 MB limit: response-encoding.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { Envelope, LambdaResponse } from '../../lambdas/core/envelope.ts';
import * as envelope from '../../lambdas/core/envelope.ts';
import type { FactSheet } from '../../lambdas/core/request-facts.ts';
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

/** The request as these helpers see it (API, envelope `id`), and the facts they returned, gathered. */
type State = FactSheet & { readonly api: 'v1'; readonly envelopeId: string | null };

function newState(envelopeId: string | null = 'req-1'): State {
  return { api: 'v1', envelopeId };
}

/** `errorResponse`, its facts gathered onto `state` (no state: the shape of a request whose `id` is unknown). */
function errorResponse(state: State | undefined, error: unknown): LambdaResponse {
  const answer = envelope.errorResponse(state ?? { api: 'v1', envelopeId: null }, error);
  if (state) Object.assign(state, answer.facts);
  return answer.response;
}

function outcomeResponse(
  state: State,
  outcome: Parameters<typeof envelope.outcomeResponse>[1],
): LambdaResponse {
  const answer = envelope.outcomeResponse(state.envelopeId, outcome);
  Object.assign(state, answer.facts);
  return answer.response;
}

function envelopeOf(response: LambdaResponse): Envelope {
  return JSON.parse(response.body) as Envelope;
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
