/**
 * Property-based tests over random and mutated request bodies and headers for every endpoint:
 * the answer is always a well-formed envelope (or the v2 plain-text error, or an aux body; on
 * /mcp a JSON-RPC answer of MCP), with a documented status; never a 500, never a crash, never a
 * hang.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TOOLS } from '../../lambdas/core/mcp/tools.ts';
import { ROUTES } from '../../lambdas/platform/routes.ts';
import { USERS, useErpAndProxy } from '../support/fixtures.ts';
import { type HttpAnswer, TEST_PROXY_KEY, toAnswer } from '../support/proxy-harness.ts';

const admin = USERS.adminA;

/** Every (code, HTTP status) pair the proxy documents, plus ERP-side answers on 200. */
const DOCUMENTED: Record<number, number> = {
  [-32700]: 400,
  [-32600]: 400,
  [-32000]: 401,
  [-32002]: 400,
  [-32003]: 504,
  [-32004]: 503,
  [-32005]: 502,
  [-32006]: 502,
  [-32007]: 400,
  [-32008]: 403,
  [-32009]: 502,
};

function assertWellFormed(path: string, answer: HttpAnswer): void {
  expect(answer.status).not.toBe(500);
  expect(answer.status).toBeLessThan(600);
  if (path === '/v2/erp/execute' && answer.headers.get('content-type')?.startsWith('text/plain')) {
    expect(answer.status).toBe(400);
    expect(answer.text.length).toBeGreaterThan(0);
    return;
  }
  const envelope = answer.json as Record<string, unknown>;
  expect(envelope).toBeTypeOf('object');
  expect(envelope.jsonrpc).toBe('2.0');
  expect(envelope).toHaveProperty('id');
  expect(envelope.id === null || typeof envelope.id === 'string').toBe(true);
  expect(Object.keys(envelope).sort()).toEqual(['error', 'id', 'jsonrpc', 'result']);
  const error = envelope.error as { code: unknown; message: unknown } | null;
  if (error === null) {
    expect(answer.status).toBe(200);
    return;
  }
  expect(typeof error.code).toBe('number');
  expect(typeof error.message).toBe('string');
  expect(envelope.result).toBeNull();
  const code = error.code as number;
  if (code in DOCUMENTED) expect(answer.status).toBe(DOCUMENTED[code]);
  else expect(answer.status).toBe(200); // an ERP-side error (0 on v1, the ERP's status on v2)
}

/**
 * A well-formed answer of `POST /mcp`: a JSON-RPC response with `result` or `error` (never both),
 * or 202 without a body; the statuses the README documents; never a 500.
 */
function assertMcpWellFormed(answer: HttpAnswer): void {
  expect([200, 202, 400, 401, 403, 406, 413, 415]).toContain(answer.status);
  if (answer.status === 202) {
    expect(answer.text).toBe('');
    return;
  }
  const message = answer.json as Record<string, unknown>;
  expect(message).toBeTypeOf('object');
  expect(message.jsonrpc).toBe('2.0');
  expect('result' in message !== 'error' in message).toBe(true);
  if ('error' in message) {
    const error = message.error as { code: unknown; message: unknown };
    expect(typeof error.code).toBe('number');
    expect(typeof error.message).toBe('string');
  } else {
    expect(answer.status).toBe(200);
  }
}

const jsonValue = fc.jsonValue({ maxDepth: 3 });

