/**
 * `POST /mcp` end to end (README, "Agents (MCP)"): the MCP SDK's own `Client` with
 * `StreamableHTTPClientTransport`, configured only with the URL and headers, against the local
 * proxy and the ERP double on loopback. Read-only tools by default, write tools when enabled, a
 * wrong key refused before any MCP processing, missing ERP headers and a refused target as tool
 * errors, results cut to size with a paging note, every ERP version, the log line and metrics.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RESULT_CHARS } from '../../lambdas/core/mcp/answers.ts';
import type { ErpDouble, ErpMode } from '../erp-double/index.ts';
import { logLinesDuring } from '../support/captured-output.ts';
import { USERS, useErpAndProxy, useErpDouble, useProxy } from '../support/fixtures.ts';
import {
  erpHeaders as connectionHeaders,
  connectMcp,
  isError,
  json,
  READ_TOOLS,
  texts,
  toolError,
  unlinkAndCheckGone,
  WRITE_TOOLS,
  withMcpClient,
} from '../support/mcp-client.ts';
import { type ProxyHarness, TEST_PROXY_KEY } from '../support/proxy-harness.ts';

const admin = USERS.adminA;

/** The headers of an MCP client's configuration for the double's `erp_a` as its admin. */
function erpHeaders(double: ErpDouble, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...connectionHeaders({ url: double.url, db: 'erp_a', apiKey: admin.apiKey, uid: admin.uid }),
    ...extra,
  };
}

const connect = (proxy: ProxyHarness, headers: Record<string, string>) => connectMcp(proxy.url, headers);

function withClient<T>(
  proxy: ProxyHarness,
  headers: Record<string, string>,
  test: (client: Client, errors: Error[]) => Promise<T>,
): Promise<T> {
  return withMcpClient(proxy.url, headers, test);
}

/** A server on 127.0.0.1 for the enclosing block's tests, answering with `handler`; its URL once started. */
function useLoopbackServer(
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): () => string {
  let server: Server | undefined;
  let url = '';
  beforeAll(async () => {
    server = createServer(handler);
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });
  return () => url;
}

