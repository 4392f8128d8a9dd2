/**
 * An ERP URL with a path. Odoo 17 and later show `https://erp.example.com/odoo/...` in the
 * browser's address bar, and people paste that as the ERP's URL: the real Odoo 19 then answers
 * `GET /odoo/.../web/version` with a 303 to its login page and `POST /odoo/.../jsonrpc` (or
 * `/json/2/...`) with an HTML 400 (seen on the real 19 and 18 of ../shared). The -32005 of every
 * endpoint (v1, v2, version) and the MCP tool's answer then name the address without the path.
 * An ERP served under a path prefix (a front that forwards `/erp/...` to the ERP double) keeps
 * working, and a non-ERP page at a URL without a path gets no such hint.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Envelope, searchCountBody, USERS, useErpDouble, useProxy } from '../support/fixtures.ts';
import { erpHeaders, toolError, withMcpClient } from '../support/mcp-client.ts';
import { TEST_PROXY_KEY } from '../support/test-secrets.ts';

const admin = USERS.adminA;
const PREFIX = '/erp';

/**
 * A host like Odoo 17+ behind a front: `/erp/...` is the ERP double (the prefix stripped), `/odoo/...`
 * is the web client's routes (303 to the login page for GET, an HTML 400 for POST), and anything
 * else an HTML 404 page.
 */
