/**
 * Unit tests of the ERP double: the domain evaluator (in-process) and the version modes (over loopback).
 */
import { Agent, request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_GROUP_20 } from '../../lambdas/upstream/method-signatures.ts';
import { Database } from './database.ts';
import { parseDomain } from './domain.ts';
import { OdooError } from './errors.ts';
import {
  DOUBLE_USERS,
  ERP_A_ADMIN_KEY,
  ERP_A_LIMITED_KEY,
  ERP_B_ADMIN_KEY,
  type ErpDouble,
  type ErpMode,
  startErpDouble,
} from './index.ts';
import { seedDatabase } from './models.ts';
import { type Env, searchIds } from './orm.ts';

function demoEnv(context: Record<string, unknown> = {}): Env {
  const db = new Database('erp_a');
  seedDatabase(db, { demo: true, users: DOUBLE_USERS });
  return { db, uid: 2, limited: false, context, mode: '19' };
}

function search(
  domain: unknown,
  options: { order?: string; limit?: number; offset?: number } = {},
  context = {},
): number[] {
  const env = demoEnv(context);
  const def = env.db.model('res.partner');
  if (!def) throw new Error('res.partner missing');
  return searchIds(env, def, domain, options);
}

function thrownBy(action: () => unknown): OdooError {
  try {
    action();
  } catch (error) {
    if (error instanceof OdooError) return error;
    throw error;
  }
  throw new Error('expected an OdooError');
}

describe('domain evaluator', () => {
  it('treats an empty domain as everything active, ordered by the model order', () => {
    const ids = search([], { order: 'id asc' });
    expect(ids).toContain(15);
    expect(ids).not.toContain(4); // archived "Public user"
  });

  it('supports comparison operators', () => {
    expect(search([['id', '=', 15]])).toEqual([15]);
    expect(search([['id', '>', 30]], { order: 'id' })).toEqual([33, 34, 42]);
    expect(
      search(
        [
          ['id', '>=', 33],
          ['id', '<=', 34],
        ],
        { order: 'id' },
      ),
    ).toEqual([33, 34]);
    expect(search([['id', '<', 3]], { order: 'id' })).toEqual([1]);
    expect(
      search([
        ['email', '=', false],
        ['is_company', '=', false],
      ]),
    ).toEqual([42]);
    expect(
      search([
        ['id', '!=', 15],
        ['is_company', '=', true],
      ]),
    ).not.toContain(15);
  });

  it('supports in / not in, including false for empty values', () => {
    expect(search([['id', 'in', [15, 42, 999]]], { order: 'id' })).toEqual([15, 42]);
    expect(
      search([
        ['id', 'not in', [1, 3]],
        ['is_company', '=', true],
      ]),
    ).not.toContain(1);
    expect(search([['parent_id', 'in', [8]]], { order: 'id' })).toEqual([17, 18, 33]);
    expect(search([['country_id', 'in', [false]]], { order: 'id' })).toEqual([3, 42]);
  });

  it('supports like, ilike, not ilike, =like and =ilike', () => {
    expect(search([['name', 'like', 'Wood']], { order: 'id' })).toEqual([8, 12]);
    expect(search([['name', 'like', 'corner']], { order: 'id' })).toEqual([]);
    expect(search([['name', 'ilike', 'wood']], { order: 'id' })).toEqual([8, 12]);
    expect(search([['name', '=like', 'Wood%']])).toEqual([8]);
    expect(search([['name', '=ilike', 'azure interior']])).toEqual([15]);
    expect(
      search(
        [
          ['is_company', '=', true],
          ['name', 'not ilike', 'o'],
        ],
        { order: 'id' },
      ),
    ).toEqual([10, 11, 13, 16]); // Gemini Furniture, Ready Mat, LightsUp, Lumber Inc (ids as captured)
    expect(search([['country_id', 'ilike', 'marino']])).toEqual([10]);
  });

  it('supports prefix &, | and ! operators', () => {
    expect(search(['|', ['id', '=', 15], ['id', '=', 42]], { order: 'id' })).toEqual([15, 42]);
    expect(search(['&', ['is_company', '=', true], ['name', 'ilike', 'azure']])).toEqual([15]);
    expect(search(['!', ['is_company', '=', true], ['parent_id', '=', 15]], { order: 'id' })).toEqual([
      27, 28, 34,
    ]);
    expect(search(['|', '&', ['id', '=', 15], ['name', '=', 'x'], ['id', '=', 42]])).toEqual([42]);
  });

  it('follows many2one paths', () => {
    expect(search([['parent_id.name', '=', 'Azure Interior']], { order: 'id' })).toEqual([27, 28, 34]);
    expect(search([['country_id.code', '=', 'SM']])).toEqual([10]);
  });

  it('hides archived records unless active_test is false or active is in the domain', () => {
    expect(search([['id', 'in', [2, 4, 15]]], { order: 'id' })).toEqual([15]);
    expect(search([['id', 'in', [2, 4, 15]]], { order: 'id' }, { active_test: false })).toEqual([2, 4, 15]);
    expect(search([['active', '=', false]], { order: 'id' })).toEqual([2, 4]);
  });

  it('applies order, offset and limit', () => {
    const companies = [['is_company', '=', true]];
    expect(search(companies, { order: 'id', limit: 5 })).toEqual([1, 8, 9, 10, 11]);
    expect(search(companies, { order: 'name asc', offset: 1, limit: 3 })).toEqual([15, 10, 13]);
    expect(search(companies, { order: 'id desc', limit: 2 })).toEqual([16, 15]);
    expect(thrownBy(() => search([], { order: 'nope desc' })).pyName).toBe('builtins.ValueError');
  });

  it('rejects a bare triple like Odoo 19 (reading from the end)', () => {
    const error = thrownBy(() => parseDomain(['is_company', '=', true]));
    expect(error.pyName).toBe('builtins.ValueError');
    expect(error.message).toBe('Domain() invalid item in domain: True');
  });

  it('rejects unknown fields and operators', () => {
    const field = thrownBy(() => search([['no_such_field', '=', 1]]));
    expect(field.message).toBe(
      "Invalid field res.partner.no_such_field in condition ('no_such_field', '=', 1)",
    );
    expect(thrownBy(() => search([['name', 'between', 1]])).pyName).toBe('builtins.ValueError');
    expect(thrownBy(() => search(['&', ['id', '=', 1]])).pyName).toBe('builtins.ValueError');
  });
});

