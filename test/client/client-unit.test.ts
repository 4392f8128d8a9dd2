/**
 * The client's parts off the network: the back-off, `Retry-After`, ULIDs, the v2-to-v1
 * translation (the README's "From v1 to v2" table read backwards), the version parsing, the
 * option checks, and how answers that are not plain envelopes become errors (a `fetch` stub
 * plays the proxy or the gateway in front of it).
 */
import { describe, expect, it } from 'vitest';
import {
  ErpError,
  ErpProxy,
  ErpProxyError,
  ErpTarget,
  majorVersion,
  type ProxyCalls,
  toV1Call,
  ulid,
  type VersionInfo,
} from '../../client/src/index.ts';
import {
  BASE_DELAY_MS,
  isRetryable,
  MAX_BACKOFF_MS,
  MAX_RETRY_AFTER_SECONDS,
  parseRetryAfter,
  retryDelayMs,
} from '../../client/src/retry.ts';

describe('retryDelayMs', () => {
  it('doubles per attempt, with half of the wait random', () => {
    expect(retryDelayMs(0, undefined, () => 0)).toBe(BASE_DELAY_MS / 2);
    expect(retryDelayMs(0, undefined, () => 1)).toBe(BASE_DELAY_MS);
    expect(retryDelayMs(1, undefined, () => 0)).toBe(BASE_DELAY_MS);
    expect(retryDelayMs(2, undefined, () => 1)).toBe(BASE_DELAY_MS * 4);
  });

  it('stops growing at the maximum back-off', () => {
    expect(retryDelayMs(30, undefined, () => 1)).toBe(MAX_BACKOFF_MS);
  });

  it('never comes sooner than Retry-After, and gives up when Retry-After is too long', () => {
    expect(retryDelayMs(0, 5, () => 1)).toBe(5_000);
    expect(retryDelayMs(0, 0, () => 1)).toBe(BASE_DELAY_MS);
    expect(retryDelayMs(0, MAX_RETRY_AFTER_SECONDS, () => 0)).toBe(MAX_RETRY_AFTER_SECONDS * 1000);
    expect(retryDelayMs(0, MAX_RETRY_AFTER_SECONDS + 1, () => 0)).toBeUndefined();
  });

  it('with a cap (maxRetryWaitSeconds): the back-off is cut to it, a longer Retry-After gives up', () => {
    expect(retryDelayMs(30, undefined, () => 1, 2)).toBe(2_000);
    expect(retryDelayMs(0, undefined, () => 1, 0)).toBe(0);
    expect(retryDelayMs(0, 2, () => 0, 2)).toBe(2_000);
    expect(retryDelayMs(0, 3, () => 0, 2)).toBeUndefined();
    expect(retryDelayMs(0, 1, () => 0, 0)).toBeUndefined();
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-21T10:00:00Z');
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter(' 3 ', now)).toBe(3);
    expect(parseRetryAfter('Sat, 21 Nov 2026 10:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('Sat, 21 Nov 2026 09:00:00 GMT', now)).toBe(0);
  });
  it('ignores what it cannot read', () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-1', now)).toBeUndefined();
  });
});

describe('isRetryable', () => {
  it('is true only for -32004 and lock conflicts', () => {
    expect(isRetryable(new ErpProxyError({ code: -32004, message: '', httpStatus: 503 }))).toBe(true);
    expect(isRetryable(new ErpProxyError({ code: -32003, message: '', httpStatus: 504 }))).toBe(false);
    expect(isRetryable(new ErpProxyError({ code: -32000, message: '', httpStatus: 401 }))).toBe(false);
    expect(
      isRetryable(new ErpProxyError({ code: -32004, message: '', httpStatus: 0, mayHaveRun: true })),
    ).toBe(false);
    expect(isRetryable(new ErpError({ code: 409, message: '' }))).toBe(true);
    expect(
      isRetryable(new ErpError({ code: 0, message: '', data: { name: 'odoo.exceptions.LockError' } })),
    ).toBe(true);
    expect(
      isRetryable(new ErpError({ code: 0, message: '', data: { name: 'odoo.exceptions.UserError' } })),
    ).toBe(false);
    expect(isRetryable(new Error('other'))).toBe(false);
  });
});

