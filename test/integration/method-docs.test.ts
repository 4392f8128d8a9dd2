/**
 * v1 `call_method` over JSON-2 and the ERP's method documentation (`/doc-bearer/<model>.json`):
 * cached per target, database and model and revalidated with its ETag; a key that may not read
 * it (403) still calls with `[ids]` or `[]`, and gets a clear -32600 otherwise. Also: a database
 * that JSON-2 cannot select, for a v1 caller.
 */
import { describe, expect, it } from 'vitest';
import { UpstreamMeter } from '../../lambdas/upstream/erp-transport.ts';
import { createHttpClient } from '../../lambdas/upstream/http-client.ts';
import { MethodDocClient } from '../../lambdas/upstream/method-docs.ts';
import { startErpDouble } from '../erp-double/index.ts';
import { type Envelope, USERS, useErpAndProxy, withProxy } from '../support/fixtures.ts';

const { adminA, limitedA } = USERS;

/** v1 `call_method` on `res.partner` of database erp_a, through `setup`'s proxy to its ERP double. */
function callMethodOn(setup: ReturnType<typeof useErpAndProxy>) {
  return async (user: typeof adminA, fnName: string, params: unknown[], keyword = {}) => {
    const answer = await setup.proxy.post('/api/erp/execute', {
      id: 'cm',
      action: 'call_method',
      fn_name: fnName,
      model_id: 'res.partner',
      params,
      keyword,
      erp_instance: { url: setup.double.url, db: 'erp_a', user_id: user.uid, api_key: user.apiKey },
    });
    return { status: answer.status, envelope: answer.json as Envelope };
  };
}

describe('call_method over JSON-2 (ERP_V1_TRANSPORT=json2, ERP 19)', () => {
  const { double, proxy } = useErpAndProxy({ mode: '19' }, { env: { ERP_V1_TRANSPORT: 'json2' } });

  const callMethod = callMethodOn({ double, proxy });
  const docRequests = () => double.requests.filter((r) => r.path === '/doc-bearer/res.partner.json');

  it('reads the document once for several calls on the same model', async () => {
    double.reset();
    const first = await callMethod(adminA, 'name_search', ['Azure']);
    const second = await callMethod(adminA, 'name_search', ['Deco']);
    expect(first.envelope.error).toBeNull();
    expect(second.envelope.error).toBeNull();
    expect(docRequests()).toHaveLength(1);
    expect(docRequests()[0]?.headers['x-odoo-database']).toBe('erp_a');
    expect(docRequests()[0]?.headers.authorization).toBe(`bearer ${adminA.apiKey}`);
    // The calls themselves went over JSON-2 with named arguments.
    const calls = double.requests.filter((r) => r.path === '/json/2/res.partner/name_search');
    expect(calls.map((r) => JSON.parse(r.body))).toEqual([{ name: 'Azure' }, { name: 'Deco' }]);
  });

  describe('a key without the "Technical Documentation" group (403 on the document), on a proxy that has no document yet', () => {
    const limited = useErpAndProxy({ mode: '19' }, { env: { ERP_V1_TRANSPORT: 'json2' } });
    const callMethod = callMethodOn(limited);
    const double = limited.double;
    const docRequests = () => double.requests.filter((r) => r.path === '/doc-bearer/res.partner.json');

    it('still calls a record method with params [ids]', async () => {
      const ids = [1, 2];
      const { envelope } = await callMethod(limitedA, 'read', [ids]);
      expect(envelope.error).toBeNull();
      expect((envelope.result as unknown[]).length).toBe(2);
    });

    it('still calls with params [] and named keyword', async () => {
      const { envelope } = await callMethod(limitedA, 'name_search', [], { name: 'Azure' });
      expect(envelope.error).toBeNull();
      expect((envelope.result as unknown[]).length).toBeGreaterThan(0);
    });

    it('-32600 naming the method and v2 for other positional params; the ERP never runs it', async () => {
      double.reset();
      const { status, envelope } = await callMethod(limitedA, 'web_search_read', [[], { name: {} }]);
      expect(status).toBe(400);
      expect(envelope.error?.code).toBe(-32600);
      expect(envelope.error?.message).toMatch(/res\.partner\.web_search_read/);
      expect(envelope.error?.message).toMatch(/by name/);
      expect(envelope.error?.message).toMatch(/v2/);
      expect(double.requests.some((r) => r.path.startsWith('/json/2/'))).toBe(false);
    });

    it('remembers the 403 for that key: the document is not asked for again on the next call', async () => {
      double.reset();
      await callMethod(limitedA, 'name_search', [], { name: 'A' });
      await callMethod(limitedA, 'name_search', [], { name: 'B' });
      expect(docRequests()).toHaveLength(0);
      // Another key is asked for the document: the miss was this key's.
      await callMethod(adminA, 'web_search_read', [[], { name: {} }], { limit: 1 });
      expect(docRequests()).toHaveLength(1);
    });

    it('once a key that may read it has fetched the document, it names params for every key', async () => {
      const { envelope } = await callMethod(limitedA, 'web_search_read', [[], { name: {} }], { limit: 1 });
      expect(envelope.error).toBeNull();
    });
  });

  it('the admin key names the same params from the document', async () => {
    const { envelope } = await callMethod(adminA, 'web_search_read', [[], { name: {} }], { limit: 1 });
    expect(envelope.error).toBeNull();
  });

  it('a documented method the built-in table also knows works for the limited key (name_search by position)', async () => {
    const { envelope } = await callMethod(limitedA, 'name_search', ['Azure']);
    expect(envelope.error).toBeNull();
  });

  it('an undocumented (deprecated) method uses the built-in table: read_group by position', async () => {
    const { envelope } = await callMethod(adminA, 'read_group', [[], ['is_company'], ['is_company']]);
    expect(envelope.error).toBeNull();
    expect(Array.isArray(envelope.result)).toBe(true);
  });

  it('ERP errors keep v1 shape: code 0, the ERP message, data.name the exception class', async () => {
    const { status, envelope } = await callMethod(adminA, 'write', [[999999], { name: 'x' }]);
    expect(status).toBe(200);
    expect(envelope.error?.code).toBe(0);
    expect(envelope.error?.data?.name).toBe('odoo.exceptions.MissingError');
    expect(envelope.error?.message).toBe(envelope.error?.data?.message);
  });

  it("a bad key: code 0 with JSON-2's own exception name (werkzeug.exceptions.Unauthorized)", async () => {
    const { envelope } = await callMethod({ ...adminA, apiKey: 'not-the-key-0000000' }, 'name_search', [], {
      name: 'A',
    });
    expect(envelope.error?.code).toBe(0);
    expect(envelope.error?.data?.name).toBe('werkzeug.exceptions.Unauthorized');
  });
});