describe('POST /mcp, read-only by default', () => {
  const { double, proxy } = useErpAndProxy({ mode: '19' });

  it('lists the read tools only, each with a schema, a one-line description and annotations', async () => {
    await withClient(proxy, { 'x-api-key': TEST_PROXY_KEY }, async (client, errors) => {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(READ_TOOLS);
      for (const tool of tools) {
        expect(tool.description, tool.name).toMatch(/^[A-Z][^\n]{20,200}\.$/);
        expect(tool.inputSchema.type).toBe('object');
        expect(tool.annotations).toMatchObject({
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: true,
        });
      }
      const searchRead = tools.find((tool) => tool.name === 'search_read');
      expect(Object.keys(searchRead?.inputSchema.properties ?? {})).toEqual([
        'model',
        'domain',
        'fields',
        'limit',
        'offset',
        'order',
        'context',
      ]);
      expect(searchRead?.inputSchema.required).toEqual(['model']);
      const erpVersion = tools.find((tool) => tool.name === 'erp_version');
      expect(erpVersion?.inputSchema.properties ?? {}).toEqual({});
      // The client's GET after initialize met a 405, which it takes as "no event stream".
      expect(errors).toEqual([]);
      // A write tool is not there to call: the tool error says writes are off and who turns them on.
      const create = await client.callTool({
        name: 'create',
        arguments: { model: 'res.partner', values: {} },
      });
      expect(isError(create)).toBe(true);
      expect(texts(create)[0]).toMatch(
        /writes are off on this server.*An operator .* \(MCP_WRITE_TOOLS=true\)/,
      );
    });
  });

  it('reads partners, counts them, describes fields and lists models with the ERP headers only', async () => {
    await withClient(proxy, { 'x-api-key': TEST_PROXY_KEY, ...erpHeaders(double) }, async (client) => {
      const count = await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } });
      expect(json(count)).toEqual(expect.any(Number));
      const companies = await client.callTool({
        name: 'search_read',
        arguments: {
          model: 'res.partner',
          domain: [['is_company', '=', true]],
          fields: ['name', 'is_company'],
          order: 'name asc',
          limit: 2,
        },
      });
      const rows = json(companies) as { id: number; name: string; is_company: boolean }[];
      expect(rows).toHaveLength(2);
      expect(rows.every((row) => row.is_company)).toBe(true);
      // As many as the limit: the note says how to page.
      expect(texts(companies)[1]).toMatch(/limit: more may match\. Call search_read again with offset=2/);
      const read = await client.callTool({
        name: 'read',
        arguments: { model: 'res.partner', ids: [rows[0]?.id as number], fields: ['name'] },
      });
      expect(json(read)).toEqual([{ id: rows[0]?.id, name: rows[0]?.name }]);
      // The SDK 1.x client checks structuredContent against the tool's outputSchema (Ajv).
      expect(read.structuredContent).toEqual({ records: json(read) });
      const fields = await client.callTool({
        name: 'fields_get',
        arguments: { model: 'res.partner', fields: ['name', 'country_id'] },
      });
      // The default answer leaves out what is false or empty (required: false, readonly: false).
      expect(json(fields)).toEqual({
        name: { type: 'char', string: 'Name' },
        country_id: { type: 'many2one', string: 'Country', relation: 'res.country' },
      });
      const full = await client.callTool({
        name: 'fields_get',
        arguments: {
          model: 'res.partner',
          fields: ['country_id'],
          attributes: ['type', 'required', 'readonly'],
        },
      });
      expect(json(full)).toEqual({ country_id: { type: 'many2one', required: false, readonly: false } });
      const models = await client.callTool({ name: 'list_models', arguments: { search: 'partner' } });
      expect(json(models)).toEqual([
        { model: 'res.partner', name: 'Contact' },
        { model: 'res.partner.category', name: 'Partner Tags' },
      ]);
      const all = json(await client.callTool({ name: 'list_models', arguments: {} })) as { model: string }[];
      expect(all.map((m) => m.model)).toContain('ir.model');
      // Transient models (wizards) are left out.
      expect(all.map((m) => m.model)).not.toContain('res.config.settings');
      const version = await client.callTool({ name: 'erp_version', arguments: {} });
      expect(json(version)).toEqual({
        version_info: [19, 0, 0, 'final', 0, ''],
        version: '19.0',
        protocol: 'JSON-2 (/json/2/<model>/<method>)',
      });
    });
  });

  it('reads binary fields as their size unless the context asks for contents', async () => {
    double.requests.length = 0;
    await withClient(proxy, { 'x-api-key': TEST_PROXY_KEY, ...erpHeaders(double) }, async (client) => {
      await client.callTool({ name: 'search_read', arguments: { model: 'res.partner', fields: ['name'] } });
      await client.callTool({
        name: 'read',
        arguments: { model: 'res.partner', ids: [1], context: { bin_size: false, lang: 'en_US' } },
      });
    });
    const bodies = double.requests
      .filter((r) => r.path.startsWith('/json/2/'))
      .map((r) => JSON.parse(r.body));
    expect(bodies[0]).toMatchObject({ context: { bin_size: true }, limit: 80, offset: 0, domain: [] });
    expect(bodies[1]).toEqual({ ids: [1], context: { bin_size: false, lang: 'en_US' } });
  });

  it('answers an unknown model with isError: the ERP code, its exception name, and that retrying is safe', async () => {
    await withClient(proxy, { 'x-api-key': TEST_PROXY_KEY, ...erpHeaders(double) }, async (client) => {
      const result = await client.callTool({ name: 'search_read', arguments: { model: 'res.partnerx' } });
      expect(toolError(result)).toEqual({
        source: 'erp',
        code: 404,
        name: 'werkzeug.exceptions.NotFound',
        message: "the model 'res.partnerx' does not exist",
        retry_safe: true,
        retry_can_help: false,
        retry: expect.stringMatching(/does not exist\. Check the name \(list_models, fields_get\)/),
      });
    });
  });

  it('refuses arguments that do not fit the schema as a tool error, before any ERP call', async () => {
    double.requests.length = 0;
    await withClient(proxy, { 'x-api-key': TEST_PROXY_KEY, ...erpHeaders(double) }, async (client) => {
      const result = await client.callTool({
        name: 'search_read',
        arguments: { model: 'res partner; drop', limit: 0 },
      });
      expect(isError(result)).toBe(true);
      expect(texts(result)[0]).toMatch(/Invalid arguments for tool search_read/);
    });
    expect(double.requests.filter((r) => r.path.startsWith('/json/2/'))).toHaveLength(0);
  });

  it('says which header is missing when the client configures no ERP (a tool error, not a protocol error)', async () => {
    await withClient(proxy, { 'x-api-key': TEST_PROXY_KEY }, async (client) => {
      const result = await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } });
      const error = toolError(result);
      expect(error).toMatchObject({ source: 'proxy', code: -32600, retry_safe: true });
      expect(error.message).toMatch(/x-erp-url, x-erp-db, x-erp-api-key headers are missing/);
      expect(error.message).toMatch(/never take ERP credentials as arguments/);
    });
    await withClient(
      proxy,
      { 'x-api-key': TEST_PROXY_KEY, 'x-erp-url': double.url, 'x-erp-db': 'erp_a' },
      async (client) => {
        const error = toolError(
          await client.callTool({ name: 'read', arguments: { model: 'res.partner', ids: [1] } }),
        );
        expect(error.message).toMatch(/^The x-erp-api-key header is missing\./);
        // The version needs the URL only.
        const version = await client.callTool({ name: 'erp_version', arguments: {} });
        expect(isError(version)).toBeFalsy();
      },
    );
    await withClient(
      proxy,
      {
        'x-api-key': TEST_PROXY_KEY,
        ...erpHeaders(double, { 'x-erp-url': 'not a url', 'x-erp-user-id': 'two' }),
      },
      async (client) => {
        const error = toolError(await client.callTool({ name: 'erp_version', arguments: {} }));
        expect(error.message).toMatch(
          /^The x-erp-url header must be an absolute URL such as https:\/\/erp\.example\.com: the ERP's base URL\./,
        );
      },
    );
    await withClient(
      proxy,
      { 'x-api-key': TEST_PROXY_KEY, ...erpHeaders(double, { 'x-erp-user-id': 'two' }) },
      async (client) => {
        const error = toolError(
          await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } }),
        );
        expect(error.message).toMatch(/^The x-erp-user-id header must be the ERP user's id/);
      },
    );
  });

  it('refuses a target the policy refuses (-32008) and the proxy key as the ERP key, without calling anything', async () => {
    double.requests.length = 0;
    await withClient(
      proxy,
      { 'x-api-key': TEST_PROXY_KEY, ...erpHeaders(double, { 'x-erp-url': 'http://169.254.169.254' }) },
      async (client) => {
        const refused = toolError(
          await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } }),
        );
        expect(refused).toMatchObject({ source: 'proxy', code: -32008, retry_safe: true });
        expect(refused.message).toMatch(/link-local, metadata/);
        const version = toolError(await client.callTool({ name: 'erp_version', arguments: {} }));
        expect(version.code).toBe(-32008);
      },
    );
    await withClient(
      proxy,
      {
        authorization: `Bearer ${TEST_PROXY_KEY}`,
        ...erpHeaders(double, { 'x-erp-api-key': ` ${TEST_PROXY_KEY}` }),
      },
      async (client) => {
        const result = await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } });
        expect(toolError(result).message).toMatch(/x-erp-api-key header holds the proxy key/);
        expect(JSON.stringify(result)).not.toContain(TEST_PROXY_KEY);
      },
    );
    expect(double.requests).toHaveLength(0);
  });

  it('logs one line per request with api mcp, the MCP method and the tool, never a key', async () => {
    const written = await logLinesDuring(async () => {
      await withClient(proxy, { 'x-api-key': TEST_PROXY_KEY, ...erpHeaders(double) }, async (client) => {
        await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } });
        await client.callTool({ name: 'search_read', arguments: { model: 'res.partnerx' } });
      });
    });
    const lines = written.map((line) => JSON.parse(line) as Record<string, unknown>);
    const requests = lines.filter((line) => line.message === 'request');
    expect(
      requests.map((line) => [line.api, line.mcp_method ?? null, line.tool ?? null, line.http_status]),
    ).toEqual([
      ['mcp', 'initialize', null, 200],
      ['mcp', 'notifications/initialized', null, 202],
      ['mcp', null, null, 405],
      ['mcp', 'tools/call', 'search_count', 200],
      ['mcp', 'tools/call', 'search_read', 200],
    ]);
    expect(requests[3]).toMatchObject({
      route: 'POST /mcp',
      action: 'search_count',
      model: 'res.partner',
      erp_db: 'erp_a',
      outcome: 'success',
      upstream_protocol: 'json2',
      caller: 'default',
    });
    expect(requests[4]).toMatchObject({ outcome: 'erp_error', error_code: 404, tool: 'search_read' });
    const text = JSON.stringify(lines);
    expect(text).not.toContain(admin.apiKey);
    expect(text).not.toContain(TEST_PROXY_KEY);
  });

  it('counts tool calls by tool and outcome in /_/metrics', async () => {
    await withClient(proxy, { 'x-api-key': TEST_PROXY_KEY, ...erpHeaders(double) }, async (client) => {
      await client.callTool({ name: 'fields_get', arguments: { model: 'res.partner', fields: ['name'] } });
      await client.callTool({ name: 'fields_get', arguments: { model: 'nope.nope' } });
    });
    const metrics = await proxy.get('/_/metrics', { 'x-api-key': TEST_PROXY_KEY });
    expect(metrics.text).toMatch(/^erp_proxy_mcp_tool_calls\{tool="fields_get",outcome="success"\} [1-9]/m);
    expect(metrics.text).toMatch(/^erp_proxy_mcp_tool_calls\{tool="fields_get",outcome="erp_error"\} [1-9]/m);
    expect(metrics.text).toMatch(/^erp_proxy_requests\{api="mcp",outcome="success"\} [1-9]/m);
    expect(metrics.text).toMatch(/^erp_proxy_errors\{api="mcp",code="404"\} [1-9]/m);
  });
});

