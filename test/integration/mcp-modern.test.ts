/**
 * `POST /mcp` in the stateless 2026-07-28 revision, end to end: the official v2 client
 * (`@modelcontextprotocol/client`) pinned to 2026-07-28 against the local proxy and the ERP
 * double, and raw HTTP for what a client library would not send (a version not served, headers
 * that disagree with the body, an `Origin`). The legacy revisions are test/integration/mcp.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import type { ErpDouble } from '../erp-double/index.ts';
import { USERS, useErpAndProxy, useProxy } from '../support/fixtures.ts';
import {
  erpHeaders as connectionHeaders,
  isError,
  json,
  MODERN_VERSION,
  READ_TOOLS,
  texts,
  toolError,
  WRITE_TOOLS,
  withMcpClient,
  withModernMcpClient,
} from '../support/mcp-client.ts';
import { TEST_PROXY_KEY } from '../support/proxy-harness.ts';

const admin = USERS.adminA;

function erpHeaders(double: ErpDouble): Record<string, string> {
  return {
    'x-api-key': TEST_PROXY_KEY,
    ...connectionHeaders({ url: double.url, db: 'erp_a', apiKey: admin.apiKey, uid: admin.uid }),
  };
}

const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** The headers a 2026-07-28 client sends with a request of `method` (and `name` for tools/call). */
function modernHeaders(method: string, name?: string): Record<string, string> {
  return {
    'x-api-key': TEST_PROXY_KEY,
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN_VERSION,
    'mcp-method': method,
    ...(name === undefined ? {} : { 'mcp-name': name }),
  };
}

function modernRequest(id: number, method: string, params: Record<string, unknown> = {}) {
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: META } };
}

describe('POST /mcp, 2026-07-28, with the official v2 client pinned to it', () => {
  const { double, proxy } = useErpAndProxy({ mode: '19' });

  it('connects (server/discover offers 2026-07-28), lists the read tools and calls them', async () => {
    await withModernMcpClient(proxy.url, erpHeaders(double), async (client, errors) => {
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN_VERSION);
      expect(client.getProtocolEra()).toBe('modern');
      expect(client.getServerVersion()).toMatchObject({ name: 'erp-proxy' });
      expect(client.getInstructions()).toMatch(/^Tools for one Odoo ERP/);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(READ_TOOLS);
      for (const tool of tools) {
        expect(tool, tool.name).not.toHaveProperty('execution');
        expect(tool.outputSchema, tool.name).toMatchObject({ type: 'object' });
        expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
      }
      const partners = await client.callTool({
        name: 'search_read',
        arguments: { model: 'res.partner', domain: [['is_company', '=', true]], fields: ['name'], limit: 3 },
      });
      expect(isError(partners), texts(partners)[0]).toBe(false);
      const records = json(partners) as { id: number; name: string }[];
      expect(records.length).toBeGreaterThan(0);
      expect(Object.keys(records[0] ?? {}).sort()).toEqual(['id', 'name']);
      // The text for clients that read only text, the same JSON as structuredContent.
      expect(partners.structuredContent).toEqual({
        records,
        ...(records.length === 3 ? { next_offset: 3 } : {}),
      });
      const count = await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } });
      expect(typeof json(count)).toBe('number');
      expect(count.structuredContent).toEqual({ count: json(count) });
      const paged = await client.callTool({
        name: 'list_models',
        arguments: { limit: 2, offset: 1 },
      });
      expect(paged.structuredContent).toEqual({ models: json(paged), next_offset: 3 });
      const version = await client.callTool({ name: 'erp_version', arguments: {} });
      expect(version.structuredContent).toEqual(json(version));
      expect(json(version)).toMatchObject({ protocol: expect.stringMatching(/^JSON-2/) });
      expect(errors).toEqual([]);
    });
  });

  it('gives a tool error the model can act on, and an unknown tool as a protocol error', async () => {
    await withModernMcpClient(proxy.url, erpHeaders(double), async (client) => {
      const failed = await client.callTool({
        name: 'search_read',
        arguments: { model: 'no.such.model', fields: ['name'] },
      });
      expect(toolError(failed)).toMatchObject({ source: 'erp', code: 404 });
      await expect(client.callTool({ name: 'delete_everything', arguments: {} })).rejects.toThrow(
        /Unknown tool: delete_everything/,
      );
    });
  });

  it('answers a write tool, writes off, with a tool error saying an operator enables writes', async () => {
    await withModernMcpClient(proxy.url, erpHeaders(double), async (client) => {
      const create = await client.callTool({
        name: 'create',
        arguments: { model: 'res.partner', values: { name: 'x' } },
      });
      expect(isError(create)).toBe(true);
      expect(texts(create)[0]).toMatch(/writes are off on this server/);
    });
  });

  it('serves the SDK 1.x client (initialize, 2025-11-25) on the same endpoint', async () => {
    await withMcpClient(proxy.url, erpHeaders(double), async (client, errors) => {
      expect(client.getServerVersion()?.name).toBe('erp-proxy');
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(READ_TOOLS);
      const count = await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } });
      expect(typeof json(count)).toBe('number');
      expect(errors).toEqual([]);
    });
  });
});