/** MCP messages, plausible and mutated: the tools with random arguments, and junk. */
function mcpBody(erpUrl: string): fc.Arbitrary<string> {
  const tool = fc.constantFrom(...TOOLS.map((declared) => declared.name), 'nope');
  const args = fc.oneof(
    fc.record(
      {
        model: fc.oneof(fc.constant('res.partner'), fc.string(), jsonValue),
        domain: fc.oneof(fc.constant([]), jsonValue),
        fields: fc.oneof(fc.constant(['name']), jsonValue),
        ids: fc.oneof(fc.constant([1]), jsonValue),
        limit: fc.oneof(fc.integer(), jsonValue),
        values: jsonValue,
        context: jsonValue,
      },
      { requiredKeys: [] },
    ),
    jsonValue,
  );
  const message = fc.oneof(
    fc.record({
      jsonrpc: fc.constant('2.0'),
      id: fc.oneof(fc.integer(), fc.string()),
      method: fc.constant('tools/call'),
      params: fc.record({ name: tool, arguments: args }, { requiredKeys: [] }),
    }),
    fc.record(
      {
        jsonrpc: fc.oneof(fc.constant('2.0'), jsonValue),
        id: fc.oneof(fc.integer(), fc.string(), jsonValue),
        method: fc.oneof(
          fc.constantFrom('initialize', 'tools/list', 'ping', 'notifications/initialized', 'resources/list'),
          fc.string(),
        ),
        params: jsonValue,
      },
      { requiredKeys: [] },
    ),
    fc.array(jsonValue),
    jsonValue,
  );
  return fc.oneof(
    { weight: 4, arbitrary: message.map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.string() },
    { weight: 1, arbitrary: fc.constant(erpUrl) },
  );
}

/** The headers of an MCP client, right or random. */
function mcpHeaders(erpUrl: string) {
  return fc.record(
    {
      accept: fc.oneof(fc.constant('application/json, text/event-stream'), headerValue),
      'content-type': fc.oneof(fc.constant('application/json'), headerValue),
      authorization: fc.oneof(fc.constant(`Bearer ${TEST_PROXY_KEY}`), headerValue),
      'mcp-protocol-version': fc.oneof(fc.constantFrom('2025-11-25', '2025-03-26'), headerValue),
      'x-erp-url': fc.oneof(fc.constant(erpUrl), headerValue),
      'x-erp-db': fc.oneof(fc.constant('erp_a'), headerValue),
      'x-erp-api-key': fc.oneof(fc.constant(admin.apiKey), headerValue),
      'x-erp-user-id': fc.oneof(fc.constant('2'), headerValue),
    },
    { requiredKeys: [] },
  );
}

/** Plausible bodies with random mutations: fields dropped, retyped, or replaced by junk. */
function bodyFor(path: string, erpUrl: string): fc.Arbitrary<unknown> {
  const instance = fc.record(
    {
      url: fc.oneof(fc.constant(erpUrl), fc.webUrl(), fc.string(), jsonValue),
      db: fc.oneof(fc.constant('erp_a'), fc.string(), jsonValue),
      user_id: fc.oneof(fc.constant(2), fc.integer(), jsonValue),
      api_key: fc.oneof(fc.constant(admin.apiKey), fc.string(), jsonValue),
    },
    { requiredKeys: [] },
  );
  const id = fc.oneof(fc.string(), fc.integer(), fc.constant(null));
  if (path.endsWith('/version')) {
    return fc.oneof(
      fc.record({ id, url: fc.oneof(fc.constant(erpUrl), fc.string(), jsonValue) }, { requiredKeys: [] }),
      jsonValue,
    );
  }
  if (path === '/v2/erp/execute') {
    return fc.oneof(
      fc.record(
        {
          id,
          model_id: fc.oneof(fc.constant('res.partner'), fc.string(), jsonValue),
          method: fc.oneof(
            fc.constantFrom('search_count', 'search_read', '_x', 'a/b'),
            fc.string(),
            jsonValue,
          ),
          kwargs: fc.oneof(fc.constant({ domain: [] }), fc.dictionary(fc.string(), jsonValue), jsonValue),
          erp_instance: fc.oneof(instance, jsonValue),
        },
        { requiredKeys: [] },
      ),
      jsonValue,
    );
  }
  return fc.oneof(
    fc.record(
      {
        id,
        action: fc.oneof(
          fc.constantFrom('search_count', 'search', 'read', 'call_method', 'create'),
          fc.string(),
          jsonValue,
        ),
        model_id: fc.oneof(fc.constant('res.partner'), fc.string(), jsonValue),
        params: fc.oneof(fc.constant([[]]), fc.array(jsonValue), jsonValue),
        keyword: fc.oneof(fc.dictionary(fc.string(), jsonValue), jsonValue),
        fn_name: fc.oneof(fc.constantFrom('', 'name_search', '  '), fc.string(), jsonValue),
        erp_instance: fc.oneof(instance, jsonValue),
      },
      { requiredKeys: [] },
    ),
    jsonValue,
  );
}