describe('the error classes', () => {
  it('take mayHaveRun from the error table, and an unknown code as "may have run"', () => {
    expect(new ErpProxyError({ code: -32008, message: '', httpStatus: 403 }).mayHaveRun).toBe(false);
    expect(new ErpProxyError({ code: -32009, message: '', httpStatus: 502 }).mayHaveRun).toBe(true);
    expect(new ErpProxyError({ code: -32099, message: '', httpStatus: 500 }).mayHaveRun).toBe(true);
  });
  it('name an ErpError after the exception class, or ErpError when the ERP gave none', () => {
    expect(new ErpError({ code: 404, message: 'gone', data: 'a bare string' }).name).toBe('ErpError');
    expect(new ErpError({ code: 404, message: 'gone', data: { name: '' } }).name).toBe('ErpError');
    expect(new ErpError({ code: 404, message: 'gone' }).data).toBeNull();
  });
});

describe('ulid', () => {
  it('is 26 characters of Crockford base 32 that sort by time', () => {
    const early = ulid(Date.parse('2026-01-01T00:00:00Z'));
    const late = ulid(Date.parse('2026-01-01T00:00:00.001Z'));
    expect(early).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(early < late).toBe(true);
    expect(ulid(0).slice(0, 10)).toBe('0000000000');
  });
  it('differs from call to call within one millisecond', () => {
    const now = Date.now();
    expect(new Set(Array.from({ length: 100 }, () => ulid(now))).size).toBe(100);
  });
});

describe('toV1Call: the "From v1 to v2" table backwards', () => {
  const domain = [['is_company', '=', true]];
  it.each([
    [
      'search_read',
      { domain, fields: ['name'], limit: 5, offset: 1, order: 'name' },
      {
        action: 'search_read',
        params: [domain],
        keyword: { fields: ['name'], limit: 5, offset: 1, order: 'name' },
      },
    ],
    ['search', { domain, limit: 5 }, { action: 'search', params: [domain], keyword: { limit: 5 } }],
    ['search_count', { domain }, { action: 'search_count', params: [domain], keyword: {} }],
    ['search_count', {}, { action: 'search_count', params: [[]], keyword: {} }],
    [
      'read',
      { ids: [1, 2], fields: ['name'] },
      { action: 'read', params: [[1, 2]], keyword: { fields: ['name'] } },
    ],
    [
      'fields_get',
      { attributes: ['type'], allfields: ['name'] },
      { action: 'fields_get', params: [], keyword: { attributes: ['type'], allfields: ['name'] } },
    ],
    ['create', { vals_list: [{ name: 'A' }] }, { action: 'create', params: [[{ name: 'A' }]], keyword: {} }],
    ['create', {}, { action: 'create', params: [], keyword: {} }],
    [
      'write',
      { ids: [1], vals: { name: 'B' } },
      { action: 'write', params: [[1]], keyword: { vals: { name: 'B' } } },
    ],
    ['unlink', { ids: [1] }, { action: 'unlink', params: [[1]], keyword: {} }],
    ['read', {}, { action: 'read', params: [], keyword: {} }],
    [
      'name_search',
      { name: 'Acme', limit: 1 },
      { action: 'call_method', fn_name: 'name_search', params: [], keyword: { name: 'Acme', limit: 1 } },
    ],
    [
      'action_archive',
      { ids: [3], context: { lang: 'en_US' } },
      {
        action: 'call_method',
        fn_name: 'action_archive',
        params: [[3]],
        keyword: { context: { lang: 'en_US' } },
      },
    ],
  ])('%s %j', (method, kwargs, expected) => {
    expect(toV1Call(method, kwargs)).toEqual(expected);
  });
});

