/**
 * The protocol bridge's pure parts (README, "One envelope for every ERP version"): naming v1's
 * positional arguments, execute_kw's argument forms for a v2 call, JSON-2's status for an
 * exception class, the major version, and the signatures of a recorded `/doc-bearer` document.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../lambdas/platform/errors.ts';
import type { ErpCall } from '../../lambdas/upstream/erp-transport.ts';
import {
  BUILT_IN_SIGNATURES,
  builtInSignature,
  READ_GROUP_20,
  signaturesFromDoc,
} from '../../lambdas/upstream/method-signatures.ts';
import { isOldReadGroup, removedMethodRefusal } from '../../lambdas/upstream/removed-methods.ts';
import { toV1Outcome, translateV1ToJson2 } from '../../lambdas/upstream/v1-over-json2.ts';
import { json2FailureOf, translateV2ToExecuteKw } from '../../lambdas/upstream/v2-over-jsonrpc.ts';
import { majorVersion } from '../../lambdas/upstream/version-client.ts';

const call = (
  method: string,
  argsJson: string,
  kwargsJson = '{}',
  extra: Partial<ErpCall> = {},
): ErpCall => ({
  baseUrl: new URL('http://127.0.0.1:8069'),
  db: 'erp_a',
  apiKey: 'k',
  uid: 2,
  model: 'res.partner',
  method,
  argsJson,
  kwargsJson,
  ...extra,
});

const builtIn = (method: string) => BUILT_IN_SIGNATURES.get(method);

function capture(name: string): { response: { body: unknown } } {
  return JSON.parse(readFileSync(new URL(`../erp-double/captures/${name}`, import.meta.url), 'utf8'));
}

describe('v1 → JSON-2: naming the positional params', () => {
  it.each([
    ['search_count', '[[["is_company","=",true]]]', '{}', '{"domain":[["is_company","=",true]]}'],
    ['search', '[[], 0, 5, "name asc"]', '{}', '{"domain":[],"offset":0,"limit":5,"order":"name asc"}'],
    ['read', '[[15, 11], ["name"]]', '{}', '{"ids":[15, 11],"fields":["name"]}'],
    ['fields_get', '[]', '{"attributes":["type"]}', '{"attributes":["type"]}'],
    [
      'search_read',
      '[[]]',
      '{"fields":["name"],"context":{"lang":"fr_FR"}}',
      '{"domain":[],"fields":["name"],"context":{"lang":"fr_FR"}}',
    ],
    ['write', '[[7], {"phone": "1"}]', '{}', '{"ids":[7],"vals":{"phone": "1"}}'],
    ['unlink', '[[7, 8]]', '{}', '{"ids":[7, 8]}'],
    ['create', '[[{"name":"A"}]]', '{}', '{"vals_list":[{"name":"A"}]}'],
  ])('%s %s %s → %s', (method, args, kwargs, body) => {
    expect(translateV1ToJson2(call(method, args, kwargs), builtIn(method)).body).toBe(body);
  });

  it('moves the arguments as the bytes the caller wrote (1.0, 1e400, 20-digit integers)', () => {
    const translated = translateV1ToJson2(
      call('write', '[[12345678901234567890], {"x": 1.0, "y": 1e400}]'),
      builtIn('write'),
    );
    expect(translated.body).toBe('{"ids":[12345678901234567890],"vals":{"x": 1.0, "y": 1e400}}');
  });

  it('create from one dict: sent as a one-element vals_list, answered with the bare id', () => {
    const translated = translateV1ToJson2(call('create', '[{"name":"A"}]'), builtIn('create'));
    expect(translated).toEqual({ body: '{"vals_list":[{"name":"A"}]}', unwrapSingleId: true });
    expect(toV1Outcome({ kind: 'raw_result', json: Buffer.from('[55]') }, translated)).toEqual({
      kind: 'result',
      value: 55,
    });
    const fromList = translateV1ToJson2(call('create', '[[{"name":"A"}]]'), builtIn('create'));
    expect(toV1Outcome({ kind: 'raw_result', json: Buffer.from('[55]') }, fromList)).toEqual({
      kind: 'raw_result',
      json: Buffer.from('[55]'),
    });
  });

  it('ERP errors keep the ERP message and data, with v1 code 0', () => {
    const data = { name: 'werkzeug.exceptions.Unauthorized', message: 'Invalid apikey' };
    const outcome = toV1Outcome(
      { kind: 'erp_error', code: 401, message: 'Invalid apikey', data },
      { body: '{}', unwrapSingleId: false },
    );
    expect(outcome).toEqual({ kind: 'erp_error', code: 0, message: 'Invalid apikey', data });
  });

  it('without a signature, params of [] and [ids] still work', () => {
    expect(translateV1ToJson2(call('x_custom', '[]', '{"flag":true}'), undefined).body).toBe('{"flag":true}');
    expect(translateV1ToJson2(call('x_custom', '[[1,2]]'), undefined).body).toBe('{"ids":[1,2]}');
  });

  it.each([
    ['other positional values without a signature', 'x_custom', '["Azure"]', '{}', false],
    ['ids then more without a signature', 'x_custom', '[[1], {"a": 1}]', '{}', false],
    ['more positional params than the method takes', 'search_count', '[[], 5, 6]', '{}', true],
    ['one argument both in params and keyword', 'search', '[[], 0]', '{"offset": 1}', true],
  ])('refuses %s with -32600 naming the method and v2', (_why, method, args, kwargs, known) => {
    const attempt = () => translateV1ToJson2(call(method, args, kwargs), known ? builtIn(method) : undefined);
    expect(attempt).toThrow(InvalidRequestError);
    expect(attempt).toThrow(new RegExp(`res\\.partner\\.${method}.*v2`, 's'));
  });

  it('refuses positional values for a method that takes *args', () => {
    const signature = { model: true, params: [{ name: 'args', kind: 'VAR_POSITIONAL' as const }] };
    expect(() => translateV1ToJson2(call('concat', '[1]'), signature)).toThrow(/\*args/);
  });

  it('keyword-only parameters come from keyword only', () => {
    const signature = {
      model: true,
      params: [
        { name: 'a', kind: 'POSITIONAL_OR_KEYWORD' as const },
        { name: 'b', kind: 'KEYWORD_ONLY' as const },
      ],
    };
    expect(translateV1ToJson2(call('m', '[1]', '{"b":2}'), signature).body).toBe('{"a":1,"b":2}');
    expect(() => translateV1ToJson2(call('m', '[1, 2]'), signature)).toThrow(InvalidRequestError);
  });
});

describe('JSON-2 → execute_kw: argument forms', () => {
  it.each([
    [
      'search_read',
      '{"domain":[],"fields":["name"],"limit":2}',
      '[]',
      '{"domain":[],"fields":["name"],"limit":2}',
    ],
    ['read', '{"ids":[15,11],"fields":["name"]}', '[[15,11]]', '{"fields":["name"]}'],
    ['write', '{"ids":[7],"vals":{"phone":"1"}}', '[[7]]', '{"vals":{"phone":"1"}}'],
    ['action_archive', '{}', '[[]]', '{}'],
    ['create', '{"vals_list":[{"name":"A"}]}', '[[{"name":"A"}]]', '{}'],
    [
      'create',
      '{"vals_list":{"name":"A"},"context":{"lang":"en_US"}}',
      '[[{"name":"A"}]]',
      '{"context":{"lang":"en_US"}}',
    ],
    ['x_custom_record', '{"ids":[3],"flag":true}', '[[3]]', '{"flag":true}'],
    ['x_custom_model', '{"flag":true}', '[]', '{"flag":true}'],
  ])('%s %s → args %s, kwargs %s', (method, kwargs, args, named) => {
    expect(translateV2ToExecuteKw(call(method, '[]', kwargs))).toEqual({ argsJson: args, kwargsJson: named });
  });
});

describe("JSON-2's status for an execute_kw error", () => {
  it.each([
    [{ name: 'odoo.exceptions.AccessDenied', message: 'Access Denied' }, 401],
    [{ name: 'odoo.exceptions.AccessError', message: 'no' }, 403],
    [{ name: 'odoo.exceptions.MissingError', message: 'gone' }, 404],
    [{ name: 'odoo.exceptions.ValidationError', message: 'bad' }, 422],
    [{ name: 'odoo.exceptions.UserError', message: 'bad' }, 422],
    [{ name: 'odoo.exceptions.UserError', message: "Object res.partnerx doesn't exist" }, 404],
    [{ name: 'odoo.exceptions.LockError', message: 'locked' }, 409],
    [{ name: 'odoo.exceptions.RedirectWarning', message: 'go' }, 500],
    [{ name: 'builtins.AttributeError', message: "The method 'res.partner.nope' does not exist" }, 404],
    [
      {
        name: 'builtins.TypeError',
        message: "BaseModel.search_count() got an unexpected keyword argument 'foo'",
      },
      422,
    ],
    [{ name: 'builtins.ValueError', message: 'Invalid field' }, 500],
    [{ name: 'builtins.IndexError', message: 'list index out of range' }, 500],
    ['not an object', 500],
  ])('%j → %i', (data, status) => {
    expect(json2FailureOf(data, 'search_count').code).toBe(status);
  });
});

describe("json2FailureOf: JSON-2's name where execute_kw names the same failure differently", () => {
  it.each([
    [
      { name: 'odoo.exceptions.AccessDenied', message: 'Access Denied' },
      401,
      'werkzeug.exceptions.Unauthorized',
    ],
    [
      { name: 'odoo.exceptions.UserError', message: "Object res.partnerx doesn't exist" },
      404,
      'werkzeug.exceptions.NotFound',
    ],
    [
      { name: 'builtins.AttributeError', message: "The method 'res.partner.nope' does not exist" },
      404,
      'werkzeug.exceptions.NotFound',
    ],
    // Odoo 17 words it so, and Odoo 16 leaves it to Python's getattr.
    [
      {
        name: 'builtins.AttributeError',
        message: "The method 'nope' does not exist on the model 'res.partner'",
      },
      404,
      'werkzeug.exceptions.NotFound',
    ],
    [
      {
        name: 'builtins.AttributeError',
        message: "type object 'res.partner' has no attribute 'search_count'",
      },
      404,
      'werkzeug.exceptions.NotFound',
    ],
    // ... but only for the called method: another attribute missing further in is the ERP's bug.
    [
      { name: 'builtins.AttributeError', message: "type object 'res.partner' has no attribute '_other'" },
      500,
      undefined,
    ],
    [
      {
        name: 'builtins.TypeError',
        message: "BaseModel.search_count() got an unexpected keyword argument 'foo'",
      },
      422,
      'werkzeug.exceptions.UnprocessableEntity',
    ],
    // The same class on both protocols: the ERP's own name stays.
    [{ name: 'odoo.exceptions.AccessError', message: 'no' }, 403, undefined],
    [{ name: 'odoo.exceptions.UserError', message: 'bad' }, 422, undefined],
    [{ name: 'builtins.TypeError', message: "'bool' object is not subscriptable" }, 500, undefined],
    ['not an object', 500, undefined],
  ])('%j → %i %s', (data, code, name) => {
    expect(json2FailureOf(data, 'search_count')).toEqual({ code, name });
  });
});

it('a TypeError raised further in than the called method is no unbound argument: 500, its own name (as JSON-2)', () => {
  const inner = {
    name: 'builtins.TypeError',
    message: "BaseModel._read_format() got an unexpected keyword argument 'foo'",
  };
  expect(json2FailureOf(inner, 'search_read')).toEqual({ code: 500, name: undefined });
  expect(json2FailureOf(inner, '_read_format')).toEqual({
    code: 422,
    name: 'werkzeug.exceptions.UnprocessableEntity',
  });
  const missing = {
    name: 'builtins.TypeError',
    message: "ResPartner.write() missing 1 required positional argument: 'vals'",
  };
  expect(json2FailureOf(missing, 'write').code).toBe(422);
});

describe('majorVersion', () => {
  it.each([
    [[19, 0, 0, 'final', 0, ''], 19],
    [['saas~18', 3, 0, 'final', 0, ''], 18],
    [['saas~17.4', 0, 0, 'final', 0, ''], 17],
    [['master', 0, 0, 'alpha', 0, ''], undefined],
    [[1.5, 0, 0, 'final', 0, ''], undefined],
  ] as const)('%j → %s', (info, major) => {
    expect(majorVersion({ version_info: info, version: 'x' })).toBe(major);
  });
});

describe('signatures from a recorded /doc-bearer document (Odoo 19, res.partner)', () => {
  const signatures = signaturesFromDoc(capture('doc-bearer-res.partner-admin.json').response.body);

  it('reads parameters in order, kinds, and model vs record methods', () => {
    expect(signatures?.get('search_read')).toEqual(BUILT_IN_SIGNATURES.get('search_read'));
    expect(signatures?.get('read')?.model).toBe(false);
    expect(signatures?.get('name_search')).toEqual(BUILT_IN_SIGNATURES.get('name_search'));
    expect(
      signatures
        ?.get('message_post')
        ?.params.every((p) => p.kind === 'KEYWORD_ONLY' || p.kind === 'VAR_KEYWORD'),
    ).toBe(true);
  });

  it('agrees with the built-in table on every method the document lists', () => {
    for (const [method, signature] of BUILT_IN_SIGNATURES) {
      const documented = signatures?.get(method);
      if (documented) expect(documented, method).toEqual(signature);
    }
    // Deprecated methods are left out of the document: the built-in table has them.
    expect(signatures?.has('read_group')).toBe(false);
    expect(signatures?.has('toggle_active')).toBe(false);
  });

  it('is undefined for something that is not a document', () => {
    expect(signaturesFromDoc({ fields: {} })).toBeUndefined();
    expect(signaturesFromDoc('x')).toBeUndefined();
  });
});

describe('built-in signatures by ERP version (ERP 20 and later)', () => {
  it('keeps the 16-19 table below 20 and when the version is unknown', () => {
    for (const major of [16, 19, undefined]) {
      expect(builtInSignature('read_group', major)).toEqual(BUILT_IN_SIGNATURES.get('read_group'));
      expect(builtInSignature('toggle_active', major)).toEqual(BUILT_IN_SIGNATURES.get('toggle_active'));
    }
  });

  it('gives read_group its 20 form and toggle_active none on 20, 21 and 22; the other methods keep theirs', () => {
    for (const major of [20, 21, 22]) {
      expect(builtInSignature('read_group', major)).toEqual(READ_GROUP_20);
      expect(builtInSignature('toggle_active', major)).toBeUndefined();
      for (const method of ['search_read', 'create', 'action_archive', 'action_unarchive'])
        expect(builtInSignature(method, major)).toEqual(BUILT_IN_SIGNATURES.get(method));
    }
    expect(READ_GROUP_20.params.map((p) => p.name)).toEqual([
      'domain',
      'groupby',
      'aggregates',
      'having',
      'offset',
      'limit',
      'order',
    ]);
  });

  it('names a 20 form read_group after the 20 signature', () => {
    const translated = translateV1ToJson2(
      call('read_group', '[[], ["country_id"], ["__count", "id:max"]]'),
      builtInSignature('read_group', 20),
    );
    expect(translated.body).toBe('{"domain":[],"groupby":["country_id"],"aggregates":["__count", "id:max"]}');
  });
});

describe('calls written for ERP 16-19 that ERP 20+ no longer takes', () => {
  it.each([
    ['a 16-19 name in keyword (lazy)', '[[], ["is_company"], ["is_company"]]', '{"lazy":true}'],
    ['fields by name', '[]', '{"domain":[],"fields":["amount:sum"],"groupby":["partner_id"]}'],
    ['orderby by name', '[[]]', '{"groupby":["partner_id"],"orderby":"partner_id"}'],
    ['an aggregate in second place (fields)', '[[], ["amount_total:sum"], ["partner_id"]]', '{}'],
    ['an old-style aggregate in second place', '[[], ["total:sum(amount_total)"], []]', '{}'],
    ['a groupby in third place', '[[], ["amount_total"], ["partner_id"]]', '{}'],
    ['a groupby string in third place', '[[], ["amount_total"], "partner_id"]', '{}'],
    ['an offset in fourth place', '[[], ["name"], [], 0]', '{}'],
    ['an orderby in sixth place', '[[], ["name"], [], [], 0, "name"]', '{}'],
    ['lazy in seventh place', '[[], ["name"], [], [], 0, null, false]', '{}'],
  ])('read_group, %s: the old form', (_what, args, kwargs) => {
    expect(isOldReadGroup(call('read_group', args, kwargs))).toBe(true);
    const refusal = removedMethodRefusal(call('read_group', args, kwargs), 20);
    expect(refusal).toMatch(/^Invalid request: res\.partner\.read_group is written in its ERP 16-19 form/);
    expect(refusal).toMatch(
      /formatted_read_group\(domain, groupby, aggregates, having, offset, limit, order\)/,
    );
    expect(refusal).toMatch(/"__count"/);
    expect(refusal).toMatch(/read_group in its ERP 20 form through call_method/);
    // Below 20 (and without a version) it is the form the ERP takes.
    expect(removedMethodRefusal(call('read_group', args, kwargs), 19)).toBeUndefined();
    expect(removedMethodRefusal(call('read_group', args, kwargs), undefined)).toBeUndefined();
  });

  it.each([
    ['by name', '[]', '{"domain":[],"groupby":["partner_id"],"aggregates":["__count","amount_total:sum"]}'],
    ['by position', '[[], ["partner_id", "date:month"], ["__count", "amount_total:sum"]]', '{}'],
    [
      'with having, offset, limit and order',
      '[[], ["partner_id"], ["__count"], [["__count", ">", 1]], 0, 10, "__count desc"]',
      '{}',
    ],
    ['what fits both forms (then the 20 one)', '[[], ["name"], []]', '{}'],
  ])('read_group in its 20 form, %s: sent', (_what, args, kwargs) => {
    expect(isOldReadGroup(call('read_group', args, kwargs))).toBe(false);
    expect(removedMethodRefusal(call('read_group', args, kwargs), 20)).toBeUndefined();
  });

  it('refuses toggle_active on 20+ naming action_archive and action_unarchive; other methods pass', () => {
    for (const major of [20, 21, 22]) {
      expect(removedMethodRefusal(call('toggle_active', '[[7]]'), major)).toMatch(
        /toggle_active does not exist on ERP \d+.*action_archive.*action_unarchive/,
      );
      expect(removedMethodRefusal(call('action_archive', '[[7]]'), major)).toBeUndefined();
      expect(removedMethodRefusal(call('search_read', '[[]]', '{"fields":["name"]}'), major)).toBeUndefined();
    }
    expect(removedMethodRefusal(call('toggle_active', '[[7]]'), 19)).toBeUndefined();
  });
});