const rawBody = (erpUrl: string, path: string) =>
  fc.oneof(
    bodyFor(path, erpUrl).map((value) => JSON.stringify(value)),
    fc.string(),
    fc.string().map((s) => `{"id":"x",${s}`),
  );

const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,40}$/);
const headers = fc.record(
  {
    'x-api-key': fc.oneof(fc.constant(TEST_PROXY_KEY), headerValue),
    'x-request-timeout': fc.oneof(
      fc.constantFrom('0', '-1', '1', 'abc', '99999999999999', '1.5'),
      headerValue,
    ),
    'accept-encoding': fc.oneof(fc.constantFrom('gzip', 'br', 'gzip;q=0', '*', 'identity'), headerValue),
    'content-type': fc.oneof(
      fc.constantFrom('application/json', 'text/plain', 'application/octet-stream'),
      headerValue,
    ),
  },
  { requiredKeys: [] },
);

describe('every endpoint answers random input with a documented, well-formed response', () => {
  const { double, proxy } = useErpAndProxy(
    { mode: '19' },
    { env: { ERP_DEFAULT_TIMEOUT: '2', ERP_MAX_TIMEOUT: '2' } },
  );

  // The envelope's endpoints; /mcp speaks MCP's JSON-RPC (below).
  const postRoutes = ROUTES.filter((r) => r.method === 'POST' && r.fn !== 'mcp');

  it.each(postRoutes.map((r) => [r.path]))('POST %s', async (path) => {
    await fc.assert(
      fc.asyncProperty(rawBody(double.url, path), headers, async (body, requestHeaders) => {
        const response = await fetch(`${proxy.url}${path}`, {
          method: 'POST',
          headers: { 'accept-encoding': 'identity', ...requestHeaders },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        assertWellFormed(path, await toAnswer(response));
      }),
      { numRuns: 60 },
    );
  });

  it('POST /mcp', async () => {
    await fc.assert(
      fc.asyncProperty(mcpBody(double.url), headers, mcpHeaders(double.url), async (body, base, mcp) => {
        const { 'x-api-key': key, ...rest } = base;
        const response = await fetch(`${proxy.url}/mcp`, {
          method: 'POST',
          headers: {
            'accept-encoding': 'identity',
            ...rest,
            ...mcp,
            ...(key === undefined ? {} : { 'x-api-key': key }),
          },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        assertMcpWellFormed(await toAnswer(response));
      }),
      { numRuns: 80 },
    );
  });

  it.each(ROUTES.filter((r) => r.method === 'GET').map((r) => [r.path]))('GET %s', async (path) => {
    await fc.assert(
      fc.asyncProperty(headers, async (requestHeaders) => {
        const answer = await toAnswer(
          await fetch(`${proxy.url}${path}`, {
            headers: { 'accept-encoding': 'identity', ...requestHeaders },
          }),
        );
        // The OAuth protected resource metadata is 404 (the gateway's JSON) while OAuth is off, as here.
        if (path.startsWith('/.well-known/')) {
          expect(answer.status).toBe(404);
          expect(answer.json).toEqual({ message: 'Not Found' });
          return;
        }
        // The audit and the brakes are never a key's without a policy that lists them (this proxy's
        // test key has none).
        expect(path === '/_/audit' || path.startsWith('/_/brakes') ? [401, 403] : [200, 401]).toContain(
          answer.status,
        );
        if (answer.status === 401 || answer.status === 403) assertWellFormed(path, answer);
      }),
      { numRuns: 25 },
    );
  });
});
