/**
 * Request bodies to calls (`lambdas/core/requests.ts` over the zod schemas of `lambdas/core/schemas.ts`):
 * every error class, field-naming messages, -32002 for `call_method`, the v2 plain-text shape
 * errors and the -32007 checks on what travels upstream in a path or a header.
 */

import { describe, expect, it } from 'vitest';
import type { InboundBody } from '../../lambdas/core/inbound-call.ts';
import { factsOf, type RequestFacts } from '../../lambdas/core/request-facts.ts';
import * as requests from '../../lambdas/core/requests.ts';
import { MAX_V2_HEADER_VALUE_LENGTH, MAX_V2_NAME_LENGTH } from '../../lambdas/core/requests.ts';
import {
  baseUrl,
  erpInstanceV1,
  erpInstanceV2,
  V1_ACTIONS,
  v1ExecuteSchema,
  v2ExecuteSchema,
  versionSchema,
} from '../../lambdas/core/schemas.ts';
import { inboundBodyOfDocument } from '../../lambdas/middleware/json-body.ts';
import {
  InvalidRequestError,
  InvalidV2TargetError,
  MissingFunctionNameError,
  ParseError,
  ProxyError,
  V2RequestShapeError,
} from '../../lambdas/platform/errors.ts';
import { readJsonDocument } from '../../lambdas/platform/json.ts';

/** A marker ERP key: it must never show up in any error message. */
const ERP_KEY = 'erp-user-key-MARKER-7f3a9c';

/**
 * The body as the middleware (`jsonBody`) hands it to the core, and the facts the parse taught
 * (what it returned, or what its error carries), gathered here for the assertions.
 */
type ReadState = { -readonly [K in keyof RequestFacts]: RequestFacts[K] } & { readonly inbound: InboundBody };

/**
 * What `jsonBody` reads from `JSON.stringify(body)` (built synchronously: `JSON.parse`, which the
 * step's body parser runs, and the same scan); `undefined` with `bodyError`: a body it could not read.
 */
function stateWith(body: unknown, bodyError?: string): ReadState {
  const inbound: InboundBody =
    body === undefined
      ? { ok: false, ...(bodyError === undefined ? {} : { problem: bodyError }) }
      : inboundBodyOfDocument(readJsonDocument(JSON.stringify(body)));
  return { inbound };
}

/** What `jsonBody` reads from a body given as text (parsed the same way). */
function stateOfText(text: string): ReadState {
  return { inbound: inboundBodyOfDocument(readJsonDocument(text)) };
}

/** Runs a parse and gathers what it taught onto `read`: the call's facts, or its error's. */
function learning<T>(read: ReadState, parse: () => T, factsOfValue: (value: T) => RequestFacts): T {
  try {
    const value = parse();
    Object.assign(read, factsOfValue(value));
    return value;
  } catch (error) {
    Object.assign(read, factsOf(error));
    throw error;
  }
}
const parseV1Call = (read: ReadState, presentedProxyKey?: string) =>
  learning(read, () => requests.parseV1Call(read.inbound, presentedProxyKey), requests.callFacts);
const parseV2Call = (read: ReadState, presentedProxyKey?: string) =>
  learning(read, () => requests.parseV2Call(read.inbound, presentedProxyKey), requests.callFacts);
const parseVersionTarget = (read: ReadState) =>
  learning(
    read,
    () => requests.parseVersionTarget(read.inbound),
    (url) => requests.targetFacts(url),
  );

/** Runs `fn` and returns what it threw (fails the test when it did not throw). */
function thrown(fn: () => unknown): ProxyError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ProxyError);
    return error as ProxyError;
  }
  throw new Error('expected a ProxyError, but nothing was thrown');
}

const v1Instance = { url: 'https://erp.example.com', db: 'erp_a', user_id: 2, api_key: ERP_KEY };
const v1Body = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  id: '01J9Z',
  action: 'search_count',
  model_id: 'res.partner',
  params: [[]],
  erp_instance: v1Instance,
  ...overrides,
});