describe('majorVersion', () => {
  const info = (first: number | string, version = ''): VersionInfo => ({
    version_info: [first, 0, 0, 'final', 0, ''],
    version,
  });
  it('reads numbers, saas strings, and falls back to `version`', () => {
    expect(majorVersion(info(19))).toBe(19);
    expect(majorVersion(info('saas~18', 'saas~18.2'))).toBe(18);
    expect(
      majorVersion({ version_info: [] as unknown as VersionInfo['version_info'], version: '17.0' }),
    ).toBe(17);
    expect(majorVersion(info('master'))).toBeNaN();
  });
});

describe('ErpProxy options', () => {
  const good = { url: 'http://127.0.0.1:8787', apiKey: 'a-proxy-key-0123456789' };
  it('refuses what the proxy would refuse later, with the option named', () => {
    expect(() => new ErpProxy({ ...good, url: 'localhost:8787' })).toThrow(/url must be an absolute http/);
    expect(() => new ErpProxy({ ...good, apiKey: '' })).toThrow(/apiKey/);
    expect(() => new ErpProxy({ ...good, timeoutSeconds: 1.5 })).toThrow(/timeoutSeconds/);
    expect(() => new ErpProxy({ ...good, timeoutSeconds: 0 })).toThrow(/timeoutSeconds/);
    expect(() => new ErpProxy({ ...good, retries: -1 })).toThrow(/retries/);
    const proxy = new ErpProxy(good);
    expect(proxy.retries).toBe(2);
    expect(() => proxy.erp({ url: 'http://erp', db: '', apiKey: 'k' })).toThrow(/db/);
    expect(() => proxy.erp({ url: 'http://erp', db: 'd', apiKey: '' })).toThrow(/apiKey/);
    expect(() => proxy.erp({ url: 'http://erp', db: 'd', apiKey: 'k', userId: 2.5 })).toThrow(/userId/);
  });
  it('checks a per-call timeout too', async () => {
    const proxy = new ErpProxy({ ...good, fetch: () => Promise.reject(new Error('not called')) });
    await expect(proxy.version('http://erp', { timeoutSeconds: -1 })).rejects.toThrow(/timeoutSeconds/);
  });
});