describe('POST /mcp, the HTTP around MCP', () => {
  const { double, proxy } = useErpAndProxy({ mode: '19' });

  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const mcpHeaders = { accept: 'application/json, text/event-stream' };

  /** A POST to /mcp with only these headers (the harness's own `post` always sends the test key). */
  async function rawPost(headers: Record<string, string>, body: unknown) {
    const response = await fetch(`${proxy.url}/mcp`, {
      method: 'POST',
      headers: { ...mcpHeaders, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  }

  it('refuses a wrong or missing proxy key with 401 before the body is read (not even parsed)', async () => {
    for (const headers of [
      { 'x-api-key': 'wrong-key-0123456789abcdef' } as Record<string, string>,
      { authorization: 'Bearer wrong-key-0123456789abcdef' },
      { authorization: `Basic ${TEST_PROXY_KEY}` },
      {},
    ]) {
      const answer = await rawPost(headers, '{"this is": not JSON');
      expect(answer.status, JSON.stringify(Object.keys(headers))).toBe(401);
      expect(answer.json).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: expect.stringMatching(/^Authentication failed/) },
      });
    }
    // The SDK client sees the 401 as it connects.
    await expect(connect(proxy, { authorization: 'Bearer nope-0123456789abcdef' })).rejects.toMatchObject({
      code: 401,
      message: expect.stringMatching(/Authentication failed/),
    });
  });

  it('takes the key as x-api-key or Authorization: Bearer; x-api-key wins when both are sent', async () => {
    expect((await rawPost({ 'x-api-key': TEST_PROXY_KEY }, initialize)).status).toBe(200);
    expect((await rawPost({ authorization: `Bearer ${TEST_PROXY_KEY}` }, initialize)).status).toBe(200);
    expect((await rawPost({ authorization: `bearer   ${TEST_PROXY_KEY}  ` }, initialize)).status).toBe(200);
    const both = await rawPost(
      { 'x-api-key': 'wrong-key-0123456789abcdef', authorization: `Bearer ${TEST_PROXY_KEY}` },
      initialize,
    );
    expect(both.status).toBe(401);
    expect((both.json.error as { message: string }).message).toMatch(/the x-api-key header does not match/);
  });

  it('answers GET and DELETE with 405 and Allow: POST; other methods are not routes', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${proxy.url}/mcp`, {
        method,
        headers: { 'x-api-key': TEST_PROXY_KEY, accept: 'text/event-stream' },
      });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
        /POST only \(no event stream, no session to end\)/,
      );
    }
    const put = await fetch(`${proxy.url}/mcp`, { method: 'PUT', headers: { 'x-api-key': TEST_PROXY_KEY } });
    expect(put.status).toBe(404);
  });

  it('answers in JSON, never as an event stream, without a session id', async () => {
    const answer = await proxy.post('/mcp', initialize, mcpHeaders);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.headers.get('mcp-session-id')).toBeNull();
    expect(answer.json).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      result: {
        protocolVersion: '2025-11-25',
        capabilities: { tools: {} },
        serverInfo: { name: 'erp-proxy', version: expect.any(String) },
        instructions: expect.stringMatching(/list_models and fields_get/),
      },
    });
  });

  it('leaves protocol errors to MCP: a bad Accept (406), not JSON (400), a batch (400), an unknown method', async () => {
    expect((await proxy.post('/mcp', initialize, { accept: 'application/json' })).status).toBe(406);
    const notJson = await proxy.post('/mcp', '{nope', mcpHeaders);
    expect(notJson.status).toBe(400);
    expect(notJson.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    const deep = await proxy.post('/mcp', `${'['.repeat(5000)}${']'.repeat(5000)}`, mcpHeaders);
    expect(deep.status).toBe(400);
    expect(deep.json).toMatchObject({
      error: { code: -32600, message: expect.stringMatching(/deeper than 100/) },
    });
    const batch = await proxy.post('/mcp', [initialize, initialize], mcpHeaders);
    expect(batch.status).toBe(400);
    expect(batch.json).toMatchObject({
      error: { code: -32600, message: expect.stringMatching(/not a batch/) },
    });
    const unknown = await proxy.post('/mcp', { jsonrpc: '2.0', id: 7, method: 'resources/list' }, mcpHeaders);
    expect(unknown.json).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32601 } });
  });

  it('answers a tool call sent without initialize first (stateless)', async () => {
    const answer = await proxy.post(
      '/mcp',
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'search_count', arguments: { model: 'res.partner' } },
      },
      { ...mcpHeaders, 'mcp-protocol-version': '2025-11-25', ...erpHeaders(double) },
    );
    expect(answer.json).toMatchObject({
      jsonrpc: '2.0',
      id: 3,
      result: { content: [{ type: 'text', text: expect.stringMatching(/^\d+$/) }] },
    });
  });
});

describe('POST /mcp, answers cut to size', () => {
  const { double, proxy } = useErpAndProxy({ mode: '19' }, { env: { MCP_WRITE_TOOLS: 'true' } });

  it('cuts a large search_read by whole records, says how to page, and the next page follows', async () => {
    await withClient(proxy, { 'x-api-key': TEST_PROXY_KEY, ...erpHeaders(double) }, async (client) => {
      // Prepare: 12 partners whose names make 72 000 characters.
      const long = (n: number) => `MCP cut ${n} ${'x'.repeat(6000)}`;
      for (let n = 0; n < 12; n++) {
        const created = await client.callTool({
          name: 'create',
          arguments: { model: 'res.partner', values: { name: long(n) } },
        });
        expect(isError(created)).toBeFalsy();
      }
      const domain = [['name', '=like', 'MCP cut %']];
      // Act
      const first = await client.callTool({
        name: 'search_read',
        arguments: { model: 'res.partner', domain, fields: ['name'], order: 'id asc' },
      });
      // Assess
      const [page, note] = texts(first);
      expect(page?.length).toBeLessThanOrEqual(MAX_RESULT_CHARS);
      const shown = JSON.parse(page as string) as { name: string }[];
      expect(shown.length).toBeGreaterThan(0);
      expect(shown.length).toBeLessThan(12);
      expect(note).toBe(
        `Only the first ${shown.length} of the 12 records the ERP returned fit in 50,000 characters. ` +
          `Call search_read again with offset=${shown.length} for the next ones, or ask for fewer fields.`,
      );
      const rest = await client.callTool({
        name: 'search_read',
        arguments: { model: 'res.partner', domain, fields: ['name'], order: 'id asc', offset: shown.length },
      });
      const next = json(rest) as { name: string }[];
      expect([...shown, ...next].map((row) => row.name)).toEqual(
        Array.from({ length: 12 }, (_, n) => long(n)),
      );
      // read: the ids left out are named.
      const ids = (
        json(
          await client.callTool({
            name: 'search_read',
            arguments: { model: 'res.partner', domain, fields: ['id'], order: 'id asc' },
          }),
        ) as { id: number }[]
      ).map((row) => row.id);
      const read = await client.callTool({
        name: 'read',
        arguments: { model: 'res.partner', ids, fields: ['name'] },
      });
      const readShown = (json(read) as unknown[]).length;
      expect(texts(read)[1]).toBe(
        `Only ${readShown} of the 12 records fit in 50,000 characters. Read the others in another call ` +
          `(ids ${JSON.stringify(ids.slice(readShown))}), or ask for fewer fields.`,
      );
    });
  });
});

describe('POST /mcp with MCP_WRITE_TOOLS=true', () => {
  const { double, proxy } = useErpAndProxy({ mode: '19' }, { env: { MCP_WRITE_TOOLS: 'true' } });

  it('lists the write tools too, with their annotations', async () => {
    await withClient(proxy, { 'x-api-key': TEST_PROXY_KEY }, async (client) => {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual([...READ_TOOLS, ...WRITE_TOOLS]);
      const hints = Object.fromEntries(
        tools
          .filter((tool) => WRITE_TOOLS.includes(tool.name))
          .map((tool) => [
            tool.name,
            [
              tool.annotations?.readOnlyHint,
              tool.annotations?.destructiveHint,
              tool.annotations?.idempotentHint,
            ],
          ]),
      );
      expect(hints).toEqual({
        create: [false, false, false],
        write: [false, true, true],
        unlink: [false, true, true],
        call_method: [false, true, false],
      });
    });
  });

  it('creates, writes and unlinks a partner; calls methods by name and by position', async () => {
    await withClient(proxy, { 'x-api-key': TEST_PROXY_KEY, ...erpHeaders(double) }, async (client) => {
      const id = json(
        await client.callTool({
          name: 'create',
          arguments: { model: 'res.partner', values: { name: 'MCP Partner' } },
        }),
      );
      expect(id).toEqual(expect.any(Number));
      const written = await client.callTool({
        name: 'write',
        arguments: { model: 'res.partner', ids: [id as number], values: { phone: '+32 2 555 01 01' } },
      });
      expect(json(written)).toBe(true);
      const read = await client.callTool({
        name: 'read',
        arguments: { model: 'res.partner', ids: [id as number], fields: ['name', 'phone'] },
      });
      expect(json(read)).toEqual([{ id, name: 'MCP Partner', phone: '+32 2 555 01 01' }]);
      const byName = await client.callTool({
        name: 'call_method',
        arguments: { model: 'res.partner', method: 'name_search', kwargs: { name: 'MCP Partner' } },
      });
      expect(json(byName)).toEqual([[id, 'MCP Partner']]);
      const byPosition = await client.callTool({
        name: 'call_method',
        arguments: { model: 'res.partner', method: 'name_search', args: ['MCP Partner'] },
      });
      expect(json(byPosition)).toEqual([[id, 'MCP Partner']]);
      const archived = await client.callTool({
        name: 'call_method',
        arguments: { model: 'res.partner', method: 'action_archive', ids: [id as number] },
      });
      expect(isError(archived)).toBeFalsy();
      await unlinkAndCheckGone(client, 'res.partner', id as number);
    });
  });

  it("answers the ERP's refusal of a write with its code and name", async () => {
    await withClient(proxy, { 'x-api-key': TEST_PROXY_KEY, ...erpHeaders(double) }, async (client) => {
      const missing = await client.callTool({
        name: 'write',
        arguments: { model: 'res.partner', ids: [999999], values: { name: 'x' } },
      });
      expect(toolError(missing)).toMatchObject({
        source: 'erp',
        code: 404,
        name: 'odoo.exceptions.MissingError',
      });
      const invalid = await client.callTool({
        name: 'create',
        arguments: { model: 'res.partner', values: {} },
      });
      expect(toolError(invalid)).toMatchObject({
        code: 422,
        name: 'odoo.exceptions.ValidationError',
        retry_safe: true,
      });
    });
    const limited = USERS.limitedA;
    await withClient(
      proxy,
      {
        'x-api-key': TEST_PROXY_KEY,
        ...erpHeaders(double, { 'x-erp-api-key': limited.apiKey, 'x-erp-user-id': String(limited.uid) }),
      },
      async (client) => {
        const denied = await client.callTool({
          name: 'create',
          arguments: { model: 'res.partner', values: { name: 'No' } },
        });
        expect(toolError(denied)).toMatchObject({ code: 403, name: 'odoo.exceptions.AccessError' });
        expect(toolError(denied).retry).toMatch(/access rights/);
      },
    );
  });
});

describe('POST /mcp when the ERP does not answer in time', () => {
  // Reads each request and never answers.
  const url = useLoopbackServer((request) => request.resume());
  const proxy = useProxy({
    env: { MCP_WRITE_TOOLS: 'true', ERP_DEFAULT_TIMEOUT: '1', ERP_MAX_TIMEOUT: '1' },
  });

  it('says a read may be retried, and a write must be checked first (-32003)', async () => {
    const headers = {
      'x-api-key': TEST_PROXY_KEY,
      ...connectionHeaders({ url: url(), db: 'erp_a', apiKey: admin.apiKey }),
    };
    await withClient(proxy, headers, async (client) => {
      const read = toolError(
        await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } }),
      );
      expect(read).toMatchObject({ source: 'proxy', code: -32003, retry_safe: true });
      expect(read.retry).toMatch(/this tool only reads: retrying is safe/);
      const write = toolError(
        await client.callTool({ name: 'create', arguments: { model: 'res.partner', values: { name: 'x' } } }),
      );
      expect(write).toMatchObject({ code: -32003, retry_safe: false });
      expect(write.retry).toMatch(/check the records \(search_read, read\) before calling again/);
    });
  });
});

describe('POST /mcp against a target that is not an ERP', () => {
  // Answers every request with an HTML 404, as a web server that is not an ERP does.
  const url = useLoopbackServer((request, response) => {
    request.resume();
    response.writeHead(404, { 'content-type': 'text/html' }).end('<html><title>Not Found</title></html>');
  });
  const proxy = useProxy({ env: { MCP_WRITE_TOOLS: 'true' } });

  it('says so (-32005), for named and positional calls alike, without a user id', async () => {
    const headers = {
      'x-api-key': TEST_PROXY_KEY,
      ...connectionHeaders({ url: url(), db: 'erp_a', apiKey: admin.apiKey }),
    };
    await withClient(proxy, headers, async (client) => {
      for (const call of [
        { name: 'search_count', arguments: { model: 'res.partner' } },
        { name: 'call_method', arguments: { model: 'res.partner', method: 'name_search', args: ['x'] } },
        { name: 'erp_version', arguments: {} },
      ]) {
        const error = toolError(await client.callTool(call));
        expect(error, call.name).toMatchObject({ source: 'proxy' });
        expect([-32005, -32006], `${call.name}: ${error.message}`).toContain(error.code);
        expect(error.message, call.name).not.toMatch(/erp_instance/);
      }
    });
  });
});

describe.each([
  ['16', false],
  ['17', false],
  ['18', false],
  ['19', true],
  ['22', true],
] as const)('POST /mcp against ERP %s', (mode, json2) => {
  const double = useErpDouble({ mode: mode as ErpMode });
  const proxy = useProxy({ env: { MCP_WRITE_TOOLS: 'true' } });

  it(`reads, writes and calls methods over ${json2 ? 'JSON-2' : '/jsonrpc execute_kw'}, with JSON-2's error codes`, async () => {
    double.requests.length = 0;
    await withClient(proxy, { 'x-api-key': TEST_PROXY_KEY, ...erpHeaders(double) }, async (client) => {
      expect(json(await client.callTool({ name: 'erp_version', arguments: {} }))).toMatchObject({
        version_info: [Number(mode), 0, 0, 'final', 0, ''],
        protocol: json2
          ? 'JSON-2 (/json/2/<model>/<method>)'
          : '/jsonrpc execute_kw (needs the x-erp-user-id header)',
      });
      const rows = json(
        await client.callTool({
          name: 'search_read',
          arguments: { model: 'res.partner', fields: ['name'], limit: 3 },
        }),
      );
      expect(rows).toHaveLength(3);
      const id = json(
        await client.callTool({
          name: 'create',
          arguments: { model: 'res.partner', values: { name: `MCP ${mode}` } },
        }),
      );
      expect(id).toEqual(expect.any(Number));
      expect(
        json(
          await client.callTool({
            name: 'call_method',
            arguments: { model: 'res.partner', method: 'name_search', args: [`MCP ${mode}`] },
          }),
        ),
      ).toEqual([[id, `MCP ${mode}`]]);
      // A record method with ids and positional arguments: copy(default).
      const copied = json(
        await client.callTool({
          name: 'call_method',
          arguments: {
            model: 'res.partner',
            method: 'copy',
            ids: [id as number],
            args: [{ name: `MCP ${mode} copy` }],
          },
        }),
      );
      const copyId = Array.isArray(copied) ? copied[0] : copied;
      expect(copyId).toEqual(expect.any(Number));
      expect(
        json(
          await client.callTool({
            name: 'unlink',
            arguments: { model: 'res.partner', ids: [id as number, copyId as number] },
          }),
        ),
      ).toBe(true);
      // A positional call to a method the ERP does not have: on 16-18 the ERP's error with JSON-2's
      // code and name (16 and 17 word it differently from 18); on 19+ the arguments cannot be named
      // (the method is in no documentation), and the message says to pass them by name.
      const noMethod = toolError(
        await client.callTool({
          name: 'call_method',
          arguments: { model: 'res.partner', method: 'does_not_exist', args: [1] },
        }),
      );
      if (json2) {
        expect(noMethod).toMatchObject({ source: 'proxy', code: -32600 });
        expect(noMethod.message).toMatch(/Pass the arguments by name in kwargs instead of args\.$/);
      } else {
        expect(noMethod).toMatchObject({ source: 'erp', code: 404, name: 'werkzeug.exceptions.NotFound' });
      }
      const named = toolError(
        await client.callTool({
          name: 'call_method',
          arguments: { model: 'res.partner', method: 'does_not_exist' },
        }),
      );
      expect(named).toMatchObject({ source: 'erp', code: 404, name: 'werkzeug.exceptions.NotFound' });
      const unknown = toolError(
        await client.callTool({ name: 'search_count', arguments: { model: 'res.partnerx' } }),
      );
      expect(unknown).toMatchObject({ code: 404, name: 'werkzeug.exceptions.NotFound' });
    });
    // The version (asked first) says which protocol: JSON-2 on 19+, /jsonrpc below.
    const paths = double.requests.map((request) => request.path);
    expect(paths.some((path) => path.startsWith('/json/2/'))).toBe(json2);
    expect(paths.includes('/jsonrpc')).toBe(!json2);
  });

  it(json2 ? 'needs no user id' : 'asks for x-erp-user-id when it is missing', async () => {
    await withClient(
      proxy,
      { 'x-api-key': TEST_PROXY_KEY, ...erpHeaders(double, { 'x-erp-user-id': '' }) },
      async (client) => {
        for (const call of [
          { name: 'search_count', arguments: { model: 'res.partner' } },
          {
            name: 'call_method',
            arguments: { model: 'res.partner', method: 'name_search', args: ['Azure'] },
          },
        ]) {
          const result = await client.callTool(call);
          if (json2) {
            expect(isError(result), call.name).toBeFalsy();
          } else {
            const error = toolError(result);
            expect(error).toMatchObject({ source: 'proxy', code: -32600, retry_safe: true });
            expect(error.message).toMatch(
              new RegExp(`runs version ${mode}, older than 19: .*Add the x-erp-user-id header`),
            );
          }
        }
      },
    );
  });
});
