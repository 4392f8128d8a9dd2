/**
 * v1 execute and the version endpoints over real HTTP: the local server (real handlers) in
 * front of the ERP double, both on loopback, across the ERP versions the double imitates.
 */
import { describe, expect, it } from 'vitest';
import { V1_DOMAIN_HINT } from '../../lambdas/core/v1-domain-hint.ts';
import type { ErpDouble, ErpMode } from '../erp-double/index.ts';
import { releaseOf } from '../erp-double/versions.ts';
import { type Envelope, USERS, useErpAndProxy, useProxy, withProxy } from '../support/fixtures.ts';
import { TEST_PROXY_KEY } from '../support/proxy-harness.ts';

const admin = USERS.adminA;

function instance(double: ErpDouble, overrides: Record<string, unknown> = {}) {
  return { url: double.url, db: 'erp_a', user_id: admin.uid, api_key: admin.apiKey, ...overrides };
}

const MODES: ErpMode[] = ['16', '17', '18', '19'];

describe.each(MODES)('v1 execute against ERP %s', (mode) => {
  const { double, proxy } = useErpAndProxy({ mode });

  const execute = async (body: Record<string, unknown>, path = '/api/erp/execute') => {
    const answer = await proxy.post(path, { id: `req-${mode}`, erp_instance: instance(double), ...body });
    return { ...answer, envelope: answer.json as Envelope };
  };

  it('search_read returns records and echoes the id', async () => {
    const { status, envelope } = await execute({
      action: 'search_read',
      model_id: 'res.partner',
      params: [[['is_company', '=', true]]],
      keyword: { fields: ['name', 'is_company'], limit: 2, order: 'name asc' },
    });
    expect(status).toBe(200);
    expect(envelope.jsonrpc).toBe('2.0');
    expect(envelope.id).toBe(`req-${mode}`);
    expect(envelope.error).toBeNull();
    const records = envelope.result as Array<Record<string, unknown>>;
    expect(records.length).toBe(2);
    for (const record of records) expect(record.is_company).toBe(true);
    const names = records.map((r) => String(r.name));
    expect([...names].sort()).toEqual(names);
  });

  it('passes params and keyword through untouched to execute_kw', async () => {
    double.requests.length = 0;
    const params = [[['name', 'ilike', 'a']]];
    const keyword = { limit: 3, context: { tz: 'Europe/Brussels', nested: { a: [1, null, 'x'] } } };
    await execute({ action: 'search', model_id: 'res.partner', params, keyword });
    const sent = JSON.parse(double.requests.at(-1)!.body) as {
      params: { service: string; method: string; args: unknown[] };
    };
    expect(double.requests.at(-1)!.path).toBe('/jsonrpc');
    expect(sent.params.service).toBe('object');
    expect(sent.params.method).toBe('execute_kw');
    expect(sent.params.args).toEqual([
      'erp_a',
      admin.uid,
      admin.apiKey,
      'res.partner',
      'search',
      params,
      keyword,
    ]);
  });

  it('sends X-Odoo-Database with the call, so a multi-database ERP does not list its databases', async () => {
    // Prepare
    double.requests.length = 0;
    // Act
    const { envelope } = await execute({ action: 'search_count', model_id: 'res.partner', params: [[]] });
    // Assess
    expect(envelope.error).toBeNull();
    expect(double.requests.at(-1)!.path).toBe('/jsonrpc');
    expect(double.requests.at(-1)!.headers['x-odoo-database']).toBe('erp_a');
  });

  it('leaves X-Odoo-Database out for a db name that cannot travel in a header; the call still goes', async () => {
    // Prepare
    double.requests.length = 0;
    // Act: the ERP answers for the unknown database; the proxy must still have sent the call.
    await proxy.post('/api/erp/execute', {
      id: 'db-with-newline',
      action: 'search_count',
      model_id: 'res.partner',
      params: [[]],
      erp_instance: instance(double, { db: 'erp_a\r\nX-Injected: 1' }),
    });
    // Assess
    expect(double.requests.at(-1)!.path).toBe('/jsonrpc');
    expect(double.requests.at(-1)!.headers['x-odoo-database']).toBeUndefined();
    expect(double.requests.at(-1)!.headers['x-injected']).toBeUndefined();
  });

  it('an unknown database is the ERP error naming the database, never the database server (with debug too)', async () => {
    // Act: the double answers as the real ERP of this version (PostgreSQL's text, with the
    // "connection to server at ..., port ..." prefix from 17 on).
    const { status, envelope, text } = await execute({
      action: 'search_count',
      model_id: 'res.partner',
      params: [[]],
      erp_instance: instance(double, { db: 'no_such_db' }),
    });
    // Assess
    expect(status).toBe(200);
    expect(envelope.error).toMatchObject({
      code: 0,
      message: 'database "no_such_db" does not exist',
      data: { name: 'psycopg2.OperationalError', message: 'database "no_such_db" does not exist' },
    });
    expect(text).not.toMatch(/connection to server|127\.0\.0\.1|5432|FATAL:/);
    expect(String(envelope.error?.data?.debug)).toMatch(
      /OperationalError: database "no_such_db" does not exist/,
    );
  });

  it('search returns ids, search_count an integer', async () => {
    const ids = (await execute({ action: 'search', model_id: 'res.partner', params: [[]] })).envelope.result;
    const count = (await execute({ action: 'search_count', model_id: 'res.partner', params: [[]] })).envelope
      .result;
    expect(Array.isArray(ids)).toBe(true);
    expect((ids as unknown[]).every((id) => Number.isInteger(id))).toBe(true);
    expect(count).toBe((ids as unknown[]).length);
  });

  it('create, read, write and unlink work end to end', async () => {
    const created = await execute({
      action: 'create',
      model_id: 'res.partner',
      params: [{ name: `Proxy ${mode}` }],
    });
    expect(Number.isInteger(created.envelope.result)).toBe(true);
    const id = created.envelope.result as number;

    const read = await execute({ action: 'read', model_id: 'res.partner', params: [[id], ['name']] });
    expect(read.envelope.result).toEqual([expect.objectContaining({ id, name: `Proxy ${mode}` })]);

    const written = await execute({
      action: 'write',
      model_id: 'res.partner',
      params: [[id], { name: 'Renamed' }],
    });
    expect(written.envelope.result).toBe(true);

    const unlinked = await execute({ action: 'unlink', model_id: 'res.partner', params: [[id]] });
    expect(unlinked.envelope.result).toBe(true);

    const gone = await execute({ action: 'read', model_id: 'res.partner', params: [[id], ['name']] });
    expect(gone.envelope.result).toEqual([]);
  });

  it('create from a list returns a list of ids', async () => {
    const { envelope } = await execute({
      action: 'create',
      model_id: 'res.partner',
      params: [[{ name: 'One' }, { name: 'Two' }]],
    });
    expect(Array.isArray(envelope.result)).toBe(true);
    expect((envelope.result as unknown[]).length).toBe(2);
  });

  it('fields_get returns a field-description map', async () => {
    const { envelope } = await execute({
      action: 'fields_get',
      model_id: 'res.partner',
      keyword: { attributes: ['type', 'string'] },
    });
    const fields = envelope.result as Record<string, Record<string, unknown>>;
    expect(fields.name).toEqual(expect.objectContaining({ type: 'char' }));
  });

  it('call_method forwards fn_name; a method returning None gives result null', async () => {
    const search = await execute({
      action: 'call_method',
      fn_name: 'name_search',
      model_id: 'res.partner',
      keyword: { name: 'a' },
    });
    expect(search.envelope.error).toBeNull();
    expect(Array.isArray(search.envelope.result)).toBe(true);

    const ids = (
      await execute({ action: 'search', model_id: 'res.partner', params: [[]], keyword: { limit: 1 } })
    ).envelope.result as number[];
    const archived = await execute({
      action: 'call_method',
      fn_name: 'action_archive',
      model_id: 'res.partner',
      params: [ids],
    });
    expect(archived.status).toBe(200);
    expect(archived.envelope).toEqual({ jsonrpc: '2.0', id: `req-${mode}`, result: null, error: null });
  });

  it('ERP errors are HTTP 200 with code 0, the ERP message and its data', async () => {
    // A domain of the right shape on a field the model does not have.
    const { status, envelope } = await execute({
      action: 'search_read',
      model_id: 'res.partner',
      params: [[['no_such_field', '=', 1]]],
    });
    expect(status).toBe(200);
    expect(envelope.result).toBeNull();
    expect(envelope.error?.code).toBe(0);
    expect(envelope.error?.message).not.toBe('Odoo Server Error');
    expect(envelope.error?.data?.name).toBe('builtins.ValueError');
    expect(envelope.error?.message).toBe(envelope.error?.data?.message);
  });

  it('a domain not wrapped once more is the ERP error, its message followed by the v1 hint', async () => {
    const { status, envelope } = await execute({
      action: 'search_read',
      model_id: 'res.partner',
      params: [['is_company', '=', true]],
    });
    expect(status).toBe(200);
    expect(envelope.error?.code).toBe(0);
    // The double's Domain error in every mode (the real 16-18 raise TypeError: test/live/v1-matrix.test.ts).
    expect(envelope.error?.data?.name).toBe('builtins.ValueError');
    expect(envelope.error?.message).toBe(`${envelope.error?.data?.message} (${V1_DOMAIN_HINT})`);
  });

  it('a wrong ERP key is an ERP AccessDenied (code 0), not a proxy -32000', async () => {
    const answer = await proxy.post('/api/erp/execute', {
      id: 'bad-key',
      action: 'search_count',
      model_id: 'res.partner',
      params: [[]],
      erp_instance: instance(double, { api_key: 'not-the-right-key' }),
    });
    const envelope = answer.json as Envelope;
    expect(answer.status).toBe(200);
    expect(envelope.error?.code).toBe(0);
    expect(envelope.error?.data?.name).toBe('odoo.exceptions.AccessDenied');
    expect(answer.text).not.toContain('not-the-right-key');
  });

  it('an unknown model is an ERP UserError', async () => {
    const { envelope } = await execute({ action: 'search', model_id: 'res.partnerx', params: [[]] });
    expect(envelope.error?.code).toBe(0);
    expect(envelope.error?.data?.name).toBe('odoo.exceptions.UserError');
  });

  it('the /v1/erp/execute alias behaves the same', async () => {
    const body = { action: 'search_count', model_id: 'res.partner', params: [[]] };
    const main = await execute(body);
    const alias = await execute(body, '/v1/erp/execute');
    expect(alias.status).toBe(200);
    expect(alias.envelope).toEqual(main.envelope);
  });
});

