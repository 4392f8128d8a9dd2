/**
 * The client (`client/`, `@erp-proxy/client`) against the local proxy and the ERP double over
 * loopback: the version asked once per target, the v1/v2 choice for ERP 17, 19 and 22 with the
 * same answers from every helper, each error class, and the envelope ids and headers it sends.
 * Retries are in retries.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  ErpError,
  ErpProxy,
  ErpProxyError,
  type ErpProxyOptions,
  type JsonObject,
} from '../../client/src/index.ts';
import { type ErpMode, startErpDouble } from '../erp-double/index.ts';
import { USERS, useErpAndProxy } from '../support/fixtures.ts';
import { TEST_PROXY_KEY } from '../support/proxy-harness.ts';
import { recordingFetch } from '../support/recording-fetch.ts';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** The execute_kw arguments the double received on /jsonrpc (v1), without the key. */
function executeKwArgs(body: string): unknown[] {
  const args = (JSON.parse(body) as { params: { args: unknown[] } }).params.args;
  return [args[0], args[1], args[3], args[4], args[5], args[6]];
}

describe.each([
  { mode: '17', endpoint: '/api/erp/execute' },
  { mode: '19', endpoint: '/v2/erp/execute' },
  { mode: '22', endpoint: '/v2/erp/execute' },
] as const)('the client against ERP $mode', ({ mode, endpoint }) => {
  const { double, proxy } = useErpAndProxy({ mode: mode as ErpMode });

  function client(options: Partial<ErpProxyOptions> = {}, user = USERS.adminA) {
    const recording = recordingFetch();
    const erpProxy = new ErpProxy({
      url: proxy.url,
      apiKey: TEST_PROXY_KEY,
      fetch: recording.fetch,
      ...options,
    });
    const erp = erpProxy.erp({ url: double.url, db: user.db, apiKey: user.apiKey, userId: user.uid });
    return { recording, erpProxy, erp };
  }

  it('asks the version once per target URL, and again only when asked to refresh', async () => {
    const { recording, erpProxy, erp } = client();
    const info = await erp.version();
    expect(info.version_info[0]).toBe(Number(mode));
    expect(await erp.api()).toBe(mode === '17' ? 'v1' : 'v2');
    await erp.version();
    await erp.searchCount('res.partner');
    // Another handle on the same ERP (another database, a trailing slash) shares the answer.
    await erpProxy.erp({ url: `${double.url}/`, db: 'erp_b', apiKey: USERS.adminB.apiKey }).version();
    expect(recording.to('/api/erp/version')).toHaveLength(1);
    await erp.version({ refresh: true });
    expect(recording.to('/api/erp/version')).toHaveLength(2);
  });

  it(`sends calls to ${endpoint}, the domain in the form that API wants`, async () => {
    const { recording, erp } = client();
    double.reset();
    const companies = await erp.searchRead('res.partner', [['is_company', '=', true]], {
      fields: ['name'],
      limit: 2,
      order: 'name asc',
    });
    expect(companies.map((company) => company.name)).toEqual(['Acme Corporation', 'Azure Interior']);
    expect(recording.sent.filter((call) => call.path.endsWith('/execute')).map((call) => call.path)).toEqual([
      endpoint,
    ]);
    const executed = double.requests.filter(
      (request) => request.method === 'POST' && request.path !== '/web/version',
    );
    if (mode === '17') {
      const [call] = executed.filter((request) => request.body.includes('execute_kw'));
      // v1: the domain is wrapped once more, as the first positional argument.
      expect(executeKwArgs(call?.body ?? '{}')).toEqual([
        'erp_a',
        2,
        'res.partner',
        'search_read',
        [[['is_company', '=', true]]],
        { fields: ['name'], limit: 2, order: 'name asc' },
      ]);
    } else {
      const [call] = executed.filter((request) => request.path.startsWith('/json/2/'));
      expect(call?.path).toBe('/json/2/res.partner/search_read');
      expect(JSON.parse(call?.body ?? '{}')).toEqual({
        domain: [['is_company', '=', true]],
        fields: ['name'],
        limit: 2,
        order: 'name asc',
      });
    }
  });

  it('gives the same answers from every helper: create, write, read, search, searchCount, fieldsGet, unlink, call', async () => {
    const { erp } = client();
    double.reset();
    const name = `Client test ${mode}`;
    const id = await erp.create('res.partner', { name, is_company: true });
    expect(typeof id).toBe('number');
    const more = await erp.create('res.partner', [{ name: `${name} a` }, { name: `${name} b` }]);
    expect(more).toHaveLength(2);
    expect(await erp.write('res.partner', [id], { email: 'client@example.com' })).toBe(true);
    expect(await erp.read('res.partner', [id], { fields: ['name', 'email'] })).toEqual([
      { id, name, email: 'client@example.com' },
    ]);
    expect(await erp.search('res.partner', [['name', '=', name]])).toEqual([id]);
    expect(await erp.searchCount('res.partner', [['id', 'in', [id, ...more]]])).toBe(3);
    const fields = await erp.fieldsGet('res.partner', { attributes: ['type'] });
    expect(fields.name).toEqual({ type: 'char' });
    const found = await erp.call<[number, string][]>('res.partner', 'name_search', { name, limit: 1 });
    expect(found).toEqual([[id, name]]);
    expect(await erp.unlink('res.partner', [id, ...more])).toBe(true);
    expect(await erp.searchCount('res.partner', [['id', 'in', [id, ...more]]])).toBe(0);
  });

  it('throws ErpError with the ERP code, message and exception class', async () => {
    const { erp } = client({}, USERS.limitedA);
    const error = await erp.create('res.partner', { name: 'not allowed' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ErpError);
    const erpError = error as ErpError;
    expect(erpError.code).toBe(mode === '17' ? 0 : 403);
    expect(erpError.name).toBe('odoo.exceptions.AccessError');
    expect(erpError.message).toMatch(/not allowed to create/i);
    expect((erpError.data as JsonObject).name).toBe('odoo.exceptions.AccessError');
    expect(erpError.retryable).toBe(false);
    expect(erpError.id).toMatch(ULID);
  });
});

describe('the client: proxy errors, ids and headers', () => {
  const { double, proxy } = useErpAndProxy({ mode: '19' });
  const admin = () => ({ url: double.url, db: USERS.adminA.db, apiKey: USERS.adminA.apiKey });

  it('ERP 17 without userId: a clear error before any execute call', async () => {
    const old = await startErpDouble({ mode: '17' });
    try {
      const recording = recordingFetch();
      const erpProxy = new ErpProxy({ url: proxy.url, apiKey: TEST_PROXY_KEY, fetch: recording.fetch });
      const erp = erpProxy.erp({ url: old.url, db: 'erp_a', apiKey: USERS.adminA.apiKey });
      const error = await erp.searchCount('res.partner').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ErpProxyError);
      expect(error).toMatchObject({ code: -32600, httpStatus: 0, mayHaveRun: false, retryable: false });
      expect((error as Error).message).toMatch(
        /ERP 17\.0-20240709, older than 19.*needs the ERP user id.*userId/,
      );
      expect(recording.sent.map((call) => call.path)).toEqual(['/api/erp/version']);
    } finally {
      await old.close();
    }
  });

  it('a wrong proxy key: ErpProxyError -32000, HTTP 401, did not run, not retryable', async () => {
    const recording = recordingFetch();
    const erp = new ErpProxy({
      url: proxy.url,
      apiKey: 'not-a-proxy-key-0123456789',
      fetch: recording.fetch,
    }).erp(admin());
    const error = await erp.version().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ErpProxyError);
    expect(error).toMatchObject({ code: -32000, httpStatus: 401, mayHaveRun: false, retryable: false });
    expect(recording.sent).toHaveLength(1);
  });

  it('a target the policy refuses: ErpProxyError -32008, HTTP 403', async () => {
    const erpProxy = new ErpProxy({ url: proxy.url, apiKey: TEST_PROXY_KEY });
    const error = await erpProxy
      .v2({
        model_id: 'res.partner',
        method: 'search_count',
        kwargs: { domain: [] },
        erp_instance: { url: 'http://169.254.169.254', db: 'erp_a', api_key: USERS.adminA.apiKey },
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ErpProxyError);
    expect(error).toMatchObject({ code: -32008, httpStatus: 403, mayHaveRun: false, retryable: false });
  });

  it("v2's plain-text 400 becomes an ErpProxyError that keeps the text", async () => {
    const erpProxy = new ErpProxy({ url: proxy.url, apiKey: TEST_PROXY_KEY });
    const error = await erpProxy
      .v2({
        model_id: 'res.partner',
        method: 'search_count',
        // A caller without types sending an array: the proxy answers in plain text.
        kwargs: [] as unknown as JsonObject,
        erp_instance: { url: double.url, db: 'erp_a', api_key: USERS.adminA.apiKey },
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ErpProxyError);
    expect(error).toMatchObject({
      code: -32600,
      httpStatus: 400,
      message: 'kwargs: expected object, received array',
      mayHaveRun: false,
      retryable: false,
    });
  });

  it('v2 on ERP 17 through the raw endpoint: -32006, did not run, not retried', async () => {
    const old = await startErpDouble({ mode: '17' });
    try {
      const recording = recordingFetch();
      const erpProxy = new ErpProxy({ url: proxy.url, apiKey: TEST_PROXY_KEY, fetch: recording.fetch });
      const error = await erpProxy
        .v2({
          model_id: 'res.partner',
          method: 'search_count',
          kwargs: { domain: [] },
          erp_instance: { url: old.url, db: 'erp_a', api_key: USERS.adminA.apiKey },
        })
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: -32006, httpStatus: 502, mayHaveRun: false, retryable: false });
      expect(recording.sent).toHaveLength(1);
    } finally {
      await old.close();
    }
  });

  it('raw v1 and v2 return the result; each call gets a fresh ULID id unless one is given', async () => {
    const recording = recordingFetch();
    const erpProxy = new ErpProxy({ url: proxy.url, apiKey: TEST_PROXY_KEY, fetch: recording.fetch });
    const instance = { url: double.url, db: 'erp_a', user_id: 2, api_key: USERS.adminA.apiKey };
    const v1Count = await erpProxy.v1({
      action: 'search_count',
      model_id: 'res.partner',
      params: [[['is_company', '=', true]]],
      erp_instance: instance,
    });
    const v2Count = await erpProxy.v2({
      model_id: 'res.partner',
      method: 'search_count',
      kwargs: { domain: [['is_company', '=', true]] },
      erp_instance: instance,
    });
    expect(typeof v1Count).toBe('number');
    expect(v2Count).toBe(v1Count);
    await erpProxy.v2({
      id: 'mine',
      model_id: 'res.partner',
      method: 'search_count',
      kwargs: { domain: [] },
      erp_instance: instance,
    });
    await erpProxy.erp(admin()).searchCount('res.partner', [], { id: 'also-mine' });
    const ids = recording.sent.map((call) => call.body.id);
    expect(ids[0]).toMatch(ULID);
    expect(ids[1]).toMatch(ULID);
    expect(ids[0]).not.toBe(ids[1]);
    expect(ids.slice(2)).toEqual(['mine', expect.stringMatching(ULID), 'also-mine']);
  });

  it('sends timeoutSeconds as x-request-timeout, per client and per call, and the proxy key as x-api-key', async () => {
    const recording = recordingFetch();
    const erpProxy = new ErpProxy({
      url: `${proxy.url}/`,
      apiKey: TEST_PROXY_KEY,
      timeoutSeconds: 7,
      fetch: recording.fetch,
    });
    const erp = erpProxy.erp(admin());
    await erp.searchCount('res.partner');
    await erp.searchCount('res.partner', [], { timeoutSeconds: 3 });
    expect(recording.sent.map((call) => call.headers.get('x-request-timeout'))).toEqual(['7', '7', '3']);
    expect(recording.sent.every((call) => call.headers.get('x-api-key') === TEST_PROXY_KEY)).toBe(true);
    const untimed = recordingFetch();
    await new ErpProxy({ url: proxy.url, apiKey: TEST_PROXY_KEY, fetch: untimed.fetch })
      .erp(admin())
      .version();
    expect(untimed.sent[0]?.headers.has('x-request-timeout')).toBe(false);
  });
});
