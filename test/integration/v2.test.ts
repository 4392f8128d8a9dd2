/**
 * v2 execute (JSON-2) over real HTTP: the local server in front of the ERP double.
 */
import { describe, expect, it } from 'vitest';
import type { ErpDouble } from '../erp-double/index.ts';
import { type Envelope, USERS, useErpAndProxy, withErpAndProxy } from '../support/fixtures.ts';
import type { ProxyHarness } from '../support/proxy-harness.ts';

const admin = USERS.adminA;
const adminB = USERS.adminB;
const limited = USERS.limitedA;
const expired = USERS.expiredA;

describe('v2 execute against ERP 19', () => {
  const { double, proxy } = useErpAndProxy({ mode: '19' });

  const v2 = async (body: Record<string, unknown>, instance: Record<string, unknown> = {}) => {
    const answer = await proxy.post('/v2/erp/execute', {
      id: 'v2-req',
      erp_instance: { url: double.url, db: 'erp_a', api_key: admin.apiKey, ...instance },
      ...body,
    });
    return { ...answer, envelope: answer.json as Envelope };
  };

  it('forwards to /json/2/<model>/<method> with the documented headers and kwargs as the body', async () => {
    double.requests.length = 0;
    const kwargs = {
      domain: [['is_company', '=', true]],
      fields: ['name'],
      limit: 2,
      context: { lang: 'en_US' },
    };
    const { status, envelope } = await v2({ model_id: 'res.partner', method: 'search_read', kwargs });
    expect(status).toBe(200);
    expect(envelope.error).toBeNull();
    expect(Array.isArray(envelope.result)).toBe(true);
    const sent = double.requests.at(-1)!;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/json/2/res.partner/search_read');
    expect(sent.headers.authorization).toBe(`bearer ${admin.apiKey}`);
    expect(sent.headers['x-odoo-database']).toBe('erp_a');
    expect(sent.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(sent.headers.accept).toBe('application/json');
    expect(sent.headers['user-agent']).toMatch(/^erp-proxy\/0\.9\./);
    expect(sent.headers.cookie).toBeUndefined();
    expect(JSON.parse(sent.body)).toEqual(kwargs);
  });

  it('a v1-shaped erp_instance (with user_id) works unchanged', async () => {
    const { envelope } = await v2(
      { model_id: 'res.partner', method: 'search_count', kwargs: { domain: [] } },
      { user_id: 2 },
    );
    expect(envelope.error).toBeNull();
    expect(Number.isInteger(envelope.result)).toBe(true);
  });

  it('create returns a list of ids; a method returning None gives result null', async () => {
    const created = await v2({
      model_id: 'res.partner',
      method: 'create',
      kwargs: { vals_list: [{ name: 'V2 one' }] },
    });
    expect(Array.isArray(created.envelope.result)).toBe(true);
    const ids = created.envelope.result as number[];
    const archived = await v2({ model_id: 'res.partner', method: 'action_archive', kwargs: { ids } });
    expect(archived.status).toBe(200);
    expect(archived.envelope).toEqual({ jsonrpc: '2.0', id: 'v2-req', result: null, error: null });
  });

  it.each([
    [
      'invalid key',
      { kwargs: { domain: [] } },
      { api_key: 'f'.repeat(40) },
      401,
      'werkzeug.exceptions.Unauthorized',
    ],
    [
      'expired key',
      { kwargs: { domain: [] } },
      { api_key: expired.apiKey },
      401,
      'werkzeug.exceptions.Unauthorized',
    ],
    [
      'unknown model',
      { model_id: 'res.partnerx', kwargs: { domain: [] } },
      {},
      404,
      'werkzeug.exceptions.NotFound',
    ],
    ['unknown method', { method: 'does_not_exist', kwargs: {} }, {}, 404, 'werkzeug.exceptions.NotFound'],
    ['private method', { method: '_foo', kwargs: {} }, {}, 403, 'odoo.exceptions.AccessError'],
    ['unknown kwarg', { kwargs: { domain: [], foo: 1 } }, {}, 422, 'werkzeug.exceptions.UnprocessableEntity'],
    ['missing argument', { kwargs: {} }, {}, 422, 'werkzeug.exceptions.UnprocessableEntity'],
    [
      'ids on a model method',
      { kwargs: { domain: [], ids: [1] } },
      {},
      422,
      'werkzeug.exceptions.UnprocessableEntity',
    ],
    ['bad domain', { kwargs: { domain: ['is_company', '=', true] } }, {}, 500, 'builtins.ValueError'],
    [
      'access error',
      { model_id: 'ir.config_parameter', method: 'search_read', kwargs: { domain: [] } },
      { api_key: limited.apiKey },
      403,
      'odoo.exceptions.AccessError',
    ],
  ])(
    'ERP error (%s) → HTTP 200, error.code %s being the ERP status',
    async (_name, patch, instancePatch, code, name) => {
      const { status, envelope } = await v2(
        { model_id: 'res.partner', method: 'search_count', ...patch },
        instancePatch,
      );
      expect(status).toBe(200);
      expect(envelope.result).toBeNull();
      expect(envelope.error?.code).toBe(code);
      const data = envelope.error?.data as Record<string, unknown>;
      expect(data.name).toBe(name);
      expect(envelope.error?.message).toBe(data.message);
    },
  );

  it('a missing record on write is 404 MissingError', async () => {
    const { envelope } = await v2({
      model_id: 'res.partner',
      method: 'write',
      kwargs: { ids: [999999], vals: { name: 'x' } },
    });
    expect(envelope.error?.code).toBe(404);
    expect(envelope.error?.data).toHaveProperty('name', 'odoo.exceptions.MissingError');
  });

  describe('request shape errors are HTTP 400 text/plain naming the field', () => {
    it.each([
      ['kwargs as an array', { kwargs: [[], ['name']] }, 'kwargs: expected object, received array'],
      ['kwargs missing', { kwargs: undefined }, 'kwargs: is required'],
      ['method mistyped', { method: 7 }, 'method: expected string, received number'],
      [
        'erp_instance.db missing',
        { erp_instance: { url: 'http://127.0.0.1:1', api_key: 'k' } },
        'erp_instance.db: is required',
      ],
      ['id missing', { id: undefined }, 'id: is required'],
    ])('%s', async (_name, patch, message) => {
      const answer = await proxy.post('/v2/erp/execute', {
        id: 'shape',
        model_id: 'res.partner',
        method: 'search_count',
        kwargs: {},
        erp_instance: { url: double.url, db: 'erp_a', api_key: admin.apiKey },
        ...patch,
      });
      expect(answer.status).toBe(400);
      expect(answer.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(answer.text).toContain(message);
      expect(answer.json).toBeUndefined();
    });

    it('invalid JSON', async () => {
      const answer = await proxy.post('/v2/erp/execute', '{"id":');
      expect(answer.status).toBe(400);
      expect(answer.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(answer.text).toMatch(/^body: /);
    });

    it('but a wrong x-api-key is still the -32000 envelope, first', async () => {
      const answer = await proxy.post('/v2/erp/execute', '{"id":', { 'x-api-key': 'nope' });
      expect(answer.status).toBe(401);
      expect((answer.json as Envelope).error?.code).toBe(-32000);
    });
  });

  describe('-32007 (400) for names and header values that cannot travel upstream', () => {
    it.each([
      ['model with a slash', { model_id: 'res.partner/../x' }],
      ['model with ..', { model_id: 'res..partner' }],
      ['model empty', { model_id: '' }],
      ['model with %', { model_id: 'res%2Epartner' }],
      ['model with space', { model_id: 'res partner' }],
      ['method with a dot', { method: 'search.read' }],
      ['method with ?', { method: 'search?x=1' }],
      ['method with #', { method: 'search#x' }],
      ['method with a slash', { method: 'a/b' }],
      ['method empty', { method: '' }],
    ])('%s', async (_name, patch) => {
      double.requests.length = 0;
      const { status, envelope } = await v2({
        model_id: 'res.partner',
        method: 'search_count',
        kwargs: { domain: [] },
        ...patch,
      });
      expect(status).toBe(400);
      expect(envelope.error?.code).toBe(-32007);
      expect(double.requests.length).toBe(0);
    });

    it.each([
      ['db with CR/LF', { db: 'erp_a\r\nX-Evil: 1' }],
      ['db with a control character', { db: 'erp\u0001a' }],
      ['db non-ASCII', { db: 'erp_é' }],
      ['db with a leading space', { db: ' erp_a' }],
      ['db empty', { db: '' }],
      ['api_key with LF', { api_key: 'abc\ndef' }],
      ['api_key with a trailing space', { api_key: `${admin.apiKey} ` }],
      ['api_key non-ASCII', { api_key: 'clé' }],
    ])('%s', async (_name, instancePatch) => {
      const { status, envelope, text } = await v2(
        { model_id: 'res.partner', method: 'search_count', kwargs: { domain: [] } },
        instancePatch,
      );
      expect(status).toBe(400);
      expect(envelope.error?.code).toBe(-32007);
      if ('api_key' in instancePatch) expect(text).not.toContain(String(instancePatch.api_key).trim());
    });

    it('a method starting with _ is forwarded (the ERP refuses it)', async () => {
      const { envelope } = await v2({ model_id: 'res.partner', method: '_private', kwargs: {} });
      expect(envelope.error?.code).toBe(403);
    });
  });

  describe('-32006 (502) when v2 is unavailable', () => {
    it('the database does not exist: says it is a database or hostname problem', async () => {
      const { status, envelope } = await v2(
        { model_id: 'res.partner', method: 'search_count', kwargs: { domain: [] } },
        { db: 'no_such_db' },
      );
      expect(status).toBe(502);
      expect(envelope.error?.code).toBe(-32006);
      expect(envelope.error?.message).toMatch(/database or hostname/);
    });
  });

  it('a non-JSON answer (415 HTML) is -32005', async () => {
    // The double answers 415 HTML when JSON-2 gets a non-JSON content type; reach that by
    // pointing at a base URL whose /json/2 route is the HTML catch-all of the double.
    const { status, envelope } = await v2(
      { model_id: 'res.partner', method: 'search_count', kwargs: { domain: [] } },
      { url: `${double.url}/not-odoo` },
    );
    expect([502]).toContain(status);
    expect([-32005, -32006]).toContain(envelope.error?.code);
  });
});

describe('v2 -32006 causes', () => {
  const call = (proxy: ProxyHarness, double: ErpDouble, db: string, key: string, url = double.url) =>
    proxy.post('/v2/erp/execute', {
      id: 'x',
      model_id: 'res.partner',
      method: 'search_count',
      kwargs: { domain: [] },
      erp_instance: { url, db, api_key: key },
    });

  it.each(['16', '17', '18'] as const)('ERP %s has no JSON-2: -32006 saying to use v1', async (mode) => {
    await withErpAndProxy({ mode }, async (double, proxy) => {
      const answer = await call(proxy, double, 'erp_a', admin.apiKey);
      expect(answer.status).toBe(502);
      const envelope = answer.json as Envelope;
      expect(envelope.error?.code).toBe(-32006);
      expect(envelope.error?.message).toMatch(/older than 19/);
    });
  });

  it('a database filtered out by the dbfilter: -32006 database or hostname', async () => {
    await withErpAndProxy({ mode: '19', dbfilter: '^erp_a$' }, async (double, proxy) => {
      const ok = await call(proxy, double, 'erp_a', admin.apiKey);
      expect((ok.json as Envelope).error).toBeNull();
      const filtered = await call(proxy, double, 'erp_b', adminB.apiKey);
      expect(filtered.status).toBe(502);
      expect((filtered.json as Envelope).error?.code).toBe(-32006);
      expect((filtered.json as Envelope).error?.message).toMatch(/database or hostname/);
    });
  });

  it('a hostname-selected database (%d filter) reached through the wrong hostname: -32006', async () => {
    await withErpAndProxy({ mode: '19', dbfilter: '^%d$' }, async (double, proxy) => {
      const answer = await call(proxy, double, 'erp_a', admin.apiKey);
      expect(answer.status).toBe(502);
      expect((answer.json as Envelope).error?.code).toBe(-32006);
      expect((answer.json as Envelope).error?.message).toMatch(/hostname/);
    });
  });
});

describe('v2 against ERP 22', () => {
  it('works (JSON-2 only)', async () => {
    await withErpAndProxy({ mode: '22' }, async (double, proxy) => {
      const answer = await proxy.post('/v2/erp/execute', {
        id: 'x',
        model_id: 'res.partner',
        method: 'search_count',
        kwargs: { domain: [] },
        erp_instance: { url: double.url, db: 'erp_a', api_key: admin.apiKey },
      });
      expect(answer.status).toBe(200);
      expect(Number.isInteger((answer.json as Envelope).result)).toBe(true);
    });
  });
});