describe('v1 proxy errors', () => {
  const { double, proxy } = useErpAndProxy({ mode: '19' });

  const valid = () => ({
    id: 'e1',
    action: 'search_count',
    model_id: 'res.partner',
    params: [[]],
    erp_instance: instance(double),
  });

  it('-32000 (401) when x-api-key is missing or wrong, with the id echoed', async () => {
    for (const headers of [{ 'x-api-key': '' }, { 'x-api-key': 'wrong-key-wrong-key-wrong' }]) {
      const answer = await proxy.post('/api/erp/execute', valid(), headers);
      expect(answer.status).toBe(401);
      expect(answer.json).toEqual({
        jsonrpc: '2.0',
        id: 'e1',
        result: null,
        error: { code: -32000, message: expect.stringContaining('Authentication failed'), data: null },
      });
    }
    expect(double.requests.length).toBe(0);
  });

  it('-32000 comes before validation: a bad body with a bad key is still 401', async () => {
    const answer = await proxy.post('/api/erp/execute', '{not json', { 'x-api-key': 'nope' });
    expect(answer.status).toBe(401);
    expect((answer.json as Envelope).error?.code).toBe(-32000);
    expect((answer.json as Envelope).id).toBeNull();
  });

  it('-32700 (400) for a body that is not JSON; id is null', async () => {
    const answer = await proxy.post('/api/erp/execute', '{"id": "x", ');
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toContain('application/json');
    const envelope = answer.json as Envelope;
    expect(envelope.id).toBeNull();
    expect(envelope.error?.code).toBe(-32700);
  });

  it.each([
    ['missing action', { action: undefined }, 'action'],
    ['unknown action', { action: 'drop_table' }, 'action'],
    ['params not an array', { params: { a: 1 } }, 'params'],
    ['keyword not an object', { keyword: [1] }, 'keyword'],
    [
      'user_id not an integer',
      { erp_instance: { url: 'http://127.0.0.1:1', db: 'a', user_id: '2', api_key: 'k' } },
      'user_id',
    ],
    ['url not a URL', { erp_instance: { url: 'erp', db: 'a', user_id: 2, api_key: 'k' } }, 'url'],
    ['missing erp_instance', { erp_instance: undefined }, 'erp_instance'],
    ['id not a string', { id: 42 }, 'id'],
  ])('-32600 (400) for %s, naming the field', async (_name, patch, field) => {
    const answer = await proxy.post('/api/erp/execute', { ...valid(), ...patch });
    expect(answer.status).toBe(400);
    const envelope = answer.json as Envelope;
    expect(envelope.error?.code).toBe(-32600);
    expect(envelope.error?.message).toContain(field);
  });

  it('-32600 for a JSON body that is not an object', async () => {
    const answer = await proxy.post('/api/erp/execute', '[1,2]');
    expect(answer.status).toBe(400);
    expect((answer.json as Envelope).error?.code).toBe(-32600);
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['blank', '   '],
  ])('-32002 (400) for call_method with a %s fn_name', async (_name, fnName) => {
    const answer = await proxy.post('/api/erp/execute', {
      ...valid(),
      action: 'call_method',
      fn_name: fnName,
    });
    expect(answer.status).toBe(400);
    expect((answer.json as Envelope).error?.code).toBe(-32002);
    expect((answer.json as Envelope).id).toBe('e1');
  });

  it('-32005 (502) for a target that is not an ERP (HTML page)', async () => {
    const answer = await proxy.post('/api/erp/execute', {
      ...valid(),
      erp_instance: instance(double, { url: `${double.url}/web/login-page-that-does-not-exist` }),
    });
    expect(answer.status).toBe(502);
    expect((answer.json as Envelope).error?.code).toBe(-32005);
  });

  it('-32603 (500) for an unexpected internal failure, with nothing internal shown', async () => {
    const keys = { getKeys: () => Promise.reject(new Error('secret store exploded at /var/secret/path')) };
    await withProxy({ overrides: { keys } }, async (broken) => {
      const answer = await broken.post('/api/erp/execute', valid());
      expect(answer.status).toBe(500);
      expect(answer.json).toEqual({
        jsonrpc: '2.0',
        id: 'e1',
        result: null,
        error: { code: -32603, message: 'Internal error', data: null },
      });
      expect(answer.text).not.toContain('exploded');
    });
  });
});