const v2Instance = { url: 'https://erp.example.com', db: 'erp_a', api_key: ERP_KEY };
const v2Body = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  id: '01J9Z',
  model_id: 'res.partner',
  method: 'search_count',
  kwargs: { domain: [] },
  erp_instance: v2Instance,
  ...overrides,
});

describe('parseV1Call', () => {
  it('turns a valid body into a call and records the target', () => {
    // Prepare
    const state = stateWith(v1Body({ keyword: { limit: 5 } }));
    // Act
    const call = parseV1Call(state);
    // Assess
    expect(call).toEqual({
      baseUrl: new URL('https://erp.example.com'),
      db: 'erp_a',
      apiKey: ERP_KEY,
      uid: 2,
      standardAction: true,
      model: 'res.partner',
      method: 'search_count',
      argsJson: '[[]]',
      kwargsJson: '{"limit":5}',
    });
    expect(state.model).toBe('res.partner');
    expect(state.action).toBe('search_count');
    expect(state.erpHost).toBe('erp.example.com');
    expect(state.erpDb).toBe('erp_a');
  });

  it.each(V1_ACTIONS.filter((action) => action !== 'call_method'))('accepts the action %s', (action) => {
    expect(parseV1Call(stateWith(v1Body({ action }))).method).toBe(action);
  });

  it('defaults params to [] and keyword to {}', () => {
    const call = parseV1Call(stateWith(v1Body({ params: undefined, keyword: undefined })));
    expect(call.argsJson).toBe('[]');
    expect(call.kwargsJson).toBe('{}');
  });

  it('forwards params and keyword as the client wrote them (numbers, escapes, the last of a repeated member)', () => {
    const params = '[[["amount", ">", 1.0], ["id", "=", 12345678901234567890]], 1e400, -0, "\\u00e9"]';
    const keyword = '{"fields" : ["name"], "limit":5.50}';
    const text = `{"id":"t","action":"search_read","model_id":"res.partner","params":[],"params":${params},"keyword":${keyword},"erp_instance":${JSON.stringify(v1Instance)}}`;
    const call = parseV1Call(stateOfText(text));
    expect(call.argsJson).toBe(params);
    expect(call.kwargsJson).toBe(keyword);
  });

  it('keeps the host with its port for the log', () => {
    const state = stateWith(v1Body({ erp_instance: { ...v1Instance, url: 'http://127.0.0.1:8069/odoo' } }));
    parseV1Call(state);
    expect(state.erpHost).toBe('127.0.0.1:8069');
  });

  it('calls fn_name for call_method (trimmed)', () => {
    const state = stateWith(v1Body({ action: 'call_method', fn_name: ' action_confirm ' }));
    const call = parseV1Call(state);
    expect(call.method).toBe('action_confirm');
    expect(state.action).toBe('action_confirm');
  });

  it('ignores fn_name for the other actions, null included', () => {
    expect(parseV1Call(stateWith(v1Body({ fn_name: 'unlink' }))).method).toBe('search_count');
    expect(parseV1Call(stateWith(v1Body({ fn_name: null }))).method).toBe('search_count');
  });

  it("refuses the caller's proxy key as the ERP key with -32600, without echoing it", () => {
    const body = v1Body();
    const erpKey = (body.erp_instance as { api_key: string }).api_key;
    const error = thrown(() => parseV1Call(stateWith(body), erpKey));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.message).toMatch(/erp_instance\.api_key is the proxy key/);
    expect(error.message).not.toContain(erpKey);
    // Another caller's key, or no key, is not compared.
    expect(parseV1Call(stateWith(v1Body()), `${erpKey}x`).apiKey).toBe(erpKey);
    expect(parseV1Call(stateWith(v1Body()), undefined).apiKey).toBe(erpKey);
  });

  it.each([
    ['padded with spaces', (key: string) => ` ${key} `],
    ['padded with a tab and a newline', (key: string) => `\t${key}\n`],
    ['exactly', (key: string) => key],
  ])("refuses the caller's proxy key %s as the ERP key, as v2 does, never passing it on", (_case, pad) => {
    const proxyKey = 'proxy-key-MARKER-1234567890';
    const body = v1Body({ erp_instance: { ...v1Instance, api_key: pad(proxyKey) } });
    const v1 = thrown(() => parseV1Call(stateWith(body), proxyKey));
    expect(v1).toBeInstanceOf(InvalidRequestError);
    expect(v1.message).toMatch(/erp_instance\.api_key is the proxy key/);
    expect(v1.message).not.toContain(proxyKey);
    const v2 = thrown(() =>
      parseV2Call(stateWith(v2Body({ erp_instance: { ...v2Instance, api_key: pad(proxyKey) } })), proxyKey),
    );
    expect(v2).toBeInstanceOf(InvalidV2TargetError);
  });

  it('documents its nesting bound exactly: the body is the first of 100 levels (README, Limits)', () => {
    const nested = (levels: number): unknown => (levels === 0 ? 1 : [nested(levels - 1)]);
    // The body is level 1 and `params` level 2: 98 more levels below it fit, 99 do not.
    expect(parseV1Call(stateWith(v1Body({ params: nested(99) }))).argsJson).toMatch(/^\[{99}1\]{99}$/);
    const v1 = thrown(() => parseV1Call(stateWith(v1Body({ params: nested(100) }))));
    expect(v1).toBeInstanceOf(InvalidRequestError);
    expect(v1.message).toBe('Invalid request: the body nests deeper than 100 levels');
    expect(parseV2Call(stateWith(v2Body({ kwargs: { x: nested(98) } }))).kwargsJson).toContain('1');
    expect(thrown(() => parseV2Call(stateWith(v2Body({ kwargs: { x: nested(99) } }))))).toBeInstanceOf(
      V2RequestShapeError,
    );
  });

  it.each([
    ['missing', undefined],
    ['null', null],
    ['empty', ''],
    ['blank', '   '],
    ['a tab and a newline', '\t\n'],
  ])('refuses call_method with fn_name %s with -32002', (_label, fnName) => {
    const error = thrown(() => parseV1Call(stateWith(v1Body({ action: 'call_method', fn_name: fnName }))));
    expect(error).toBeInstanceOf(MissingFunctionNameError);
    expect(error.code).toBe(-32002);
    expect(error.httpStatus).toBe(400);
    expect(error.message).toMatch(/fn_name/);
  });

  it('refuses a body that is not JSON with -32700 and the parser message', () => {
    const error = thrown(() => parseV1Call(stateWith(undefined, 'Unexpected token } in JSON at position 7')));
    expect(error).toBeInstanceOf(ParseError);
    expect(error.code).toBe(-32700);
    expect(error.message).toBe('Parse error: Unexpected token } in JSON at position 7');
  });

  it('refuses a body that is not JSON with a generic message when the reason is unknown', () => {
    const error = thrown(() => parseV1Call(stateWith(undefined)));
    expect(error).toBeInstanceOf(ParseError);
    expect(error.message).toMatch(/not valid JSON/);
  });

  it.each([null, [], [v1Body()], 'text', 42, true])('refuses the JSON body %j with -32600', (body) => {
    const error = thrown(() => parseV1Call(stateWith(body)));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.code).toBe(-32600);
    expect(error.httpStatus).toBe(400);
    expect(error.message).toBe('Invalid request: the body must be a JSON object');
  });

  it.each([
    ['id missing', { id: undefined }, 'id: is required'],
    ['id a number', { id: 7 }, 'id: expected string, received number'],
    ['action missing', { action: undefined }, 'action: is required'],
    ['action unknown', { action: 'name_search' }, 'action: must be one of search_count'],
    ['action wrong case', { action: 'SEARCH' }, 'action: must be one of'],
    ['model_id missing', { model_id: undefined }, 'model_id: is required'],
    ['model_id empty', { model_id: '' }, 'model_id: must not be empty'],
    ['model_id null', { model_id: null }, 'model_id: expected string, received null'],
    ['params an object', { params: { domain: [] } }, 'params: expected array, received object'],
    ['params a string', { params: '[]' }, 'params: expected array, received string'],
    ['keyword an array', { keyword: [] }, 'keyword: expected object, received array'],
    ['keyword null', { keyword: null }, 'keyword: expected object, received null'],
    ['fn_name a number', { action: 'call_method', fn_name: 3 }, 'fn_name: expected string, received number'],
    ['erp_instance missing', { erp_instance: undefined }, 'erp_instance: is required'],
    [
      'erp_instance a string',
      { erp_instance: 'https://erp' },
      'erp_instance: expected object, received string',
    ],
    ['erp_instance an array', { erp_instance: [] }, 'erp_instance: expected object, received array'],
    ['url missing', { erp_instance: { ...v1Instance, url: undefined } }, 'erp_instance.url: is required'],
    ['url empty', { erp_instance: { ...v1Instance, url: '' } }, 'erp_instance.url: must not be empty'],
    [
      'url relative',
      { erp_instance: { ...v1Instance, url: 'erp.example.com' } },
      'erp_instance.url: must be an absolute URL',
    ],
    [
      'url with a query',
      { erp_instance: { ...v1Instance, url: 'https://erp/?db=x' } },
      'erp_instance.url: must be a base URL',
    ],
    [
      'url with a fragment',
      { erp_instance: { ...v1Instance, url: 'https://erp/#x' } },
      'erp_instance.url: must be a base URL',
    ],
    ['db missing', { erp_instance: { ...v1Instance, db: undefined } }, 'erp_instance.db: is required'],
    ['db empty', { erp_instance: { ...v1Instance, db: '' } }, 'erp_instance.db: must not be empty'],
    [
      'user_id missing',
      { erp_instance: { ...v1Instance, user_id: undefined } },
      'erp_instance.user_id: is required',
    ],
    [
      'user_id a string',
      { erp_instance: { ...v1Instance, user_id: '2' } },
      'erp_instance.user_id: expected integer, received string',
    ],
    [
      'user_id fractional',
      { erp_instance: { ...v1Instance, user_id: 2.5 } },
      'erp_instance.user_id: expected integer',
    ],
    [
      'api_key missing',
      { erp_instance: { ...v1Instance, api_key: undefined } },
      'erp_instance.api_key: is required',
    ],
    [
      'api_key empty',
      { erp_instance: { ...v1Instance, api_key: '' } },
      'erp_instance.api_key: must not be empty',
    ],
    [
      'api_key a number',
      { erp_instance: { ...v1Instance, api_key: 12345 } },
      'erp_instance.api_key: expected string',
    ],
  ])('refuses %s with -32600 naming the field', (_label, overrides, expected) => {
    // Prepare
    const state = stateWith(v1Body(overrides));
    // Act
    const error = thrown(() => parseV1Call(state));
    // Assess
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.code).toBe(-32600);
    expect(error.message).toContain(expected);
    expect(error.message).not.toContain(ERP_KEY);
  });

  it('names every bad field at once', () => {
    const error = thrown(() => parseV1Call(stateWith({})));
    for (const field of ['id', 'action', 'model_id', 'erp_instance']) {
      expect(error.message).toContain(`${field}: is required`);
    }
  });
});