interface Reply {
  status: number;
  contentType: string;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

async function post(
  url: string,
  body: string,
  headers: Record<string, string> = {},
  method = 'POST',
): Promise<Reply> {
  const response = await fetch(url, {
    method,
    headers: { 'Content-Type': 'application/json', ...headers },
    body,
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    headers: Object.fromEntries(response.headers.entries()),
    text: await response.text(),
  };
}

function rpcBody(service: string, method: string, args: unknown[], id: unknown = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', method: 'call', params: { service, method, args }, id });
}

function executeKw(
  model: string,
  method: string,
  args: unknown[],
  kwargs?: Record<string, unknown>,
  key = ERP_A_ADMIN_KEY,
): string {
  const params = ['erp_a', 2, key, model, method, args];
  return rpcBody('object', 'execute_kw', kwargs ? [...params, kwargs] : params);
}

function parse(reply: Reply): Record<string, unknown> {
  return JSON.parse(reply.text) as Record<string, unknown>;
}

function errorOf(reply: Reply): { code: unknown; data: Record<string, unknown> } {
  const error = parse(reply).error as { code: unknown; data: Record<string, unknown> };
  return error;
}

const MODES: readonly ErpMode[] = ['16', '17', '18', '19', '22'];
const doubles = new Map<ErpMode, ErpDouble>();

beforeAll(async () => {
  for (const mode of MODES) doubles.set(mode, await startErpDouble({ mode }));
});

afterAll(async () => {
  for (const double of doubles.values()) await double.close();
});

function erp(mode: ErpMode): ErpDouble {
  const double = doubles.get(mode);
  if (!double) throw new Error(`no double for ${mode}`);
  double.reset();
  return double;
}

describe.each(['16', '17', '18'] as const)('mode %s (legacy only)', (mode) => {
  it('reports its version over common.version', async () => {
    const reply = await post(`${erp(mode).url}/jsonrpc`, rpcBody('common', 'version', []));
    const result = parse(reply).result as Record<string, unknown>;
    expect(result.server_version_info).toEqual([Number(mode), 0, 0, 'final', 0, '']);
    expect(String(result.server_version)).toMatch(new RegExp(`^${mode}\\.0`));
    expect(result.protocol_version).toBe(1);
  });

  it('answers errors with code 200 and the 16-18 key order', async () => {
    const reply = await post(
      `${erp(mode).url}/jsonrpc`,
      executeKw('res.partner', 'search_count', [[]], undefined, 'wrong'),
    );
    expect(reply.status).toBe(200);
    const error = errorOf(reply);
    expect(error.code).toBe(200);
    expect(error.data.name).toBe('odoo.exceptions.AccessDenied');
    expect(Object.keys(error.data)).toEqual(['name', 'debug', 'message', 'arguments', 'context']);
  });

  it('has no /web/version and no JSON-2', async () => {
    const version = await fetch(`${erp(mode).url}/web/version`);
    expect(version.status).toBe(404);
    expect(version.headers.get('content-type')).toMatch(/^text\/html/);
    const json2 = await post(`${erp(mode).url}/json/2/res.partner/search_count`, '{"domain": []}', {
      Authorization: `bearer ${ERP_A_ADMIN_KEY}`,
      'X-Odoo-Database': 'erp_a',
    });
    expect(json2.status).toBe(404);
    expect(json2.contentType).toMatch(/^text\/html/);
  });

  it('refuses a wrong content type with a 400 HTML page', async () => {
    const reply = await post(`${erp(mode).url}/jsonrpc`, rpcBody('common', 'version', []), {
      'Content-Type': 'text/plain',
    });
    expect(reply.status).toBe(400);
    expect(reply.contentType).toMatch(/^text\/html/);
    // 16-18 give `_set_request_dispatcher`'s sentence alone (captures o18-, o17-, o16-v1-wrong-content-type).
    expect(reply.text).not.toContain('Please verify');
  });

  // Code 16-18 share, worded as the real 18.0 words it (captures o18-v1-*; o17-* and o16-* word the captured cases alike).
  it('words what 16-18 share like the captured 18.0', async () => {
    const url = erp(mode).url;
    const message = async (body: string) => errorOf(await post(`${url}/jsonrpc`, body)).data.message;
    expect(await message(executeKw('res.partner', 'action_archive', []))).toBe('tuple index out of range');
    expect(await message(executeKw('res.partner', 'create', [], { vals_list: [{ name: 'x' }] }))).toBe(
      'tuple index out of range',
    );
    expect(await message(executeKw('res.partner', 'search', [[['nope', '=', 1]]]))).toBe(
      "Invalid field res.partner.nope in leaf ('nope', '=', 1)",
    );
    // 18's expression.py turns `a.b` into `a any [(b, ...)]` and names the rewritten leaf.
    expect(await message(executeKw('res.partner', 'search', [[['parent_id.nope', '=', 1]]]))).toBe(
      "Invalid field res.partner.nope in leaf ('nope', '=', 1)",
    );
    expect(await message(executeKw('res.partner', 'search', [[['name', 'bad', 1]]]))).toBe(
      "Invalid leaf ('name', 'bad', 1)",
    );
    const limitedCreate = rpcBody('object', 'execute_kw', [
      'erp_a',
      7,
      ERP_A_LIMITED_KEY,
      'res.partner',
      'create',
      [{ name: 'x' }],
    ]);
    expect(await message(limitedCreate)).toContain('\t- Extra Rights/Contact Creation\n');
  });

  it('copies one record into a bare id up to 17, into a list of ids from 18', async () => {
    const url = erp(mode).url;
    const result = parse(await post(`${url}/jsonrpc`, executeKw('res.partner', 'copy', [[15]]))).result;
    expect(result).toEqual(mode === '18' ? [43] : 43);
    const many = await post(`${url}/jsonrpc`, executeKw('res.partner', 'copy', [[15, 16]]));
    if (mode === '18') expect(parse(many).result).toEqual([44, 45]);
    else expect(errorOf(many).data.message).toBe('Expected singleton: res.partner(15, 16)');
  });

  it('words unknown methods like its version', async () => {
    const data = errorOf(await post(`${erp(mode).url}/jsonrpc`, executeKw('res.partner', 'nope', [[]]))).data;
    expect(data.name).toBe('builtins.AttributeError');
    // 18.0 checks `get_public_method` first, worded as in 19 (capture o18-v1-err-unknown-method).
    const messages = {
      '16': "type object 'res.partner' has no attribute 'nope'",
      '17': "The method 'nope' does not exist on the model 'res.partner'",
      '18': "The method 'res.partner.nope' does not exist",
    } as const;
    expect(data.message).toBe(messages[mode]);
  });
});

describe('mode 19', () => {
  it('answers errors with code 0 and the 19 key order', async () => {
    const error = errorOf(await post(`${erp('19').url}/jsonrpc`, executeKw('res.partnerx', 'search', [[]])));
    expect(error.code).toBe(0);
    expect(error.data.name).toBe('odoo.exceptions.UserError');
    expect(error.data.message).toBe("Object res.partnerx doesn't exist");
    expect(Object.keys(error.data)).toEqual(['name', 'message', 'arguments', 'context', 'debug']);
  });

  it('serves /web/version with exactly version_info and version', async () => {
    const reply = await fetch(`${erp('19').url}/web/version`);
    expect(reply.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await reply.json()).toEqual({ version_info: [19, 0, 0, 'final', 0, ''], version: '19.0' });
  });

  it('creates with a dict (bare id) or a list (ids) over JSON-RPC, and always a list over JSON-2', async () => {
    const url = erp('19').url;
    expect(
      parse(await post(`${url}/jsonrpc`, executeKw('res.partner', 'create', [{ name: 'One' }]))).result,
    ).toBe(43);
    expect(
      parse(
        await post(`${url}/jsonrpc`, executeKw('res.partner', 'create', [[{ name: 'A' }, { name: 'B' }]])),
      ).result,
    ).toEqual([44, 45]);
    const json2 = await post(
      `${url}/json/2/res.partner/create`,
      JSON.stringify({ vals_list: { name: 'C' } }),
      {
        Authorization: `Bearer ${ERP_A_ADMIN_KEY}`,
        'X-Odoo-Database': 'erp_a',
      },
    );
    expect(JSON.parse(json2.text)).toEqual([46]);
  });

  it('answers a None result with neither result nor error (JSON-RPC) and null (JSON-2)', async () => {
    const url = erp('19').url;
    const rpc = parse(await post(`${url}/jsonrpc`, executeKw('res.partner', 'action_archive', [[15]])));
    expect(rpc).toEqual({ jsonrpc: '2.0', id: 1 });
    const json2 = await post(`${url}/json/2/res.partner/action_unarchive`, JSON.stringify({ ids: [15] }), {
      Authorization: `bearer ${ERP_A_ADMIN_KEY}`,
      'X-Odoo-Database': 'erp_a',
    });
    expect(json2.text).toBe('null');
  });

  it('keeps each database separate and checks keys per database', async () => {
    const url = erp('19').url;
    const onB = (key: string) =>
      post(
        `${url}/jsonrpc`,
        rpcBody('object', 'execute_kw', ['erp_b', 2, key, 'res.partner', 'search_count', [[]]]),
      );
    expect(parse(await onB(ERP_B_ADMIN_KEY)).result).toBe(2);
    expect(errorOf(await onB(ERP_A_ADMIN_KEY)).data.name).toBe('odoo.exceptions.AccessDenied');
  });

  it('refuses a limited user creating partners or reading system parameters', async () => {
    const url = erp('19').url;
    const limited = (model: string, method: string, args: unknown[]) =>
      post(
        `${url}/jsonrpc`,
        rpcBody('object', 'execute_kw', ['erp_a', 7, ERP_A_LIMITED_KEY, model, method, args]),
      );
    expect(errorOf(await limited('res.partner', 'create', [{ name: 'x' }])).data.name).toBe(
      'odoo.exceptions.AccessError',
    );
    expect(errorOf(await limited('ir.config_parameter', 'search_read', [[]])).data.name).toBe(
      'odoo.exceptions.AccessError',
    );
    expect(parse(await limited('res.partner', 'search_count', [[]])).result).toBe(18);
  });

  it('maps JSON-2 argument problems to 422 and bad domains to 500', async () => {
    const url = erp('19').url;
    const call = (method: string, body: unknown) =>
      post(`${url}/json/2/res.partner/${method}`, JSON.stringify(body), {
        Authorization: `bearer ${ERP_A_ADMIN_KEY}`,
        'X-Odoo-Database': 'erp_a',
      });
    const cases: [string, unknown, number, string][] = [
      ['search', { ids: [1], domain: [] }, 422, 'cannot call res.partner.search with ids'],
      ['search_count', { domain: [], foo: 1 }, 422, "got an unexpected keyword argument 'foo'"],
      ['search_count', {}, 422, "missing a required argument: 'domain'"],
      [
        'search_read',
        { domain: [], foo: 1 },
        500,
        "BaseModel._read_format() got an unexpected keyword argument 'foo'",
      ],
      [
        'search',
        { domain: [['nope', '=', 1]] },
        500,
        "Invalid field res.partner.nope in condition ('nope', '=', 1)",
      ],
      [
        'write',
        { ids: [999999], vals: {} },
        404,
        'Record does not exist or has been deleted.\n(Record: res.partner(999999,), User: 2)',
      ],
      ['_private', {}, 403, "Private methods (such as 'res.partner._private') cannot be called remotely."],
    ];
    for (const [method, body, status, message] of cases) {
      const reply = await call(method, body);
      expect(reply.status, method).toBe(status);
      expect(JSON.parse(reply.text).message, method).toBe(message);
    }
  });

  it('selects the database by header, dbfilter (%d) or monodb, never by a filtered header', async () => {
    const filtered = await startErpDouble({ dbfilter: '^%d$' });
    try {
      const call = (headers: Record<string, string>) =>
        new Promise<number>((resolve, reject) => {
          const req = httpRequest(
            `${filtered.url}/json/2/res.partner/search_count`,
            { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers } },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            },
          );
          req.on('error', reject);
          req.end('{"domain": []}');
        });
      expect(await call({ Host: 'erp_b.localhost:8069', Authorization: `bearer ${ERP_B_ADMIN_KEY}` })).toBe(
        200,
      );
      expect(
        await call({ Host: `127.0.0.1:${filtered.port}`, Authorization: `bearer ${ERP_A_ADMIN_KEY}` }),
      ).toBe(404);
      expect(
        await call({
          Host: 'erp_b.localhost',
          'X-Odoo-Database': 'erp_a',
          Authorization: `bearer ${ERP_A_ADMIN_KEY}`,
        }),
      ).toBe(404);
    } finally {
      await filtered.close();
    }
  });

  it('records requests and resets data and recordings', async () => {
    const double = erp('19');
    await post(`${double.url}/jsonrpc`, executeKw('res.partner', 'unlink', [[15]]));
    expect(double.requests).toHaveLength(1);
    expect(double.requests[0]?.path).toBe('/jsonrpc');
    expect(double.requests[0]?.headers['content-type']).toBe('application/json');
    const requests = double.requests;
    double.reset();
    expect(requests).toHaveLength(0);
    const read = parse(
      await post(`${double.url}/jsonrpc`, executeKw('res.partner', 'read', [[15]], { fields: ['name'] })),
    );
    expect(read.result).toEqual([{ id: 15, name: 'Azure Interior' }]);
  });
});