describe('the document cache', () => {
  it('revalidates a document with its ETag once it is no longer fresh (304: kept)', async () => {
    const double = await startErpDouble({ mode: '19' });
    let now = 1_000_000;
    const docs = new MethodDocClient(createHttpClient(), { freshMs: 60_000, now: () => now });
    const target = { baseUrl: new URL(double.url), db: 'erp_a', apiKey: adminA.apiKey, model: 'res.partner' };
    const context = {
      signal: new AbortController().signal,
      timeoutMs: 5000,
      maxResponseBytes: 10_000_000,
      compressedResponse: false,
      clientIp: undefined,
      stripDebug: false,
      meter: new UpstreamMeter(),
    };
    try {
      expect((await docs.lookup(target, 'name_search', context)).kind).toBe('documented');
      now += 30_000;
      expect((await docs.lookup(target, 'copy', context)).kind).toBe('documented');
      expect(double.requests).toHaveLength(1);
      now += 60_000;
      expect((await docs.lookup(target, 'read_group', context)).kind).toBe('undocumented');
      expect(double.requests).toHaveLength(2);
      const etag = double.requests[1]?.headers['if-none-match'];
      expect(etag).toMatch(/^[0-9a-f]{64}$/);
      // Another database is another document.
      await docs.lookup({ ...target, db: 'erp_b', apiKey: USERS.adminB.apiKey }, 'copy', context);
      expect(double.requests).toHaveLength(3);
      expect(double.requests[2]?.headers['if-none-match']).toBeUndefined();
    } finally {
      await double.close();
    }
  });
});

describe('a database JSON-2 cannot select, for a v1 caller', () => {
  it('ERP 19-21 in json2 mode: the call goes back over /jsonrpc, which reaches it (dbfilter)', async () => {
    const double = await startErpDouble({ mode: '19', dbfilter: '^erp_a$' });
    try {
      await withProxy({ env: { ERP_V1_TRANSPORT: 'json2' } }, async (proxy) => {
        const answer = await proxy.post('/api/erp/execute', {
          id: 'f',
          action: 'search_count',
          model_id: 'res.partner',
          params: [[]],
          erp_instance: { url: double.url, db: 'erp_b', user_id: 2, api_key: USERS.adminB.apiKey },
        });
        expect((answer.json as Envelope).error).toBeNull();
        const paths = double.requests.map((r) => r.path);
        expect(paths).toContain('/json/2/res.partner/search_count');
        expect(paths[paths.length - 1]).toBe('/jsonrpc');
      });
    } finally {
      await double.close();
    }
  });

  it('ERP 22 (no /jsonrpc): -32006 that tells a v1 caller to fix db or the hostname', async () => {
    const double = await startErpDouble({ mode: '22' });
    try {
      await withProxy({}, async (proxy) => {
        const answer = await proxy.post('/api/erp/execute', {
          id: 'n',
          action: 'search_count',
          model_id: 'res.partner',
          params: [[]],
          erp_instance: { url: double.url, db: 'no_such_db', user_id: 2, api_key: adminA.apiKey },
        });
        const envelope = answer.json as Envelope;
        expect(answer.status).toBe(502);
        expect(envelope.error?.code).toBe(-32006);
        expect(envelope.error?.message).toMatch(/erp_instance\.db/);
        expect(envelope.error?.message).not.toMatch(/use v1/);
      });
    } finally {
      await double.close();
    }
  });
});