/** An ErpProxy whose `fetch` answers every call with `response()`; counts the calls. */
function stubbed(response: () => Response | Promise<Response>, retries = 2, idempotency?: boolean) {
  let calls = 0;
  const keys: (string | undefined)[] = [];
  const proxy = new ErpProxy({
    url: 'http://proxy.test',
    apiKey: 'a-proxy-key-0123456789',
    retries,
    ...(idempotency === undefined ? {} : { idempotency }),
    fetch: async (_input, init) => {
      calls += 1;
      keys.push((init?.headers as Record<string, string> | undefined)?.['idempotency-key']);
      return response();
    },
  });
  const v2 = () =>
    proxy.v2({
      model_id: 'res.partner',
      method: 'search_count',
      kwargs: { domain: [] },
      erp_instance: { url: 'http://erp.test', db: 'd', api_key: 'an-erp-key' },
    });
  return { proxy, v2, calls: () => calls, keys: () => keys };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

describe('answers that are not a plain result', () => {
  it('a license error (code 0 with HTTP 403) is a proxy error, not an ERP error', async () => {
    const { v2 } = stubbed(() =>
      json(403, {
        jsonrpc: '2.0',
        id: 'x',
        result: null,
        error: { code: 0, message: 'License expired', data: null },
      }),
    );
    const error = await v2().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ErpProxyError);
    expect(error).toMatchObject({ code: 0, httpStatus: 403, mayHaveRun: false, retryable: false });
  });

  it('a v1 ERP error (code 0 with HTTP 200) is an ErpError', async () => {
    const { v2 } = stubbed(() =>
      json(200, {
        jsonrpc: '2.0',
        id: 'x',
        result: null,
        error: { code: 0, message: 'Invalid field', data: { name: 'builtins.ValueError' } },
      }),
    );
    await expect(v2()).rejects.toMatchObject({
      code: 0,
      name: 'builtins.ValueError',
      message: 'Invalid field',
    });
  });

  it('a result of null (a method that returned None) is null', async () => {
    const { v2 } = stubbed(() => json(200, { jsonrpc: '2.0', id: 'x', error: null }));
    expect(await v2()).toBeNull();
  });

  it("API Gateway's 404 and 413: refused before anything ran, not retried", async () => {
    for (const status of [404, 413]) {
      const { v2, calls } = stubbed(() => json(status, { message: 'Not Found' }));
      const error = await v2().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ErpProxyError);
      expect(error).toMatchObject({ code: -32600, httpStatus: status, mayHaveRun: false, retryable: false });
      expect((error as Error).message).toContain('{"message":"Not Found"}');
      expect(calls()).toBe(1);
    }
  });

  it("API Gateway's 429 (throttled): did not run, retried", async () => {
    const { v2, calls } = stubbed(
      () => json(429, { message: 'Too Many Requests' }, { 'retry-after': '0' }),
      1,
    );
    await expect(v2()).rejects.toMatchObject({ code: -32004, httpStatus: 429, retryable: true });
    expect(calls()).toBe(2);
  });

  it("-32012 (an operator's brake): a 503 that did not run, never retried, unlike -32004's 503", async () => {
    const envelope = (code: number, message: string) => ({
      jsonrpc: '2.0',
      id: 'x',
      result: null,
      error: { code, message, data: null },
    });
    const reason =
      'Stopped by an operator: a loop of writes. The call did not run; this brake (brk_1) holds until 2026-12-08T06:00:00.000Z.';
    for (const headers of [{}, { 'retry-after': '0' }] as Record<string, string>[]) {
      const braked = stubbed(() => json(503, envelope(-32012, reason), headers));
      const error = await braked.v2().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ErpProxyError);
      expect(error).toMatchObject({
        code: -32012,
        httpStatus: 503,
        mayHaveRun: false,
        retryable: false,
        message: reason,
      });
      expect(braked.calls()).toBe(1);
    }
    // A brake that expires by itself says when: still not waited for.
    const expiring = stubbed(() => json(503, envelope(-32012, reason), { 'retry-after': '7' }));
    await expect(expiring.v2()).rejects.toMatchObject({
      code: -32012,
      retryAfterSeconds: 7,
      retryable: false,
    });
    expect(expiring.calls()).toBe(1);
    expect(isRetryable(new ErpProxyError({ code: -32012, message: '', httpStatus: 503 }))).toBe(false);
    // The same status with -32004 (the ERP side turned the call away) is retried.
    const unavailable = stubbed(
      () => json(503, envelope(-32004, 'ERP unavailable'), { 'retry-after': '0' }),
      1,
    );
    await expect(unavailable.v2()).rejects.toMatchObject({ code: -32004, httpStatus: 503, retryable: true });
    expect(unavailable.calls()).toBe(2);
  });

  it("API Gateway's 500 (the function ran out of time) and other strange answers: may have run, not retried", async () => {
    for (const response of [
      () => json(500, { message: 'Internal Server Error' }),
      () =>
        new Response('<html>bad gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } }),
      () => json(200, { jsonrpc: '1.0', result: 1 }),
      () => json(200, { jsonrpc: '2.0', error: { code: 'x', message: 1 } }),
      () => json(200, { jsonrpc: '2.0', error: 'failed' }),
      () => json(200, [1, 2]),
      () => json(503, { jsonrpc: '2.0', id: 'x', result: 1, error: null }),
      () => new Response('', { status: 502 }),
    ]) {
      const { v2, calls } = stubbed(response);
      const error = await v2().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ErpProxyError);
      expect(error).toMatchObject({ code: -32005, mayHaveRun: true, retryable: false });
      expect(calls()).toBe(1);
    }
  });

  it('a plain-text 400 keeps its text', async () => {
    const { v2 } = stubbed(
      () =>
        new Response('method: is required\n', {
          status: 400,
          headers: { 'content-type': 'text/plain; charset=utf-8' },
        }),
    );
    await expect(v2()).rejects.toMatchObject({
      code: -32600,
      httpStatus: 400,
      message: 'method: is required',
    });
  });

  it('a version answer without version_info is refused', async () => {
    const { proxy } = stubbed(() =>
      json(200, { jsonrpc: '2.0', id: 'x', result: { version: '19.0' }, error: null }),
    );
    await expect(proxy.version('http://erp.test')).rejects.toMatchObject({ code: -32005, httpStatus: 200 });
  });

  it('a failed version lookup is not cached', async () => {
    let answer = json(503, {
      jsonrpc: '2.0',
      id: 'x',
      result: null,
      error: { code: -32004, message: 'busy' },
    });
    const { proxy, calls } = stubbed(() => answer, 0);
    await expect(proxy.version('http://erp.test')).rejects.toMatchObject({ code: -32004 });
    answer = json(200, {
      jsonrpc: '2.0',
      id: 'x',
      result: { version_info: [19, 0, 0, 'final', 0, ''], version: '19.0' },
      error: null,
    });
    expect((await proxy.version('http://erp.test')).version).toBe('19.0');
    expect((await proxy.version('http://erp.test/')).version).toBe('19.0');
    expect(calls()).toBe(2);
  });

  it('a connection that breaks after the request may have run: -32003, not retried without an Idempotency-Key', async () => {
    const { v2, calls, keys } = stubbed(
      () => {
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
        });
      },
      2,
      false,
    );
    await expect(v2()).rejects.toMatchObject({
      code: -32003,
      httpStatus: 0,
      mayHaveRun: true,
      retryable: false,
    });
    expect(calls()).toBe(1);
    expect(keys()).toEqual([undefined]);
  });

  it('with its Idempotency-Key (the default), a dropped connection is retried with the same key; the last -32003 names it', async () => {
    const { v2, calls, keys } = stubbed(() => {
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
      });
    });
    const error = await v2().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: -32003, mayHaveRun: true, connectionLost: true });
    expect(calls()).toBe(3);
    const [first] = keys();
    expect(first).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(keys()).toEqual([first, first, first]);
    expect((error as ErpProxyError).idempotencyKey).toBe(first);
    expect((error as Error).message).toMatch(new RegExp(`^Outcome unknown \\(Idempotency-Key ${first}\\)`));
  });

  it('retries a -32010 after its Retry-After with the same key, and gets the first answer', async () => {
    let n = 0;
    const { v2, keys } = stubbed(() => {
      n += 1;
      return n === 1
        ? json(
            409,
            {
              jsonrpc: '2.0',
              id: 'x',
              result: null,
              error: { code: -32010, message: 'still running', data: null },
            },
            { 'retry-after': '0' },
          )
        : json(200, { jsonrpc: '2.0', id: 'x', result: 7, error: null }, { 'idempotent-replayed': 'true' });
    });
    await expect(v2()).resolves.toBe(7);
    expect(new Set(keys()).size).toBe(1);
    expect(keys()).toHaveLength(2);
  });

  it("sends a fresh key per call, the caller's own when given, none when told not to", async () => {
    const { proxy, keys } = stubbed(() => json(200, { jsonrpc: '2.0', id: 'x', result: 1, error: null }));
    const body = {
      model_id: 'res.partner',
      method: 'create',
      kwargs: { vals_list: [{ name: 'A' }] },
      erp_instance: { url: 'http://erp.test', db: 'd', api_key: 'an-erp-key' },
    };
    await proxy.v2(body);
    await proxy.v2(body);
    await proxy.v2(body, { idempotencyKey: 'order-42-create' });
    await proxy.v2(body, { idempotencyKey: false });
    const [a, b, own, none] = keys();
    expect(a).not.toBe(b);
    expect(own).toBe('order-42-create');
    expect(none).toBeUndefined();
    await expect(proxy.v2(body, { idempotencyKey: 'two words' })).rejects.toThrow(TypeError);
    // A comma would make the header a list, which the proxy refuses: refused before sending.
    await expect(proxy.v2(body, { idempotencyKey: 'order-42,create' })).rejects.toThrow(
      'no spaces or commas',
    );
    // A key that starts with a quote is sent as a structured-field string, so the proxy reads it back.
    await proxy.v2(body, { idempotencyKey: '"quoted\\' });
    expect(keys().at(-1)).toBe('"\\"quoted\\\\"');
  });

  it("the target's helpers pass the caller's Idempotency-Key on (and `false`)", async () => {
    const options: unknown[] = [];
    const calls: ProxyCalls = {
      v1: async <T>() => 7 as T,
      v2: async <T>(_body: unknown, given?: unknown) => {
        options.push(given);
        return 8 as T;
      },
      version: async (): Promise<VersionInfo> => ({
        version: '19.0',
        version_info: [19, 0, 0, 'final', 0, ''],
      }),
    };
    const erp = new ErpTarget(calls, { url: 'http://erp.example.com', db: 'd', apiKey: 'k' });
    await erp.create('res.partner', { name: 'A' }, { idempotencyKey: 'order-43-create' });
    await erp.create('res.partner', { name: 'A' }, { idempotencyKey: false });
    expect(options).toMatchObject([{ idempotencyKey: 'order-43-create' }, { idempotencyKey: false }]);
  });

  it('failures of several kinds on several addresses may have run', async () => {
    const failed = (code: string) => Object.assign(new Error(code), { code });
    const { v2 } = stubbed(() => {
      throw new TypeError('fetch failed', {
        cause: new AggregateError([failed('ECONNREFUSED'), failed('ECONNRESET')]),
      });
    }, 0);
    await expect(v2()).rejects.toMatchObject({ code: -32003, mayHaveRun: true });
  });

  it('a refusal on every address of a name (an AggregateError) did not run', async () => {
    const refused = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const { v2, calls } = stubbed(() => {
      throw new TypeError('fetch failed', { cause: new AggregateError([refused(), refused()]) });
    }, 0);
    await expect(v2()).rejects.toMatchObject({ code: -32004, httpStatus: 0, mayHaveRun: false });
    expect(calls()).toBe(1);
  });

  it('a failure without a code may have run', async () => {
    const { v2 } = stubbed(() => Promise.reject('odd'), 0);
    await expect(v2()).rejects.toMatchObject({ code: -32003, message: expect.stringContaining('(odd)') });
  });

  it('a body that breaks off after the status may have run', async () => {
    const { v2 } = stubbed(
      () =>
        new Response(
          new ReadableStream({
            start(controller) {
              controller.error(new Error('body broke'));
            },
          }),
          { status: 200 },
        ),
      0,
    );
    await expect(v2()).rejects.toMatchObject({ code: -32003, mayHaveRun: true });
  });
});

describe('ErpTarget over any ProxyCalls', () => {
  it('works with an object that is not an ErpProxy: v2 on 19+, v1 below', async () => {
    const sent: unknown[] = [];
    const fake = (major: number): ProxyCalls => ({
      v1: async <T>(body: unknown) => {
        sent.push({ v1: body });
        return 7 as T;
      },
      v2: async <T>(body: unknown) => {
        sent.push({ v2: body });
        return 8 as T;
      },
      version: async (): Promise<VersionInfo> => ({
        version: `${major}.0`,
        version_info: [major, 0, 0, 'final', 0, ''],
      }),
    });
    const v2 = new ErpTarget(fake(19), { url: 'http://erp.example.com', db: 'd', apiKey: 'k' });
    expect(await v2.searchCount('res.partner')).toBe(8);
    const v1 = new ErpTarget(fake(17), { url: 'http://erp.example.com', db: 'd', apiKey: 'k', userId: 2 });
    expect(await v1.searchCount('res.partner')).toBe(7);
    expect(sent.map((call) => Object.keys(call as object)[0])).toEqual(['v2', 'v1']);
  });
});