describe('mode 19: ORM beyond the basics', () => {
  const json2 = (url: string, method: string, body: unknown) =>
    post(`${url}/json/2/res.partner/${method}`, JSON.stringify(body), {
      Authorization: `bearer ${ERP_A_ADMIN_KEY}`,
      'X-Odoo-Database': 'erp_a',
    });

  it('copies records: a list of new ids both ways, "(copy)" unless default names it', async () => {
    const url = erp('19').url;
    const rpc = parse(
      await post(`${url}/jsonrpc`, executeKw('res.partner', 'copy', [[15], { name: 'Twin' }])),
    );
    expect(rpc.result).toEqual([43]);
    expect(JSON.parse((await json2(url, 'copy', { ids: [15] })).text)).toEqual([44]);
    const read = JSON.parse((await json2(url, 'read', { ids: [43, 44], fields: ['name', 'email'] })).text);
    expect(read).toEqual([
      { id: 43, name: 'Twin', email: 'azure.Interior24@example.com' },
      { id: 44, name: 'Azure Interior (copy)', email: 'azure.Interior24@example.com' },
    ]);
    const missing = await json2(url, 'copy', { ids: [999999] });
    expect(missing.status).toBe(404);
  });

  it('groups with the deprecated read_group, lazy or not', async () => {
    const url = erp('19').url;
    const lazy = parse(
      await post(
        `${url}/jsonrpc`,
        executeKw('res.partner', 'read_group', [[['is_company', '=', true]], ['country_id'], ['country_id']]),
      ),
    ).result as Record<string, unknown>[];
    expect(lazy.map((group) => group.country_id_count)).toEqual([1, 1, 1, 7]);
    expect(lazy[3]).toEqual({
      country_id: [233, 'United States'],
      country_id_count: 7,
      __domain: ['&', ['is_company', '=', true], ['country_id', '=', 233]],
    });
    const strict = JSON.parse(
      (
        await json2(url, 'read_group', {
          domain: [['parent_id', '=', 15]],
          fields: ['id:count'],
          groupby: ['parent_id', 'country_id'],
          lazy: false,
        })
      ).text,
    );
    expect(strict).toEqual([
      {
        parent_id: [15, 'Azure Interior'],
        country_id: [233, 'United States'],
        id: 3,
        __count: 3,
        __domain: ['&', '&', ['parent_id', '=', 15], ['parent_id', '=', 15], ['country_id', '=', 233]],
      },
    ]);
    // Ordered by an aggregate's key, as ERP 16-18 order (ERP 16 cannot order by __count).
    const byAggregate = JSON.parse(
      (
        await json2(url, 'read_group', {
          domain: [['is_company', '=', true]],
          fields: ['record_count:count(id)', 'top:max(id)'],
          groupby: ['country_id'],
          orderby: 'record_count desc, top asc',
          lazy: false,
        })
      ).text,
    ) as { record_count: number; top: number }[];
    expect(byAggregate.map((group) => group.record_count)).toEqual([7, 1, 1, 1]);
    const ones = byAggregate.slice(1).map((group) => group.top);
    expect(ones).toEqual([...ones].sort((a, b) => a - b));
    const unknown = await json2(url, 'read_group', { domain: [], fields: [], groupby: ['nope'] });
    expect(JSON.parse(unknown.text).message).toBe("Invalid field 'nope' on model 'res.partner'");
    const byDate = await json2(url, 'read_group', { domain: [], fields: [], groupby: ['create_date:month'] });
    expect(JSON.parse(byDate.text).message).toContain('not imitated');
  });

  it('groups with formatted_read_group on 19 (its shape as a real Odoo 19 answers), and not before', async () => {
    const url = erp('19').url;
    const groups = JSON.parse(
      (
        await json2(url, 'formatted_read_group', {
          domain: [['is_company', '=', true]],
          groupby: ['country_id'],
          aggregates: ['__count', 'id:sum'],
          order: 'id:sum desc',
          limit: 2,
        })
      ).text,
    ) as Record<string, unknown>[];
    expect(groups[0]).toEqual({
      country_id: [233, 'United States'],
      __extra_domain: [['country_id', '=', 233]],
      __count: 7,
      'id:sum': expect.any(Number),
    });
    expect(groups).toHaveLength(2);
    expect((groups[0]?.['id:sum'] as number) >= (groups[1]?.['id:sum'] as number)).toBe(true);
    const old = parse(
      await post(`${erp('18').url}/jsonrpc`, executeKw('res.partner', 'formatted_read_group', [[]])),
    );
    expect(JSON.stringify(old)).toContain("The method 'res.partner.formatted_read_group' does not exist");
  });

  it('rolls a failed call back, keeping the ids its INSERTs took', async () => {
    const url = erp('19').url;
    const failed = await json2(url, 'create', { vals_list: [{ name: 'Kept?' }, {}] });
    expect(failed.status).toBe(422);
    const byName = errorOf(
      await post(
        `${url}/jsonrpc`,
        executeKw('res.partner', 'create', [], { vals_list: [{ name: 'Kept?' }] }),
      ),
    );
    expect(byName.data.name).toBe('builtins.IndexError');
    expect(JSON.parse((await json2(url, 'search_count', { domain: [['name', '=', 'Kept?']] })).text)).toBe(0);
    expect(JSON.parse((await json2(url, 'create', { vals_list: [{ name: 'Next' }] })).text)).toEqual([46]);
  });

  it('refuses every access to bus.bus, even to the admin', async () => {
    const data = errorOf(
      await post(`${erp('19').url}/jsonrpc`, executeKw('bus.bus', 'search_count', [[]])),
    ).data;
    expect(data.name).toBe('odoo.exceptions.AccessError');
    expect(data.message).toContain('No group currently allows this operation.');
  });
});