async function startHost(doubleUrl: string): Promise<{ url: string; server: Server }> {
  const double = new URL(doubleUrl);
  const server = createServer((incoming, outgoing) => {
    const path = incoming.url ?? '/';
    if (path.startsWith(`${PREFIX}/`)) {
      const forward = httpRequest(
        {
          host: double.hostname,
          port: double.port,
          path: path.slice(PREFIX.length),
          method: incoming.method,
          headers: incoming.headers,
        },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      forward.on('error', () => outgoing.writeHead(502).end());
      incoming.pipe(forward);
      return;
    }
    incoming.resume();
    if (path.startsWith('/odoo/') && incoming.method === 'GET') {
      outgoing.writeHead(303, {
        location: `/web/login?redirect=${encodeURIComponent(path)}`,
        'content-type': 'text/html',
      });
      outgoing.end('<!doctype html><title>Redirecting...</title>');
    } else if (path.startsWith('/odoo/')) {
      outgoing.writeHead(400, { 'content-type': 'text/html; charset=utf-8' });
      outgoing.end('<!doctype html><title>400 Bad Request</title>');
    } else {
      outgoing.writeHead(404, { 'content-type': 'text/html; charset=utf-8' });
      outgoing.end('<!doctype html><title>404 Not Found</title>');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const v1Body = (url: string) => searchCountBody('v1', url, 'path-v1');
const v2Body = (url: string) => searchCountBody('v2', url, 'path-v2');

const double = useErpDouble({ mode: '19' });
const proxy = useProxy({ env: { ERP_V1_TRANSPORT: 'auto', ERP_V2_TRANSPORT: 'auto' } });
const v1Json2 = useProxy({ env: { ERP_V1_TRANSPORT: 'json2', ERP_V2_TRANSPORT: 'json2' } });
let host: { url: string; server: Server };
beforeAll(async () => {
  host = await startHost(double.url);
});
afterAll(async () => {
  host.server.closeAllConnections();
  await new Promise<void>((resolve) => host.server.close(() => resolve()));
});

/** The -32005 of an answer, which must be one. */
function notErpMessage(answer: { status: number; json: unknown }): string {
  const envelope = answer.json as Envelope;
  expect(answer.status, JSON.stringify(envelope)).toBe(502);
  expect(envelope.error?.code).toBe(-32005);
  return envelope.error?.message ?? '';
}

describe("the address bar's URL (https://erp.example.com/odoo/...)", () => {
  const pasted = () => `${host.url}/odoo/action-12`;
  const suggestion = () => `try ${host.url} (`;

  it.each([
    ['v1, ERP_V1_TRANSPORT=auto', '/api/erp/execute', 'auto'],
    ['v1, ERP_V1_TRANSPORT=json2', '/api/erp/execute', 'json2'],
    ['v2, ERP_V2_TRANSPORT=auto', '/v2/erp/execute', 'auto'],
    ['v2, ERP_V2_TRANSPORT=json2', '/v2/erp/execute', 'json2'],
  ] as const)('%s: -32005 naming the address without the path', async (_label, path, transport) => {
    const harness = transport === 'auto' ? proxy : v1Json2;
    const body = path === '/api/erp/execute' ? v1Body(pasted()) : v2Body(pasted());
    const message = notErpMessage(await harness.post(path, body));
    expect(message).toContain('The URL has a path (/odoo/action-12)');
    expect(message).toContain(suggestion());
    // Said once, after what came back.
    expect(message.split('The URL has a path').length).toBe(2);
    expect(message).toMatch(/HTTP (303|400) text\/html/);
  });

  it.each(['/api/erp/version', '/v1/erp/version', '/v2/erp/version'])(
    '%s: the redirect and the HTML 400, then the address without the path',
    async (path) => {
      const message = notErpMessage(await proxy.post(path, { id: 'path-version', url: pasted() }));
      expect(message).toMatch(/redirect \(HTTP 303/);
      expect(message).toContain(suggestion());
    },
  );

  it("an MCP tool's answer says the same, in the words of the MCP client's configuration", async () => {
    await withMcpClient(
      proxy.url,
      { 'x-api-key': TEST_PROXY_KEY, ...erpHeaders({ url: pasted(), db: 'erp_a', apiKey: admin.apiKey }) },
      async (client) => {
        const result = await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } });
        const error = toolError(result);
        expect(error.code).toBe(-32005);
        expect(error.message).toContain('The URL has a path (/odoo/action-12)');
        expect(error.message).toContain(suggestion());
        expect(error.message).not.toContain('erp_instance');
      },
    );
  });
});

describe.each(['16', '17'] as const)(
  "the address bar's URL on an ERP %s (no JSON-2, no /odoo routes)",
  (mode) => {
    // Odoo 16 and 17 answer every path they do not serve, /odoo/... and its /json/2 included, with
    // an HTML 404 page; their version lookup under the path fails the same way.
    const older = useErpDouble({ mode });
    const pasted = () => `${older.url}/odoo/action-12`;

    it('v2 (auto and json2): -32005 naming the address without the path, not "older than 19 (use v1)"', async () => {
      for (const harness of [proxy, v1Json2]) {
        const message = notErpMessage(await harness.post('/v2/erp/execute', v2Body(pasted())));
        expect(message).toContain('The URL has a path (/odoo/action-12)');
        expect(message).toContain(`try ${older.url} (`);
        expect(message.split('The URL has a path').length).toBe(2);
        expect(message).not.toContain('use v1');
      }
    });

    it('v1 and the version endpoint: the same -32005 with the hint', async () => {
      for (const harness of [proxy, v1Json2]) {
        const message = notErpMessage(await harness.post('/api/erp/execute', v1Body(pasted())));
        expect(message).toContain(`try ${older.url} (`);
      }
      const version = notErpMessage(await proxy.post('/v2/erp/version', { id: 'older-path', url: pasted() }));
      expect(version).toContain(`try ${older.url} (`);
    });

    it("an MCP tool's answer says the same (its named calls are v2's)", async () => {
      await withMcpClient(
        proxy.url,
        { 'x-api-key': TEST_PROXY_KEY, ...erpHeaders({ url: pasted(), db: 'erp_a', apiKey: admin.apiKey }) },
        async (client) => {
          const error = toolError(
            await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } }),
          );
          expect(error.code).toBe(-32005);
          expect(error.message).toContain(`try ${older.url} (`);
        },
      );
    });

    it('the same ERP at its address answers v2 over /jsonrpc, and without a path a missing /json/2 stays -32006', async () => {
      const served = await proxy.post('/v2/erp/execute', v2Body(older.url));
      expect((served.json as Envelope).result).toEqual(expect.any(Number));
      const json2Only = await v1Json2.post('/v2/erp/execute', v2Body(older.url));
      expect((json2Only.json as Envelope).error?.code).toBe(-32006);
    });
  },
);