describe('v1 against ERP 22 (no /jsonrpc) with ERP_V1_TRANSPORT=jsonrpc', () => {
  const { double, proxy } = useErpAndProxy({ mode: '22' }, { env: { ERP_V1_TRANSPORT: 'jsonrpc' } });

  it('-32005 (502) saying the target may be ERP 22 or later and to use v2', async () => {
    const answer = await proxy.post('/api/erp/execute', {
      id: 'x22',
      action: 'search_count',
      model_id: 'res.partner',
      params: [[]],
      erp_instance: instance(double),
    });
    expect(answer.status).toBe(502);
    const envelope = answer.json as Envelope;
    expect(envelope.error?.code).toBe(-32005);
    expect(envelope.error?.message).toMatch(/22 or later/);
    expect(envelope.error?.message).toMatch(/v2/);
  });
});

describe.each(['16', '17', '18', '19', '22'] as ErpMode[])('version endpoints against ERP %s', (mode) => {
  const { double, proxy } = useErpAndProxy({ mode });

  it.each(['/api/erp/version', '/v1/erp/version', '/v2/erp/version'])(
    '%s answers version_info and version',
    async (path) => {
      const answer = await proxy.post(path, { id: 'v', url: double.url });
      expect(answer.status).toBe(200);
      const envelope = answer.json as Envelope;
      expect(envelope.error).toBeNull();
      expect(envelope.id).toBe('v');
      const result = envelope.result as { version_info: unknown[]; version: string };
      expect(Object.keys(result).sort()).toEqual(['version', 'version_info']);
      expect(result.version_info[0]).toBe(Number(mode));
      expect(typeof result.version).toBe('string');
      expect(result.version.startsWith(`${mode}.`)).toBe(true);
      // As the ERP spelled it: 16 and 17 are nightly builds (`16.0-20231208`, captures o16-/o17-v1-common_version).
      const release = releaseOf(mode);
      expect(result).toEqual({ version_info: [...release.versionInfo], version: release.version });
      if (mode === '16' || mode === '17') expect(result.version).toMatch(/^1[67]\.0-\d{8}$/);
    },
  );

  it('uses /web/version on 19+ and falls back to common.version before', async () => {
    await withProxy({}, async (fresh) => {
      double.requests.length = 0;
      await fresh.post('/api/erp/version', { id: 'v', url: double.url });
      const paths = double.requests.map((r) => `${r.method} ${r.path}`);
      expect(paths[0]).toBe('GET /web/version');
      if (Number(mode) >= 19) expect(paths).toEqual(['GET /web/version']);
      else expect(paths).toEqual(['GET /web/version', 'POST /jsonrpc']);
    });
  });
});