describe('parseV2Call', () => {
  it("refuses the caller's proxy key as the ERP key with -32007, without echoing it", () => {
    const error = thrown(() => parseV2Call(stateWith(v2Body()), ERP_KEY));
    expect(error).toBeInstanceOf(InvalidV2TargetError);
    expect(error.message).toMatch(/erp_instance\.api_key is the proxy key/);
    expect(error.message).not.toContain(ERP_KEY);
    expect(parseV2Call(stateWith(v2Body()), 'another-proxy-key-0123456789').apiKey).toBe(ERP_KEY);
  });

  it('turns a valid body into a call and records the target', () => {
    // Prepare
    const state = stateWith(v2Body());
    // Act
    const call = parseV2Call(state);
    // Assess
    expect(call).toEqual({
      baseUrl: new URL('https://erp.example.com'),
      db: 'erp_a',
      apiKey: ERP_KEY,
      model: 'res.partner',
      method: 'search_count',
      kwargsJson: '{"domain":[]}',
    });
    expect(state.model).toBe('res.partner');
    expect(state.action).toBe('search_count');
    expect(state.erpHost).toBe('erp.example.com');
    expect(state.erpDb).toBe('erp_a');
  });

  it.each([
    ['model_id', { model_id: `x.${'a'.repeat(MAX_V2_NAME_LENGTH)}` }, /model_id: longer than 256/],
    ['method', { method: 'a'.repeat(MAX_V2_NAME_LENGTH + 1) }, /method: longer than 256/],
    [
      'db',
      { erp_instance: { ...v2Instance, db: 'd'.repeat(MAX_V2_HEADER_VALUE_LENGTH + 1) } },
      /db: longer than 4096/,
    ],
    [
      'api_key',
      { erp_instance: { ...v2Instance, api_key: 'k'.repeat(MAX_V2_HEADER_VALUE_LENGTH + 1) } },
      /api_key: longer than 4096/,
    ],
  ])('refuses an over-long %s with -32007 before anything is sent', (_field, override, message) => {
    const error = thrown(() => parseV2Call(stateWith(v2Body(override))));
    expect(error).toBeInstanceOf(InvalidV2TargetError);
    expect(error.message).toMatch(message);
    expect(error.message.length).toBeLessThan(200);
  });

  it('accepts names and header values at the length limits', () => {
    const call = parseV2Call(
      stateWith(
        v2Body({
          method: 'a'.repeat(MAX_V2_NAME_LENGTH),
          erp_instance: { ...v2Instance, db: 'd'.repeat(MAX_V2_HEADER_VALUE_LENGTH) },
        }),
      ),
    );
    expect(call.method).toHaveLength(MAX_V2_NAME_LENGTH);
  });

  it('forwards kwargs as the client wrote them', () => {
    const kwargs =
      '{ "vals_list": [{"name": "N\\u00e9", "credit_limit": 1.0, "ref": 98765432109876543210}] }';
    const text = `{"id":"t","model_id":"res.partner","method":"create","kwargs":${kwargs},"erp_instance":${JSON.stringify(v2Instance)}}`;
    expect(parseV2Call(stateOfText(text)).kwargsJson).toBe(kwargs);
  });

  it('accepts a v1-shaped instance; its user_id is kept for a call that runs over /jsonrpc', () => {
    const call = parseV2Call(stateWith(v2Body({ erp_instance: v1Instance })));
    expect(call.uid).toBe(2);
    expect(call.db).toBe('erp_a');
  });

  it.each([0, -1, 1.5, '2', null, true])(
    'ignores a user_id that is not a positive integer (%j)',
    (userId) => {
      const call = parseV2Call(stateWith(v2Body({ erp_instance: { ...v2Instance, user_id: userId } })));
      expect(call.uid).toBeUndefined();
    },
  );

  it('marks call_method as not a standard action', () => {
    const call = parseV1Call(stateWith(v1Body({ action: 'call_method', fn_name: 'name_search' })));
    expect(call.standardAction).toBe(false);
    expect(call.method).toBe('name_search');
  });

  it.each(['res.partner', 'x_custom.model_2', 'product.product', 'ir.model.fields', 'RES_Partner'])(
    'accepts the model %j',
    (model) => {
      expect(parseV2Call(stateWith(v2Body({ model_id: model }))).model).toBe(model);
    },
  );

  it.each(['search_read', '_private', '__init__', 'action_confirm2', 'X'])(
    'accepts the method %j (a leading _ is left to the ERP)',
    (method) => {
      expect(parseV2Call(stateWith(v2Body({ method }))).method).toBe(method);
    },
  );

  it.each(['erp a', 'erp-a', 'a/b', 'x'])('accepts the db %j (inner spaces are fine in a header)', (db) => {
    expect(parseV2Call(stateWith(v2Body({ erp_instance: { ...v2Instance, db } }))).db).toBe(db);
  });

  it('refuses a body that is not JSON in plain text', () => {
    const error = thrown(() => parseV2Call(stateWith(undefined, 'Unexpected end of JSON input')));
    expect(error).toBeInstanceOf(V2RequestShapeError);
    expect(error.httpStatus).toBe(400);
    expect(error.message).toBe('body: Unexpected end of JSON input');
  });

  it('refuses a body that is not JSON with a generic message when the reason is unknown', () => {
    const error = thrown(() => parseV2Call(stateWith(undefined)));
    expect(error).toBeInstanceOf(V2RequestShapeError);
    expect(error.message).toBe('body: the request body is not valid JSON');
  });

  it.each([
    [null, 'null'],
    [[], 'array'],
    ['text', 'string'],
    [3, 'number'],
    [false, 'boolean'],
  ])('refuses the JSON body %j: "body: expected object, received %s"', (body, received) => {
    const error = thrown(() => parseV2Call(stateWith(body)));
    expect(error).toBeInstanceOf(V2RequestShapeError);
    expect(error.message).toBe(`body: expected object, received ${received}`);
  });

  it.each([
    ['kwargs an array', { kwargs: [] }, 'kwargs: expected object, received array'],
    ['kwargs a string', { kwargs: '{}' }, 'kwargs: expected object, received string'],
    ['kwargs null', { kwargs: null }, 'kwargs: expected object, received null'],
    ['kwargs missing', { kwargs: undefined }, 'kwargs: is required'],
    ['id missing', { id: undefined }, 'id: is required'],
    ['id a number', { id: 1 }, 'id: expected string, received number'],
    ['model_id missing', { model_id: undefined }, 'model_id: is required'],
    ['model_id an array', { model_id: ['res.partner'] }, 'model_id: expected string, received array'],
    ['method missing', { method: undefined }, 'method: is required'],
    ['method a number', { method: 5 }, 'method: expected string, received number'],
    ['erp_instance missing', { erp_instance: undefined }, 'erp_instance: is required'],
    ['erp_instance null', { erp_instance: null }, 'erp_instance: expected object, received null'],
    ['url missing', { erp_instance: { ...v2Instance, url: undefined } }, 'erp_instance.url: is required'],
    [
      'url not a URL',
      { erp_instance: { ...v2Instance, url: 'not a url' } },
      'erp_instance.url: must be an absolute URL',
    ],
    ['db missing', { erp_instance: { ...v2Instance, db: undefined } }, 'erp_instance.db: is required'],
    [
      'db a number',
      { erp_instance: { ...v2Instance, db: 1 } },
      'erp_instance.db: expected string, received number',
    ],
    [
      'api_key missing',
      { erp_instance: { ...v2Instance, api_key: undefined } },
      'erp_instance.api_key: is required',
    ],
    [
      'api_key an object',
      { erp_instance: { ...v2Instance, api_key: { k: ERP_KEY } } },
      'erp_instance.api_key: expected string, received object',
    ],
  ])('refuses %s as a shape error naming the field', (_label, overrides, expected) => {
    // Prepare
    const state = stateWith(v2Body(overrides));
    // Act
    const error = thrown(() => parseV2Call(state));
    // Assess
    expect(error).toBeInstanceOf(V2RequestShapeError);
    expect(error.httpStatus).toBe(400);
    expect(error.message).toContain(expected);
    expect(error.message).not.toContain(ERP_KEY);
  });

  const badNames = [
    ['a slash', 'res/partner', 'search/read'],
    ['a parent segment', '..', '..'],
    ['a path escape', 'res.partner/../../web', '../web'],
    ['a percent', 'res%2Epartner', 'search%2Fread'],
    ['a question mark', 'res.partner?x=1', 'search?x=1'],
    ['a hash', 'res.partner#x', 'search#x'],
    ['a space', 'res partner', 'search read'],
    ['nothing', '', ''],
    ['CR/LF', 'res.partner\r\nX-Injected: 1', 'search\r\nX-Injected: 1'],
    ['a NUL', 'res\u0000partner', 'search\u0000'],
    ['a control character', 'res\u001bpartner', 'se\u0007arch'],
    ['non-ASCII', 'rés.partner', 'séarch'],
    ['a leading space', ' res.partner', ' search'],
    ['a trailing space', 'res.partner ', 'search '],
    ['a hyphen', 'res-partner', 'search-read'],
  ] as const;

  it.each(badNames)('refuses a model with %s with -32007', (_label, model) => {
    const error = thrown(() => parseV2Call(stateWith(v2Body({ model_id: model }))));
    expect(error).toBeInstanceOf(InvalidV2TargetError);
    expect(error.code).toBe(-32007);
    expect(error.httpStatus).toBe(400);
    expect(error.message).toMatch(/^Invalid model_id /);
  });

  it.each(badNames)('refuses a method with %s with -32007', (_label, _model, method) => {
    const error = thrown(() => parseV2Call(stateWith(v2Body({ method }))));
    expect(error).toBeInstanceOf(InvalidV2TargetError);
    expect(error.code).toBe(-32007);
    expect(error.message).toMatch(/^Invalid method /);
  });

  it.each([
    ['empty segments', 'res..partner'],
    ['a leading dot', '.res.partner'],
    ['a trailing dot', 'res.partner.'],
    ['only a dot', '.'],
  ])('refuses a model with %s with -32007', (_label, model) => {
    const error = thrown(() => parseV2Call(stateWith(v2Body({ model_id: model }))));
    expect(error.code).toBe(-32007);
  });

  it.each([
    ['a dot', 'search.read'],
    ['a leading digit', '1search'],
    ['a dotted private name', '_a.b'],
  ])('refuses a method with %s with -32007', (_label, method) => {
    const error = thrown(() => parseV2Call(stateWith(v2Body({ method }))));
    expect(error.code).toBe(-32007);
  });

  it('shows control characters in a refused name escaped, on one line', () => {
    const error = thrown(() => parseV2Call(stateWith(v2Body({ model_id: 'res\r\nX-Evil: 1' }))));
    expect(error.message).toContain('res\\r\\nX-Evil: 1');
    expect(error.message).not.toMatch(/[\r\n]/);
  });

  it('shortens a long refused name in the message', () => {
    const error = thrown(() => parseV2Call(stateWith(v2Body({ method: `${'a'.repeat(200)}/` }))));
    expect(error.message).toContain(`${'a'.repeat(80)}...`);
    expect(error.message).not.toContain('a'.repeat(81));
  });

  it('checks the model before the method', () => {
    const error = thrown(() => parseV2Call(stateWith(v2Body({ model_id: 'a/b', method: 'c/d' }))));
    expect(error.message).toMatch(/model_id/);
  });

  const badHeaderValues = [
    ['empty', ''],
    ['only a space', ' '],
    ['a leading space', ' erp_a'],
    ['a trailing space', 'erp_a '],
    ['CR/LF', 'erp_a\r\nX-Injected: 1'],
    ['a LF', 'erp_a\n'],
    ['a tab', 'erp\ta'],
    ['a NUL', 'erp\u0000a'],
    ['DEL', 'erp\u007fa'],
    ['non-ASCII', 'erp_ä'],
    ['a non-BMP character', 'erp_😀'],
  ] as const;

  it.each(badHeaderValues)('refuses a db with %s with -32007', (_label, db) => {
    const error = thrown(() => parseV2Call(stateWith(v2Body({ erp_instance: { ...v2Instance, db } }))));
    expect(error).toBeInstanceOf(InvalidV2TargetError);
    expect(error.code).toBe(-32007);
    expect(error.message).toMatch(/erp_instance\.db/);
  });

  it.each(badHeaderValues)('refuses an api_key with %s with -32007, never showing the key', (_label, bad) => {
    // Prepare: the marker makes any echo of the key visible.
    const apiKey = `${bad.slice(0, 1)}${ERP_KEY}${bad.slice(1)}`;
    const keyWithBadForm = bad === '' ? '' : apiKey;
    // Act
    const error = thrown(() =>
      parseV2Call(stateWith(v2Body({ erp_instance: { ...v2Instance, api_key: keyWithBadForm } }))),
    );
    // Assess
    expect(error).toBeInstanceOf(InvalidV2TargetError);
    expect(error.code).toBe(-32007);
    expect(error.message).toMatch(/erp_instance\.api_key/);
    expect(error.message).not.toContain(ERP_KEY);
  });

  it('checks the db before the api_key', () => {
    const error = thrown(() =>
      parseV2Call(stateWith(v2Body({ erp_instance: { ...v2Instance, db: ' ', api_key: ' ' } }))),
    );
    expect(error.message).toMatch(/erp_instance\.db/);
  });
});