describe('POST /mcp, 2026-07-28, writes on', () => {
  const { double, proxy } = useErpAndProxy({ mode: '19' }, { env: { MCP_WRITE_TOOLS: 'true' } });

  it('lists the write tools after the read tools and creates, writes and unlinks a partner', async () => {
    await withModernMcpClient(proxy.url, erpHeaders(double), async (client) => {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual([...READ_TOOLS, ...WRITE_TOOLS]);
      const id = json(
        await client.callTool({
          name: 'create',
          arguments: { model: 'res.partner', values: { name: 'Modern Ltd' } },
        }),
      ) as number;
      expect(Number.isInteger(id)).toBe(true);
      const wrote = await client.callTool({
        name: 'write',
        arguments: { model: 'res.partner', ids: [id], values: { name: 'Modern Ltd 2' } },
      });
      expect(json(wrote)).toBe(true);
      const read = await client.callTool({
        name: 'read',
        arguments: { model: 'res.partner', ids: [id], fields: ['name'] },
      });
      expect(json(read)).toEqual([{ id, name: 'Modern Ltd 2' }]);
      expect(
        json(await client.callTool({ name: 'unlink', arguments: { model: 'res.partner', ids: [id] } })),
      ).toBe(true);
    });
  });
});

describe('POST /mcp, 2026-07-28, over raw HTTP', () => {
  const proxy = useProxy({ env: { MCP_ALLOWED_ORIGINS: 'https://agents.example.com' } });

  it('answers server/discover with the versions served, the tools capability, caching hints and serverInfo', async () => {
    const answer = await proxy.post(
      '/mcp',
      modernRequest(1, 'server/discover'),
      modernHeaders('server/discover'),
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.json).toEqual({
      result: {
        resultType: 'complete',
        supportedVersions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'],
        capabilities: { tools: {} },
        instructions: expect.stringMatching(/^Tools for one Odoo ERP/),
        ttlMs: 3_600_000,
        cacheScope: 'public',
        _meta: { 'io.modelcontextprotocol/serverInfo': expect.objectContaining({ name: 'erp-proxy' }) },
      },
      jsonrpc: '2.0',
      id: 1,
    });
  });

  it('answers tools/list with resultType, private caching hints and no execution member', async () => {
    const answer = await proxy.post('/mcp', modernRequest(2, 'tools/list'), modernHeaders('tools/list'));
    expect(answer.status).toBe(200);
    const result = (answer.json as { result: Record<string, unknown> }).result;
    expect(result).toMatchObject({ resultType: 'complete', ttlMs: 300_000, cacheScope: 'private' });
    expect((result.tools as { name: string }[]).map((tool) => tool.name)).toEqual(READ_TOOLS);
  });

  it.each([
    ['an unknown version in _meta and the header', '1900-01-01', '1900-01-01'],
    ['a legacy-era header with an unknown _meta version', '1900-01-01', '2025-11-25'],
  ])('answers %s 400 -32022 listing the versions served', async (_name, metaVersion, headerVersion) => {
    const body = {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/list',
      params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': metaVersion } },
    };
    const answer = await proxy.post('/mcp', body, {
      ...modernHeaders('tools/list'),
      'mcp-protocol-version': headerVersion,
    });
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: {
        code: -32022,
        message: 'Unsupported protocol version',
        data: { supported: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'], requested: metaVersion },
      },
    });
  });

  it.each([
    [
      'no MCP-Protocol-Version header',
      { 'mcp-protocol-version': undefined },
      /MCP-Protocol-Version header is missing/,
    ],
    [
      'another MCP-Protocol-Version',
      { 'mcp-protocol-version': '2025-06-18' },
      /MCP-Protocol-Version header value '2025-06-18' does not match body value '2026-07-28'/,
    ],
    ['no Mcp-Method header', { 'mcp-method': undefined }, /Mcp-Method header is missing/],
    [
      'another Mcp-Method',
      { 'mcp-method': 'tools/list' },
      /Mcp-Method header value 'tools\/list' does not match body value 'tools\/call'/,
    ],
    ['no Mcp-Name header', { 'mcp-name': undefined }, /Mcp-Name header is missing/],
    [
      'another Mcp-Name',
      { 'mcp-name': 'read' },
      /Mcp-Name header value 'read' does not match body value 'search_count'/,
    ],
    ['a broken base64 Mcp-Name', { 'mcp-name': '=?base64?***?=' }, /not valid base64/],
  ])('answers a tools/call with %s 400 -32020 (HeaderMismatch)', async (_name, change, message) => {
    const headers: Record<string, string | undefined> = {
      ...modernHeaders('tools/call', 'search_count'),
      ...change,
    };
    const body = modernRequest(4, 'tools/call', {
      name: 'search_count',
      arguments: { model: 'res.partner' },
    });
    const answer = await proxy.post(
      '/mcp',
      body,
      Object.fromEntries(
        Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined),
      ),
    );
    expect(answer.status).toBe(400);
    const { error, id } = answer.json as { id: number; error: { code: number; message: string } };
    expect(id).toBe(4);
    expect(error.code).toBe(-32020);
    expect(error.message).toMatch(message);
  });

  it('takes an Mcp-Name in its base64 form (decoded before it is compared)', async () => {
    const encoded = `=?base64?${Buffer.from('search_count').toString('base64')}?=`;
    const body = modernRequest(5, 'tools/call', {
      name: 'search_count',
      arguments: { model: 'res.partner' },
    });
    const answer = await proxy.post('/mcp', body, { ...modernHeaders('tools/call'), 'mcp-name': encoded });
    // No ERP headers: the tool runs and says which header is missing.
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ result: { resultType: 'complete', isError: true } });
  });

  it.each([
    [
      'no _meta version (header only)',
      { _meta: { 'io.modelcontextprotocol/clientCapabilities': {} } },
      /protocolVersion/,
    ],
    [
      'no client capabilities',
      { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION } },
      /clientCapabilities/,
    ],
    [
      'client capabilities that are not an object',
      { _meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': 1 } },
      /must be an object/,
    ],
  ])('answers a request with %s 400 -32602', async (_name, params, message) => {
    const answer = await proxy.post(
      '/mcp',
      { jsonrpc: '2.0', id: 6, method: 'tools/list', params },
      modernHeaders('tools/list'),
    );
    expect(answer.status).toBe(400);
    const { error } = answer.json as { error: { code: number; message: string } };
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(message);
  });

  it('answers a malformed tools/call 400 -32602 and an unknown tool -32602, without a schema dump', async () => {
    const malformed = await proxy.post(
      '/mcp',
      modernRequest(7, 'tools/call', { arguments: {} }),
      modernHeaders('tools/call'),
    );
    expect(malformed.status).toBe(400);
    expect(malformed.json).toMatchObject({
      id: 7,
      error: { code: -32602, message: expect.stringMatching(/params\.name/) },
    });
    const unknown = await proxy.post(
      '/mcp',
      modernRequest(8, 'tools/call', { name: 'nope', arguments: {} }),
      modernHeaders('tools/call', 'nope'),
    );
    expect(unknown.status).toBe(200);
    expect(unknown.json).toEqual({
      jsonrpc: '2.0',
      id: 8,
      error: { code: -32602, message: 'Unknown tool: nope' },
    });
  });

  it.each(['ping', 'resources/list', 'logging/setLevel', 'initialize-not'])(
    'answers the method %s, not one of this revision here, 404 -32601',
    async (method) => {
      const answer = await proxy.post('/mcp', modernRequest(9, method), modernHeaders(method));
      expect(answer.status).toBe(404);
      expect(answer.json).toMatchObject({ id: 9, error: { code: -32601 } });
    },
  );

  it('answers server/discover without any version 400 -32602 (a legacy client probing gets a modern error)', async () => {
    const answer = await proxy.post(
      '/mcp',
      { jsonrpc: '2.0', id: 10, method: 'server/discover' },
      {
        'x-api-key': TEST_PROXY_KEY,
        accept: 'application/json, text/event-stream',
      },
    );
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error: { code: -32602 } });
  });

  it('accepts a notification (202, no body)', async () => {
    const answer = await proxy.post(
      '/mcp',
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
      modernHeaders('notifications/cancelled'),
    );
    expect(answer.status).toBe(202);
    expect(answer.text).toBe('');
  });

  it.each([
    ['a foreign origin', 'http://evil.example.com'],
    ['the allowed origin on another port', 'https://agents.example.com:8443'],
    ['the allowed origin over http', 'http://agents.example.com'],
    ['the opaque origin null', 'null'],
  ])('answers a request from %s 403, in either era', async (_name, origin) => {
    for (const [body, headers] of [
      [modernRequest(11, 'tools/list'), modernHeaders('tools/list')],
      [
        {
          jsonrpc: '2.0',
          id: 11,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: {},
            clientInfo: { name: 'x', version: '1' },
          },
        },
        { 'x-api-key': TEST_PROXY_KEY, accept: 'application/json, text/event-stream' },
      ],
    ] as const) {
      const answer = await proxy.post('/mcp', body, { ...headers, origin });
      expect(answer.status).toBe(403);
      expect(answer.json).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: expect.stringMatching(/^Forbidden: .*MCP_ALLOWED_ORIGINS/) },
      });
    }
  });

  it('serves a request from an allowed origin (any case) or with no Origin', async () => {
    for (const origin of ['https://agents.example.com', 'HTTPS://Agents.Example.com', undefined]) {
      const answer = await proxy.post('/mcp', modernRequest(12, 'tools/list'), {
        ...modernHeaders('tools/list'),
        ...(origin === undefined ? {} : { origin }),
      });
      expect(answer.status, origin).toBe(200);
    }
  });
});