describe("the address bar's URL on an ERP with several databases (the double's own /odoo pages)", () => {
  // Odoo 18+ answers /odoo/... without a selected database with a 303 to its database selector
  // (erp_a and erp_b here): the redirect's own advice ("use the final URL") would contradict the
  // path hint, so the hint stands alone.
  const pasted = () => `${double.url}/odoo`;

  it.each(['/api/erp/version', '/v1/erp/version', '/v2/erp/version'])(
    '%s: the redirect to the database selector, then only the address without the path',
    async (path) => {
      const message = notErpMessage(await proxy.post(path, { id: 'several-dbs', url: pasted() }));
      expect(message).toMatch(
        /^The ERP answered with a redirect \(HTTP 303 to \/web\/database\/selector\); redirects are not followed\. The URL has a path \(\/odoo\);/,
      );
      expect(message).toContain(`try ${double.url} (`);
      expect(message).not.toContain('final URL');
      expect(message.split('The URL has a path').length).toBe(2);
    },
  );

  it.each([
    ['/api/erp/execute', 'v1'],
    ['/v2/erp/execute', 'v2'],
  ] as const)('%s: -32005 with the hint alone', async (path, api) => {
    const body = api === 'v1' ? v1Body(pasted()) : v2Body(pasted());
    const message = notErpMessage(await proxy.post(path, body));
    expect(message).toContain('The URL has a path (/odoo)');
    expect(message).toContain(`try ${double.url} (`);
    expect(message).not.toContain('final URL');
  });

  it('a redirect from a URL without a path keeps its advice (an http:// front moving to https://)', async () => {
    const front = createServer((incoming, outgoing) => {
      incoming.resume();
      outgoing.writeHead(301, { location: `https://erp.example.com${incoming.url ?? '/'}` }).end();
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
      const message = notErpMessage(await proxy.post('/v2/erp/version', { id: 'moved', url }));
      expect(message).toMatch(/redirect \(HTTP 301 to https:\/\/erp\.example\.com\/web\/version\)/);
      expect(message).toContain('Use the final URL as erp_instance.url (often https:// instead of http://).');
      expect(message).not.toContain('The URL has a path');
    } finally {
      await new Promise<void>((resolve) => front.close(() => resolve()));
    }
  });
});

describe('an ERP served under a path prefix works as before', () => {
  const served = () => `${host.url}${PREFIX}`;

  it.each([
    ['/api/erp/execute', 'v1'],
    ['/v2/erp/execute', 'v2'],
  ] as const)('%s answers the count', async (path, api) => {
    for (const harness of [proxy, v1Json2]) {
      const answer = await harness.post(path, api === 'v1' ? v1Body(served()) : v2Body(served()));
      expect((answer.json as Envelope).error).toBeNull();
      expect((answer.json as Envelope).result).toEqual(expect.any(Number));
    }
  });

  it('the version endpoint answers the version, and a trailing slash changes nothing', async () => {
    for (const url of [served(), `${served()}/`]) {
      const answer = await proxy.post('/v2/erp/version', { id: 'prefix-version', url });
      expect((answer.json as Envelope).result).toEqual({
        version_info: [19, 0, 0, 'final', 0, ''],
        version: '19.0',
      });
    }
  });
});

describe('a non-ERP page at a URL without a path', () => {
  it.each(['', '/'])('-32005 without the hint (url %j after the host)', async (tail) => {
    const message = notErpMessage(
      await proxy.post('/v2/erp/version', { id: 'no-path', url: `${host.url}${tail}` }),
    );
    expect(message).toContain('HTTP 404 text/html');
    expect(message).not.toContain('The URL has a path');
  });
});