describe('target host names', () => {
  // DNS's limit: 253 characters, a trailing dot aside (four labels of 63 and one of 1 = 253).
  const host253 = `${['a', 'b', 'c'].map((c) => c.repeat(63)).join('.')}.${'d'.repeat(61)}`;

  it('accepts a host name of 253 characters, a trailing dot aside', () => {
    expect(host253).toHaveLength(253);
    for (const url of [`https://${host253}`, `https://${host253}.`]) {
      expect(parseVersionTarget(stateWith({ id: 'v', url })).hostname).toMatch(/^a{63}\./);
    }
  });

  it('refuses a longer one without repeating it (v1 and version -32600, v2 plain text)', () => {
    for (const host of [`${host253}e`, 'h'.repeat(3_000_000)]) {
      const url = `https://${host}`;
      const errors = [
        thrown(() => parseVersionTarget(stateWith({ id: 'v', url }))),
        thrown(() => parseV1Call(stateWith(v1Body({ erp_instance: { ...v1Instance, url } })))),
        thrown(() => parseV2Call(stateWith(v2Body({ erp_instance: { ...v2Instance, url } })))),
      ];
      expect(errors.map((e) => e.constructor)).toEqual([
        InvalidRequestError,
        InvalidRequestError,
        V2RequestShapeError,
      ]);
      for (const error of errors) {
        expect(error.message).toMatch(/url: the host name is longer than 253 characters/);
        expect(error.message.length).toBeLessThan(200);
      }
    }
  });
});