/** A raw HTTP exchange (fetch would add `Cache-Control: no-cache` to conditional requests). */
function exchange(
  url: string,
  headers: Record<string, string>,
  options: { method?: string; body?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          contentType: String(res.headers['content-type'] ?? ''),
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('/doc-bearer (api_doc)', () => {
  const ADMIN = { Authorization: `bearer ${ERP_A_ADMIN_KEY}`, 'X-Odoo-Database': 'erp_a' };
  const doc = (double: ErpDouble, path: string, headers: Record<string, string> = {}, options = {}) =>
    exchange(`${double.url}/doc-bearer/${path}`, { ...ADMIN, ...headers }, options);

  it('serves a document per model, built from the double when not captured', async () => {
    const double = erp('19');
    const reply = await doc(double, 'res.country.json');
    expect(reply.status).toBe(200);
    expect(reply.headers['cache-control']).toBe('no-cache, private');
    const country = JSON.parse(reply.text);
    expect([country.model, country.name, country.doc]).toEqual(['res.country', 'Country', null]);
    expect(country.fields.id.module).toBeNull();
    expect(country.fields.name).toMatchObject({ string: 'Country Name', type: 'char', module: 'base' });
    expect(Object.keys(country.methods)).toContain('search_read');
    expect(Object.keys(country.methods)).not.toContain('read_group');
    expect(country.methods.create.api).toEqual(['model']);
    const partner = await doc(double, 'res.partner.json');
    expect(JSON.parse(partner.text).fields.message_ids.module).toBe('mail'); // the captured document
    expect(partner.headers.etag).toBe(reply.headers.etag); // not per model
    const onB = await exchange(`${double.url}/doc-bearer/res.partner.json`, {
      Authorization: `bearer ${ERP_B_ADMIN_KEY}`,
      'X-Odoo-Database': 'erp_b',
    });
    expect(onB.headers.etag).toMatch(/^[0-9a-f]{64}$/);
    expect(onB.headers.etag).not.toBe(partner.headers.etag); // per database
  });

  it('revalidates with If-None-Match in any form, unless the request says no-cache', async () => {
    const double = erp('19');
    const etag = String((await doc(double, 'res.users.json')).headers.etag);
    const statusWith = async (headers: Record<string, string>, options = {}) =>
      (await doc(double, 'res.users.json', headers, options)).status;
    for (const form of [etag, `"${etag}"`, `W/"${etag}"`, '*', `"other", ${etag}`])
      expect(await statusWith({ 'If-None-Match': form }), form).toBe(304);
    expect(await statusWith({ 'If-None-Match': '"stale-etag"' })).toBe(200);
    expect(await statusWith({ 'If-None-Match': etag, 'Cache-Control': 'no-cache' })).toBe(200);
    // The check reads headers only: a POST revalidates too.
    expect(await statusWith({ 'If-None-Match': etag }, { method: 'POST' })).toBe(304);
    const notModified = await doc(double, 'res.users.json', { 'If-None-Match': etag });
    expect(notModified.text).toBe('');
    expect(notModified.headers['content-type']).toBeUndefined();
    expect(notModified.headers.etag).toBeUndefined();
    expect(notModified.headers['content-length']).toBeUndefined();
  });

  it('checks content type, key, body, the documentation group, the model and its ACL, in that order', async () => {
    const double = erp('19');
    const status = async (path: string, headers: Record<string, string>, body?: string) =>
      (await exchange(`${double.url}/doc-bearer/${path}`, headers, { method: 'POST', body })).status;
    const limited = { Authorization: `bearer ${ERP_A_LIMITED_KEY}`, 'X-Odoo-Database': 'erp_a' };
    expect(await status('res.partner.json', { ...ADMIN, 'Content-Type': 'text/plain' }, 'x')).toBe(415);
    expect(await status('res.partner.json', { 'X-Odoo-Database': 'erp_a' })).toBe(401);
    expect(await status('res.partner.json', { ...ADMIN, 'Content-Type': 'application/json' }, '{x')).toBe(
      400,
    );
    expect(
      await status('res.partner.json', { ...ADMIN, 'Content-Type': 'application/json' }, '{"a": 1}'),
    ).toBe(200);
    expect(await status('res.partnerx.json', limited)).toBe(403);
    expect(await status('res.partnerx.json', ADMIN)).toBe(404);
    expect(await status('bus.bus.json', ADMIN)).toBe(403);
    expect(await status('res.partner', ADMIN)).toBe(404);
    const noDb = await exchange(`${double.url}/doc-bearer/res.partner.json`, {
      Authorization: `bearer ${ERP_A_ADMIN_KEY}`,
    });
    expect(noDb.text).toContain('No database is selected');
  });

  it('keeps the index in an attachment, revalidated by ETag or date', async () => {
    const double = erp('19');
    const attachments = async () =>
      parse(await post(`${double.url}/jsonrpc`, executeKw('ir.attachment', 'search_count', [[]]))).result;
    const before = await attachments();
    const first = await doc(double, 'index.json');
    expect(first.status).toBe(200);
    expect(first.headers.etag).toMatch(/^"[0-9a-f]{64}"$/);
    expect(first.headers['content-security-policy']).toBe("default-src 'none'");
    const index = JSON.parse(first.text);
    expect(index.modules).toContain('api_doc');
    const models = index.models.map((entry: { model: string }) => entry.model);
    expect(models).toContain('res.partner');
    expect(models).not.toContain('bus.bus');
    expect(index.models[0].fields.name).toEqual({ string: 'Name' });
    expect(await doc(double, 'index.json')).toMatchObject({ status: 200, text: first.text });
    expect(await attachments()).toBe(Number(before) + 1);
    expect((await doc(double, 'index.json', { 'If-None-Match': String(first.headers.etag) })).status).toBe(
      304,
    );
    const since = { 'If-Modified-Since': String(first.headers['last-modified']) };
    expect((await doc(double, 'index.json', since)).status).toBe(304);
    expect((await doc(double, 'index.json', since, { method: 'POST' })).status).toBe(200);
    const fresh = await doc(double, 'index.json', { 'Cache-Control': 'no-cache' });
    expect(fresh.headers['cache-control']).toBe('no-store');
    expect(fresh.headers.etag).toBeUndefined();
    expect(JSON.parse(fresh.text)).toEqual(index);
    const limited = await exchange(`${double.url}/doc-bearer/index.json`, {
      Authorization: `bearer ${ERP_A_LIMITED_KEY}`,
      'X-Odoo-Database': 'erp_a',
    });
    expect(limited.status).toBe(403);
  });

  it('exists in 19 and 22 only', async () => {
    for (const mode of MODES) {
      const reply = await doc(erp(mode), 'res.partner.json');
      expect(reply.status, mode).toBe(Number(mode) >= 19 ? 200 : 404);
      if (reply.status === 404) expect(reply.contentType).toMatch(/^text\/html/);
    }
  });
});

describe('mode 22', () => {
  it('has no /jsonrpc but serves /web/version and JSON-2', async () => {
    const url = erp('22').url;
    const rpc = await post(`${url}/jsonrpc`, rpcBody('common', 'version', []));
    expect(rpc.status).toBe(404);
    expect(rpc.contentType).toMatch(/^text\/html/);
    const version = (await (await fetch(`${url}/web/version`)).json()) as Record<string, unknown>;
    expect(version.version_info).toEqual([22, 0, 0, 'final', 0, '']);
    const json2 = await post(
      `${url}/json/2/res.partner/search_count`,
      '{"domain": [["is_company", "=", true]]}',
      {
        Authorization: `bearer ${ERP_A_ADMIN_KEY}`,
        'X-Odoo-Database': 'erp_a',
      },
    );
    expect(json2.status).toBe(200);
    expect(JSON.parse(json2.text)).toBe(10);
  });
});

describe('mode 21, with and without /jsonrpc (a front proxy that blocks it)', () => {
  it.each([true, false])(
    'jsonRpc %s: /web/version says 21, JSON-2 serves, /jsonrpc only when kept',
    async (jsonRpc) => {
      const double = await startErpDouble({ mode: '21', jsonRpc });
      try {
        const rpc = await post(`${double.url}/jsonrpc`, rpcBody('common', 'version', []));
        if (jsonRpc) {
          expect(rpc.status).toBe(200);
          expect((parse(rpc).result as Record<string, unknown>).server_version_info).toEqual([
            21,
            0,
            0,
            'final',
            0,
            '',
          ]);
        } else {
          expect(rpc.status).toBe(404);
          expect(rpc.contentType).toMatch(/^text\/html/);
        }
        const version = (await (await fetch(`${double.url}/web/version`)).json()) as Record<string, unknown>;
        expect(version).toEqual({ version_info: [21, 0, 0, 'final', 0, ''], version: '21.0' });
        const json2 = await post(`${double.url}/json/2/res.partner/search_count`, '{"domain": []}', {
          Authorization: `bearer ${ERP_A_ADMIN_KEY}`,
          'X-Odoo-Database': 'erp_a',
        });
        expect(json2.status).toBe(200);
      } finally {
        await double.close();
      }
    },
  );
});

/** A JSON-2 call of the erp_a admin (or `key`) on `double`. */
function json2Call(double: ErpDouble, method: string, body: unknown, key = ERP_A_ADMIN_KEY): Promise<Reply> {
  return post(`${double.url}/json/2/res.partner/${method}`, JSON.stringify(body), {
    Authorization: `bearer ${key}`,
    'X-Odoo-Database': 'erp_a',
  });
}

/** An `MCP`-scoped key of the erp_a admin (Odoo 19.4+, odoo/odoo#268589). */
const MCP_SCOPED_KEY = 'c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3';
const SCOPED_USERS = [
  ...DOUBLE_USERS,
  { uid: 2, login: 'admin', apiKey: MCP_SCOPED_KEY, db: 'erp_a', scope: 'MCP' as const },
];

describe.each(['20', '21'] as const)('mode %s: what Odoo published for 20 (versions.ts)', (mode) => {
  let double: ErpDouble;
  let reference: ErpDouble;
  beforeAll(async () => {
    double = await startErpDouble({ mode, users: SCOPED_USERS });
    reference = await startErpDouble({ mode: '19', users: SCOPED_USERS });
  });
  afterAll(async () => {
    await double.close();
    await reference.close();
  });

  it('reports its version, keeps /jsonrpc (deprecated) and lists databases on /web/database/list', async () => {
    const version = (await (await fetch(`${double.url}/web/version`)).json()) as Record<string, unknown>;
    expect(version).toEqual({ version_info: [Number(mode), 0, 0, 'final', 0, ''], version: `${mode}.0` });
    const common = parse(await post(`${double.url}/jsonrpc`, rpcBody('common', 'version', [])));
    expect((common.result as Record<string, unknown>).server_version).toBe(`${mode}.0`);
    const list = parse(await post(`${double.url}/web/database/list`, rpcBody('', '', [])));
    expect(list.result).toEqual(['erp_a', 'erp_b']);
  });

  it('has no db service over /jsonrpc (odoo/odoo#238399); 19 still has it', async () => {
    const gone = errorOf(await post(`${double.url}/jsonrpc`, rpcBody('db', 'list', [])));
    expect(gone.data.name).toBe('builtins.KeyError');
    const kept = parse(await post(`${reference.url}/jsonrpc`, rpcBody('db', 'list', [])));
    expect(kept.result).toEqual(['erp_a', 'erp_b']);
  });

  it('answers read_group in its 20 form with tuples, many2one groups as ids', async () => {
    const reply = await json2Call(double, 'read_group', {
      domain: [['is_company', '=', true]],
      groupby: ['country_id'],
      aggregates: ['__count', 'id:max'],
      order: 'country_id',
    });
    expect(reply.status).toBe(200);
    const groups = JSON.parse(reply.text) as unknown[][];
    expect(groups.length).toBeGreaterThan(0);
    for (const group of groups) {
      expect(group).toHaveLength(3);
      expect(typeof group[0] === 'number' || group[0] === false).toBe(true);
      expect(typeof group[1]).toBe('number');
    }
    // The same groups as formatted_read_group's, which is still there.
    const formatted = JSON.parse(
      (
        await json2Call(double, 'formatted_read_group', {
          domain: [['is_company', '=', true]],
          groupby: ['country_id'],
          aggregates: ['__count'],
          order: 'country_id',
        })
      ).text,
    ) as { country_id: [number, string] | false; __count: number }[];
    expect(groups.map((group) => [group[0], group[1]])).toEqual(
      formatted.map((row) => [row.country_id === false ? false : row.country_id[0], row.__count]),
    );
  });

  it('refuses read_group in its 16-19 form as Python does: 422 over JSON-2, an ERP error over /jsonrpc', async () => {
    const named = await json2Call(double, 'read_group', {
      domain: [],
      fields: ['is_company'],
      groupby: ['is_company'],
      lazy: false,
    });
    expect(named.status).toBe(422);
    expect(JSON.parse(named.text).message).toBe("got an unexpected keyword argument 'fields'");
    const positional = errorOf(
      await post(
        `${double.url}/jsonrpc`,
        executeKw('res.partner', 'read_group', [[], ['id:sum'], ['is_company']]),
      ),
    );
    expect(positional.data.name).toBe('builtins.ValueError');
    expect(positional.data.message).toMatch(/Granularity set on a no-datetime field/);
    const lazy = errorOf(
      await post(
        `${double.url}/jsonrpc`,
        executeKw('res.partner', 'read_group', [[], ['is_company'], ['is_company']], { lazy: false }),
      ),
    );
    expect(lazy.data.message).toMatch(/unexpected keyword argument 'lazy'/);
    // 19 still answers the old form.
    const old = parse(
      await post(
        `${reference.url}/jsonrpc`,
        executeKw('res.partner', 'read_group', [[], ['is_company'], ['is_company']], { lazy: false }),
      ),
    );
    expect(Array.isArray(old.result)).toBe(true);
  });

  it('documents read_group (20 form) on /doc-bearer; 19 leaves it out', async () => {
    const headers = { Authorization: `bearer ${ERP_A_ADMIN_KEY}`, 'X-Odoo-Database': 'erp_a' };
    const doc = (await (await fetch(`${double.url}/doc-bearer/res.partner.json`, { headers })).json()) as {
      methods: Record<string, { parameters: Record<string, unknown> }>;
    };
    // The signature the proxy's bridge expects on 20+.
    expect(Object.keys(doc.methods.read_group?.parameters ?? {})).toEqual(
      READ_GROUP_20.params.map((p) => p.name),
    );
    const old = (await (await fetch(`${reference.url}/doc-bearer/res.partner.json`, { headers })).json()) as {
      methods: Record<string, unknown>;
    };
    expect(old.methods.read_group).toBeUndefined();
  });

  it('has no toggle_active; 19 still toggles', async () => {
    const json2 = await json2Call(double, 'toggle_active', { ids: [15] });
    expect(json2.status).toBe(404);
    const rpc = errorOf(
      await post(`${double.url}/jsonrpc`, executeKw('res.partner', 'toggle_active', [[15]])),
    );
    expect(rpc.data.name).toBe('builtins.AttributeError');
    const toggled = parse(
      await post(`${reference.url}/jsonrpc`, executeKw('res.partner', 'toggle_active', [[15]])),
    );
    expect(toggled).not.toHaveProperty('error');
    expect(toggled).not.toHaveProperty('result');
    reference.reset();
  });

  it('reads binaries as objects over JSON-2 (content on request), inline over /jsonrpc whatever bin_size says', async () => {
    const read = async (target: ErpDouble, context: Record<string, unknown>): Promise<unknown> =>
      (
        JSON.parse((await json2Call(target, 'read', { ids: [42], fields: ['image_128'], context })).text) as {
          image_128: unknown;
        }[]
      )[0]?.image_128;
    const object = (await read(double, { bin_size: true })) as Record<string, unknown>;
    expect(object).toEqual({ filename: 'image_128', size: 316 });
    const full = (await read(double, { include_binary_content: true })) as Record<string, unknown>;
    expect(Object.keys(full).sort()).toEqual(['content', 'filename', 'size']);
    expect(Buffer.from(String(full.content), 'base64').length).toBe(316);
    const rpc = parse(
      await post(
        `${double.url}/jsonrpc`,
        executeKw('res.partner', 'read', [[42], ['image_128']], { context: { bin_size: true } }),
      ),
    );
    expect((rpc.result as { image_128: unknown }[])[0]?.image_128).toBe(full.content);
    // 19 honours bin_size.
    expect(await read(reference, { bin_size: true })).toBe('316.00 bytes');
    const inline = await startErpDouble({ mode, binaries: 'inline' });
    try {
      expect(await read(inline, { bin_size: true })).toBe(full.content);
    } finally {
      await inline.close();
    }
  });

  it('refuses an MCP-scoped key on its RPC routes like a wrong key; 19 has no scopes', async () => {
    const json2 = await json2Call(double, 'search_count', { domain: [] }, MCP_SCOPED_KEY);
    expect(json2.status).toBe(401);
    expect(JSON.parse(json2.text).message).toBe('Invalid apikey');
    const rpc = errorOf(
      await post(
        `${double.url}/jsonrpc`,
        executeKw('res.partner', 'search_count', [[]], undefined, MCP_SCOPED_KEY),
      ),
    );
    expect(rpc.data.name).toBe('odoo.exceptions.AccessDenied');
    expect((await json2Call(reference, 'search_count', { domain: [] }, MCP_SCOPED_KEY)).status).toBe(200);
  });
});

describe('default users and lifecycle', () => {
  it('ships admin keys per database, a limited user and an expired key, all 40 hex', () => {
    for (const user of DOUBLE_USERS) expect(user.apiKey).toMatch(/^[0-9a-f]{40}$/);
    const admins = DOUBLE_USERS.filter((user) => user.uid === 2 && !user.expired);
    expect(admins.map((user) => user.db).sort()).toEqual(['erp_a', 'erp_b']);
    expect(new Set(admins.map((user) => user.apiKey)).size).toBe(2);
    expect(DOUBLE_USERS.some((user) => user.uid === 7 && user.limited && user.db === 'erp_a')).toBe(true);
    expect(DOUBLE_USERS.some((user) => user.expired && user.db === 'erp_a')).toBe(true);
  });

  it('closes even with a keep-alive connection open', async () => {
    const double = await startErpDouble();
    const agent = new Agent({ keepAlive: true });
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${double.url}/web/version`, { agent }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end();
    });
    await double.close();
    agent.destroy();
  });
});

describe('the double records arrivals and calls in flight, and has a slow mode', () => {
  let double: ErpDouble;
  beforeAll(async () => {
    double = await startErpDouble({ mode: '19', delayMs: 500 });
  });
  afterAll(async () => {
    await double.close();
  });

  const version = () => fetch(`${double.url}/web/version`).then((response) => response.status);

  it('keeps the most requests it answered at once, the arrival time of each, and resets them', async () => {
    const before = Date.now();
    expect(await Promise.all([version(), version(), version()])).toEqual([200, 200, 200]);
    expect(double.maxInFlight).toBe(3);
    expect(double.inFlight).toBe(0);
    expect(double.requests.every((request) => request.receivedAt >= before)).toBe(true);
    double.reset();
    expect(double.maxInFlight).toBe(0);
    // Off: answered at once, one after the other, never two at a time.
    double.setDelay(0);
    await version();
    await version();
    expect(double.maxInFlight).toBe(1);
  });
});