describe('POST /mcp, the aggregate tool on the ERP double', () => {
  for (const mode of ['19', '18'] as const) {
    describe(`ERP ${mode}`, () => {
      const { double, proxy } = useErpAndProxy({ mode });

      it('counts and sums by group, bounded and paged like search_read, with the same groups as read_group', async () => {
        await withModernMcpClient(proxy.url, erpHeaders(double), async (client) => {
          const grouped = await client.callTool({
            name: 'aggregate',
            arguments: {
              model: 'res.partner',
              domain: [['is_company', '=', true]],
              group_by: ['country_id'],
              aggregates: ['id:sum', 'id:max'],
              order: 'count desc',
            },
          });
          expect(isError(grouped), texts(grouped)[0]).toBe(false);
          const groups = json(grouped) as Record<string, unknown>[];
          expect(groups.length).toBeGreaterThan(1);
          expect(Object.keys(groups[0] ?? {})).toEqual(['country_id', 'count', 'id:sum', 'id:max']);
          // The largest group first, and the counts add up to the companies there are.
          const counts = groups.map((group) => group.count as number);
          expect([...counts].sort((a, b) => b - a)).toEqual(counts);
          const companies = json(
            await client.callTool({
              name: 'search_count',
              arguments: { model: 'res.partner', domain: [['is_company', '=', true]] },
            }),
          );
          expect(counts.reduce((sum, count) => sum + count, 0)).toBe(companies);
          // Each group's sum and max are those of its records.
          for (const group of groups) {
            const country = group.country_id === false ? false : (group.country_id as [number, string])[0];
            const rows = json(
              await client.callTool({
                name: 'search_read',
                arguments: {
                  model: 'res.partner',
                  domain: [
                    ['is_company', '=', true],
                    ['country_id', '=', country],
                  ],
                  fields: ['id'],
                },
              }),
            ) as { id: number }[];
            expect(group['id:sum']).toBe(rows.reduce((sum, row) => sum + row.id, 0));
            expect(group['id:max']).toBe(Math.max(...rows.map((row) => row.id)));
          }
          expect(grouped.structuredContent).toEqual({ groups });
          const first = await client.callTool({
            name: 'aggregate',
            arguments: { model: 'res.partner', group_by: ['country_id'], order: 'count desc', limit: 1 },
          });
          expect(json(first)).toEqual([{ country_id: groups[0]?.country_id, count: expect.any(Number) }]);
          expect(first.structuredContent).toMatchObject({ next_offset: 1 });
          expect(texts(first)[1]).toMatch(
            /1 groups, the limit: more may match\. Call aggregate again with offset=1/,
          );
          const total = json(
            await client.callTool({
              name: 'aggregate',
              arguments: { model: 'res.partner', group_by: [], domain: [['is_company', '=', true]] },
            }),
          );
          expect(total).toEqual([{ count: companies }]);
        });
      });

      it('refuses what it cannot do as a tool error naming it', async () => {
        await withModernMcpClient(proxy.url, erpHeaders(double), async (client) => {
          const bad = await client.callTool({
            name: 'aggregate',
            arguments: { model: 'res.partner', group_by: ['country_id'], aggregates: ['id:median'] },
          });
          expect(texts(bad)[0]).toMatch(
            /expected "field:aggregation" with one of sum, avg, min, max, count_distinct at aggregates\[0\]/,
          );
          const unknown = await client.callTool({
            name: 'aggregate',
            arguments: { model: 'res.partner', group_by: ['nope'] },
          });
          expect(toolError(unknown)).toMatchObject({
            source: 'erp',
            message: "Invalid field 'nope' on model 'res.partner'",
          });
        });
      });
    });
  }
});