describe('parseVersionTarget', () => {
  it('returns the target URL and records its host', () => {
    const state = stateWith({ id: 'v-1', url: 'https://erp.example.com/odoo' });
    const url = parseVersionTarget(state);
    expect(url.href).toBe('https://erp.example.com/odoo');
    expect(state.erpHost).toBe('erp.example.com');
    expect(state.erpDb).toBeUndefined();
  });

  it('refuses a body that is not JSON with -32700', () => {
    const error = thrown(() => parseVersionTarget(stateWith(undefined, 'Unexpected token')));
    expect(error).toBeInstanceOf(ParseError);
    expect(error.code).toBe(-32700);
  });

  it.each([
    [[], 'Invalid request: the body must be a JSON object'],
    [{ id: 'v' }, 'url: is required'],
    [{ url: 'https://erp' }, 'id: is required'],
    [{ id: 'v', url: '' }, 'url: must not be empty'],
    [{ id: 'v', url: 'erp.example.com' }, 'url: must be an absolute URL'],
    [{ id: 'v', url: 'https://erp/?a=1' }, 'url: must be a base URL'],
    [{ id: 'v', url: 5 }, 'url: expected string, received number'],
  ])('refuses %j with -32600', (body, expected) => {
    const error = thrown(() => parseVersionTarget(stateWith(body)));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.message).toContain(expected);
  });
});

describe('the request schemas', () => {
  it('are built once, on first use, and shared: every call gives the same schema', () => {
    expect(v1ExecuteSchema()).toBe(v1ExecuteSchema());
    expect(v2ExecuteSchema()).toBe(v2ExecuteSchema());
    expect(versionSchema()).toBe(versionSchema());
    // The OpenAPI document (bin/openapi.ts) refers to the shared parts by identity.
    expect(v1ExecuteSchema().shape.erp_instance).toBe(erpInstanceV1());
    expect(v2ExecuteSchema().shape.erp_instance).toBe(erpInstanceV2());
    expect(versionSchema().shape.url).toBe(baseUrl());
    expect(erpInstanceV1().shape.url).toBe(baseUrl());
  });
});