describe('version endpoint errors', () => {
  const proxy = useProxy();

  it('-32600 when url is missing; -32000 without a key', async () => {
    const missing = await proxy.post('/api/erp/version', { id: 'v' });
    expect(missing.status).toBe(400);
    expect((missing.json as Envelope).error?.message).toContain('url');
    const unauthenticated = await proxy.post(
      '/v2/erp/version',
      { id: 'v', url: 'http://127.0.0.1:1' },
      { 'x-api-key': 'x' },
    );
    expect(unauthenticated.status).toBe(401);
  });
});

describe('local server as API Gateway', () => {
  const proxy = useProxy();

  it('answers unknown routes and wrong methods with 404 {"message":"Not Found"}', async () => {
    for (const answer of [
      await proxy.get('/nope'),
      await proxy.get('/api/erp/execute'),
      await proxy.post('/api/erp/execute/x', {}),
    ]) {
      expect(answer.status).toBe(404);
      expect(answer.json).toEqual({ message: 'Not Found' });
    }
  });

  it('refuses bodies over 6 MB with 413', async () => {
    const big = JSON.stringify({ id: 'big', pad: 'x'.repeat(6 * 1024 * 1024 + 10) });
    const answer = await proxy.post('/api/erp/execute', big);
    expect(answer.status).toBe(413);
  });

  it('accepts a key configured as PROXY_API_KEYS with several named keys', async () => {
    const env = {
      PROXY_API_KEY: '',
      PROXY_API_KEYS: JSON.stringify({
        keys: [
          { name: 'billing', key: 'billing-key-0123456789' },
          { name: 'crm', key: 'crm-key-0123456789abcd' },
        ],
      }),
    };
    await withProxy({ env }, async (named) => {
      for (const key of ['billing-key-0123456789', 'crm-key-0123456789abcd']) {
        const answer = await named.post('/api/erp/version', { id: 'k' }, { 'x-api-key': key });
        expect(answer.status).toBe(400); // authenticated, then refused for the missing url
      }
      const wrong = await named.post('/api/erp/version', { id: 'k' }, { 'x-api-key': TEST_PROXY_KEY });
      expect(wrong.status).toBe(401);
    });
  });
});

describe('local server function timeout', () => {
  it('answers 500 like API Gateway when a handler outlives the function timeout', async () => {
    const crashes: unknown[] = [];
    const stuckProxy = {
      overrides: { keys: { getKeys: () => new Promise<never>(() => undefined) } },
      server: { functionTimeoutMs: 300, onCrash: (error: unknown) => crashes.push(error) },
    };
    await withProxy(stuckProxy, async (stuck) => {
      const answer = await stuck.post('/api/erp/version', { id: 't', url: 'http://127.0.0.1:1' });
      expect(answer.status).toBe(500);
      expect(answer.json).toEqual({ message: 'Internal Server Error' });
      expect(String(crashes[0])).toMatch(/timed out/);
    });
  });
});
