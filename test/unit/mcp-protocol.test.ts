/**
 * `POST /mcp` in the legacy revisions answers as the MCP SDK's own parts answered before the
 * proxy served both eras itself (protocol/mcp/): the SDK's `McpServer` with the same tools over
 * its `WebStandardStreamableHTTPServerTransport` in the same mode (stateless, JSON responses,
 * parsed body), case by case at the HTTP level; except where the 2026-07-28 revision or this
 * proxy decided otherwise, each such case listed with what it answers now. And
 * tool-schemas.json is what the SDK makes of the tools' zod schemas.
 */
import { readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { describe, expect, it } from 'vitest';
import { sdkToolList, sdkToolSchemas, TOOL_SCHEMAS_FILE } from '../../bin/mcp-tool-schemas.ts';
import { MCP_INSTRUCTIONS } from '../../lambdas/core/mcp/server-info.ts';
import { offeredTools } from '../../lambdas/core/mcp/tools.ts';
import { SERVICE_NAME } from '../../lambdas/platform/names.ts';
import { PROXY_DESCRIPTION, PROXY_VERSION } from '../../lambdas/platform/package-info.ts';
import { type Answer, proxyAnswer } from '../support/mcp-serve.ts';

const GOOD_HEADERS: Readonly<Record<string, string>> = {
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
  'mcp-protocol-version': '2025-11-25',
};

const initialize = (id: number | string = 1, protocolVersion = '2025-11-25') => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'test', version: '1' } },
});
const call = (id: number | string, name: string, args?: unknown) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, ...(args === undefined ? {} : { arguments: args }) },
});
const request = (id: number | string, method: string, params?: unknown) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params === undefined ? {} : { params }),
});
const notification = { jsonrpc: '2.0', method: 'notifications/initialized' };

/** The SDK's `McpServer` with the proxy's tools, as the proxy built it before (no tool runs). */
function referenceServer(writeTools: boolean): McpServer {
  const server = new McpServer(
    {
      name: SERVICE_NAME,
      title: 'erp-proxy (Odoo ERP)',
      version: PROXY_VERSION,
      description: PROXY_DESCRIPTION,
    },
    {
      instructions: MCP_INSTRUCTIONS,
      jsonSchemaValidator: {
        getValidator: () => () => ({ valid: false as const, data: undefined, errorMessage: 'none' }),
      },
      maxToolInputElements: 10_000,
    },
  );
  for (const definition of offeredTools(writeTools)) {
    server.registerTool(
      definition.name,
      {
        title: definition.title,
        description: definition.description,
        inputSchema: definition.input(),
        annotations: definition.annotations,
      },
      () => ({ content: [{ type: 'text', text: 'the reference server runs no tool' }] }),
    );
  }
  return server;
}

/** The SDK transport's answer to one POST with the reference server (undefined headers left out, as API Gateway would). */
async function sdkAnswer(
  writeTools: boolean,
  headers: Record<string, string>,
  body: unknown,
): Promise<Answer> {
  const server = referenceServer(writeTools);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(
      new Request('http://erp-proxy.invalid/mcp', { method: 'POST', headers }),
      { parsedBody: body },
    );
    return {
      status: response.status,
      contentType: response.headers.get('content-type') ?? undefined,
      body: await response.text(),
    };
  } finally {
    await server.close();
  }
}

const nested = (depth: number): unknown => (depth === 0 ? 'x' : [nested(depth - 1)]);

/** Cases answered exactly as the SDK answered them, writes on and off. */
const SAME_CASES: readonly [string, Readonly<Record<string, string>>, unknown][] = [
  ['initialize', GOOD_HEADERS, initialize()],
  ['initialize with a string id', GOOD_HEADERS, initialize('a-1')],
  ['initialize with id 0', GOOD_HEADERS, initialize(0)],
  ['initialize of an older version', GOOD_HEADERS, initialize(1, '2025-03-26')],
  ['initialize of 2025-06-18', GOOD_HEADERS, initialize(1, '2025-06-18')],
  ['initialize of an unknown version', GOOD_HEADERS, initialize(1, '1999-01-01')],
  [
    'initialize with an unsupported version header (not checked on initialize)',
    { ...GOOD_HEADERS, 'mcp-protocol-version': '1999-01-01' },
    initialize(),
  ],
  ['ping', GOOD_HEADERS, request(3, 'ping')],
  ['an unknown method', GOOD_HEADERS, request(4, 'resources/list')],
  ['another unknown method', GOOD_HEADERS, request(16, 'prompts/list')],
  ['a notification (202, no body)', GOOD_HEADERS, notification],
  ['an unknown notification', GOOD_HEADERS, { jsonrpc: '2.0', method: 'notifications/whatever' }],
  ['a response of the client', GOOD_HEADERS, { jsonrpc: '2.0', id: 7, result: {} }],
  [
    'an error response of the client',
    GOOD_HEADERS,
    { jsonrpc: '2.0', id: 7, error: { code: -1, message: 'no' } },
  ],
  ['no Accept', { 'content-type': 'application/json' }, request(1, 'ping')],
  ['Accept: application/json only', { ...GOOD_HEADERS, accept: 'application/json' }, request(1, 'ping')],
  ['Accept: text/event-stream only', { ...GOOD_HEADERS, accept: 'text/event-stream' }, request(1, 'ping')],
  ['Accept: */*', { ...GOOD_HEADERS, accept: '*/*' }, request(1, 'ping')],
  [
    'Accept with weights and spaces',
    { ...GOOD_HEADERS, accept: '  text/event-stream;q=0.5 ,application/json;q=0.9  ' },
    request(1, 'ping'),
  ],
  ['no Content-Type', { accept: GOOD_HEADERS.accept as string }, request(1, 'ping')],
  ['Content-Type: text/plain', { ...GOOD_HEADERS, 'content-type': 'text/plain' }, request(1, 'ping')],
  [
    'Content-Type: text/plain with a JSON parameter',
    { ...GOOD_HEADERS, 'content-type': 'text/plain; a=application/json' },
    request(1, 'ping'),
  ],
  [
    'Content-Type with a charset',
    { ...GOOD_HEADERS, 'content-type': 'application/json; charset=utf-8' },
    request(1, 'ping'),
  ],
  ['Content-Type in capitals', { ...GOOD_HEADERS, 'content-type': 'APPLICATION/JSON' }, request(1, 'ping')],
  [
    'Content-Type with a bad parameter',
    { ...GOOD_HEADERS, 'content-type': 'application/json;' },
    request(1, 'ping'),
  ],
  [
    'Content-Type: two joined',
    { ...GOOD_HEADERS, 'content-type': 'application/json, text/plain' },
    request(1, 'ping'),
  ],
  [
    'Content-Type: application/json-seq',
    { ...GOOD_HEADERS, 'content-type': 'application/json-seq' },
    request(1, 'ping'),
  ],
  ['Content-Type: empty', { ...GOOD_HEADERS, 'content-type': '' }, request(1, 'ping')],
  [
    'a protocol version with spaces around it',
    { ...GOOD_HEADERS, 'mcp-protocol-version': ' 2025-06-18 ' },
    request(1, 'ping'),
  ],
  [
    'protocol version 2025-03-26',
    { ...GOOD_HEADERS, 'mcp-protocol-version': '2025-03-26' },
    request(1, 'ping'),
  ],
  [
    'no protocol version',
    { accept: GOOD_HEADERS.accept as string, 'content-type': 'application/json' },
    request(1, 'ping'),
  ],
  ['not JSON-RPC: an object', GOOD_HEADERS, { foo: 1 }],
  ['not JSON-RPC: version 1.0', GOOD_HEADERS, { jsonrpc: '1.0', id: 1, method: 'ping' }],
  ['not JSON-RPC: a number', GOOD_HEADERS, 42],
  ['not JSON-RPC: null', GOOD_HEADERS, null],
  ['not JSON-RPC: a string', GOOD_HEADERS, 'ping'],
  ['not JSON-RPC: a null id', GOOD_HEADERS, { jsonrpc: '2.0', id: null, method: 'ping' }],
  ['not JSON-RPC: a fractional id', GOOD_HEADERS, { jsonrpc: '2.0', id: 1.5, method: 'ping' }],
  ['not JSON-RPC: an extra member', GOOD_HEADERS, { jsonrpc: '2.0', id: 1, method: 'ping', extra: 1 }],
  [
    'not JSON-RPC: params that are an array',
    GOOD_HEADERS,
    { jsonrpc: '2.0', id: 1, method: 'ping', params: [] },
  ],
  ['not JSON-RPC: _meta that is not an object', GOOD_HEADERS, request(1, 'ping', { _meta: 3 })],
  ['not JSON-RPC: a bad progress token', GOOD_HEADERS, request(1, 'ping', { _meta: { progressToken: 1.5 } })],
  ['no arguments', GOOD_HEADERS, call(3, 'search_read')],
  [
    'arguments with many problems',
    GOOD_HEADERS,
    call(4, 'search_read', { model: 'Bad Model!', limit: 0, domain: [['a']], fields: 'x', offset: 1.5 }),
  ],
  [
    'empty ids and a wrong field list',
    GOOD_HEADERS,
    call(5, 'read', { model: 'res.partner', ids: [], fields: [1] }),
  ],
  ['ids that are not positive integers', GOOD_HEADERS, call(6, 'read', { ids: [1.5, -1, '3'] })],
  ['out-of-range paging', GOOD_HEADERS, call(8, 'list_models', { limit: 5000, offset: -1, search: 3 })],
  [
    'a bad domain',
    GOOD_HEADERS,
    call(9, 'search_count', { model: 'res.partner', domain: ['x', ['a', '=', 1, 2], [1, 2, 3]] }),
  ],
  [
    'a too long model name',
    GOOD_HEADERS,
    call(11, 'fields_get', { model: 'a'.repeat(300), attributes: [1] }),
  ],
  [
    'deep arguments that do not fit',
    GOOD_HEADERS,
    call(13, 'read', { model: 'res.partner', ids: [nested(5)], context: nested(3) }),
  ],
  [
    'nested problems in a domain',
    GOOD_HEADERS,
    call(13, 'search_read', { model: 'res.partner', domain: ['&', [1, '=', nested(40)], [null, 2, 3], 'x'] }),
  ],
  [
    'a task-augmented call (arguments that do not fit)',
    GOOD_HEADERS,
    request(15, 'tools/call', { name: 'read', arguments: { ids: [] }, task: { ttl: 1000 } }),
  ],
];

/** Cases answered alike only when writes are on (off, a write tool is not offered: see below). */
const SAME_WITH_WRITES: readonly [string, unknown][] = [
  ['a write tool with bad arguments', call(3, 'create', { model: 'x' })],
  [
    'a bad method name',
    call(7, 'call_method', { model: 'res.partner', method: 'bad-name', args: {}, kwargs: [] }),
  ],
  ['values that are not a dict', call(10, 'create', { model: 'res.partner', values: 'x', context: [] })],
  [
    'more than 10,000 elements',
    call(12, 'call_method', {
      model: 'res.partner',
      method: 'x',
      args: Array.from({ length: 10_001 }, () => 1),
    }),
  ],
];

describe('the legacy revisions, as the SDK served them', () => {
  for (const writeTools of [false, true]) {
    it.each(SAME_CASES)(
      `answers %s as the SDK's McpServer over its transport did (writes ${writeTools ? 'on' : 'off'})`,
      async (_name, headers, body) => {
        expect(await proxyAnswer(writeTools, body, headers)).toEqual(
          await sdkAnswer(writeTools, { ...headers }, body),
        );
      },
    );
  }
  it.each(SAME_WITH_WRITES)('answers %s as the SDK did, writes on', async (_name, body) => {
    expect(await proxyAnswer(true, body, GOOD_HEADERS)).toEqual(
      await sdkAnswer(true, { ...GOOD_HEADERS }, body),
    );
  });

  it.each([
    ['a Latin-1 character', '\u00e9 application/json, text/event-stream'],
    ['a tab and DEL', 'application/json,\ttext/event-stream\u007f'],
  ])('takes a header value with %s, as a web Request does', async (_name, accept) => {
    const headers = { ...GOOD_HEADERS, accept };
    expect(await proxyAnswer(false, request(1, 'ping'), headers)).toEqual(
      await sdkAnswer(false, headers, request(1, 'ping')),
    );
  });
});

const json = (answer: Answer): unknown => JSON.parse(answer.body);

describe('the legacy revisions, where the proxy answers otherwise than the SDK did', () => {
  it.each([
    ['tools/list', request(2, 'tools/list')],
    ['tools/list with a cursor', request(2, 'tools/list', { cursor: 'next' })],
  ])('answers %s as the SDK did, with an outputSchema for each read tool besides', async (_name, body) => {
    for (const writeTools of [false, true]) {
      const answer = await proxyAnswer(writeTools, body, GOOD_HEADERS);
      const expected = await sdkAnswer(writeTools, { ...GOOD_HEADERS }, body);
      const parsed = json(answer) as { result: { tools: Record<string, unknown>[] } };
      const { result } = parsed;
      for (const tool of result.tools) {
        const reads = (tool.annotations as { readOnlyHint: boolean }).readOnlyHint;
        if (reads)
          expect(tool.outputSchema, String(tool.name)).toMatchObject({
            type: 'object',
            required: expect.any(Array),
          });
        else expect(tool, String(tool.name)).not.toHaveProperty('outputSchema');
        delete tool.outputSchema;
      }
      expect({ ...answer, body: JSON.stringify(parsed) }).toEqual(expected);
    }
  });

  it('answers an unknown tool -32602 (the SDK: a tool result with isError)', async () => {
    const sdk = json(await sdkAnswer(false, { ...GOOD_HEADERS }, call(3, 'delete_everything', {})));
    expect(sdk).toMatchObject({ result: { isError: true } });
    const answer = await proxyAnswer(false, call(3, 'delete_everything', {}), GOOD_HEADERS);
    expect(answer.status).toBe(200);
    expect(json(answer)).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32602, message: 'Unknown tool: delete_everything' },
    });
  });

  it.each([
    ['no name', request(5, 'tools/call', { arguments: {} }), /params\.name/],
    ['a name that is not a string', request(5, 'tools/call', { name: 3 }), /params\.name/],
    ['no params', request(5, 'tools/call'), /params\.name/],
    [
      'arguments that are an array',
      call(5, 'search_read', [1, 2]),
      /params\.arguments must be an object.*an array/,
    ],
    [
      'arguments that are a string',
      call(5, 'search_read', 'x'),
      /params\.arguments must be an object.*a string/,
    ],
  ])(
    'answers a tools/call with %s -32602 naming what is wrong (the SDK: -32603 with a schema dump)',
    async (_name, body, message) => {
      const sdk = json(await sdkAnswer(false, { ...GOOD_HEADERS }, body)) as { error: { code: number } };
      expect(sdk.error.code).toBe(-32603);
      const answer = await proxyAnswer(false, body, GOOD_HEADERS);
      expect(answer.status).toBe(200);
      const { error } = json(answer) as { error: { code: number; message: string } };
      expect(error.code).toBe(-32602);
      expect(error.message).toMatch(message);
      expect(error.message).not.toMatch(/"code"|invalid_type|expected/);
    },
  );

  it.each([
    [
      'a misspelt argument',
      call(14, 'search_read', { model: 'res.partner', feilds: ['name'] }),
      'search_read does not take the argument "feilds" (did you mean fields?); it takes model, domain, fields, limit, offset, order, context',
    ],
    [
      'two unknown arguments beside a bad known one',
      call(14, 'list_models', { extra: 1, limt: 5, limit: 'x' }),
      'list_models does not take the arguments "extra", "limt" (did you mean limit?); it takes search, limit, offset',
    ],
    [
      'an argument to a tool that takes none',
      call(14, 'erp_version', { model: 'x' }),
      'erp_version does not take the argument "model"; it takes no arguments',
    ],
  ])(
    'answers %s with a tool error naming it (the SDK dropped unknown arguments silently)',
    async (_name, body, message) => {
      const answer = json(await proxyAnswer(false, body, GOOD_HEADERS)) as {
        result: { content: { text: string }[]; isError: boolean };
      };
      expect(answer.result.isError).toBe(true);
      expect(answer.result.content[0]?.text).toContain(message);
    },
  );

  it('answers initialize with params that do not fit -32602 (the SDK: -32603 with a schema dump)', async () => {
    const body = request(1, 'initialize', { protocolVersion: 2025, capabilities: {} });
    expect(
      (json(await sdkAnswer(false, { ...GOOD_HEADERS }, body)) as { error: { code: number } }).error.code,
    ).toBe(-32603);
    const { error } = json(await proxyAnswer(false, body, GOOD_HEADERS)) as {
      error: { code: number; message: string };
    };
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(/params\.protocolVersion.*params\.clientInfo/);
  });

  it('answers initialize of 2024-11-05 (the HTTP+SSE revision) with the newest legacy revision it serves', async () => {
    expect(json(await sdkAnswer(false, { ...GOOD_HEADERS }, initialize(1, '2024-11-05')))).toMatchObject({
      result: { protocolVersion: '2024-11-05' },
    });
    expect(json(await proxyAnswer(false, initialize(1, '2024-11-05'), GOOD_HEADERS))).toMatchObject({
      result: { protocolVersion: '2025-11-25' },
    });
  });

  it.each([
    ['an unknown version', '1999-01-01'],
    ['an empty version', ''],
    ['2024-11-05, a version the SDK took', '2024-11-05'],
  ])(
    'answers a request whose header names %s 400 -32022 listing the versions served (the SDK: -32000)',
    async (_name, version) => {
      const headers = { ...GOOD_HEADERS, 'mcp-protocol-version': version };
      const answer = await proxyAnswer(false, request(1, 'ping'), headers);
      expect(answer.status).toBe(400);
      expect(json(answer)).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32022,
          message: 'Unsupported protocol version',
          data: { supported: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'], requested: version },
        },
      });
    },
  );

  it('accepts a notification whatever version its header names (202; the SDK refused an unknown one)', async () => {
    const headers = { ...GOOD_HEADERS, 'mcp-protocol-version': '1999-01-01' };
    expect((await sdkAnswer(false, headers, notification)).status).toBe(400);
    expect(await proxyAnswer(false, notification, headers)).toEqual({
      status: 202,
      contentType: undefined,
      body: '',
    });
  });

  it.each([
    ['create', { model: 'res.partner', values: { name: 'x' } }],
    ['call_method', { model: 'res.partner', method: 'name_search' }],
  ])(
    'answers the write tool %s, writes off, with a tool error saying an operator enables writes (the SDK: "not found")',
    async (name, args) => {
      const answer = json(await proxyAnswer(false, call(3, name, args), GOOD_HEADERS)) as {
        result: { content: { text: string }[]; isError: boolean };
      };
      expect(answer.result.isError).toBe(true);
      expect(answer.result.content[0]?.text).toMatch(/writes are off on this server/);
      expect(answer.result.content[0]?.text).toMatch(
        /An operator .* enables the write tools \(MCP_WRITE_TOOLS=true\)/,
      );
    },
  );

  it.each([
    ['a NUL', 'application/json,\0 text/event-stream'],
    ['a line feed', 'application/json,\n text/event-stream'],
    ['a character above U+00FF', 'application/json, text/event-stream, \u2603'],
  ])(
    'answers a header value with %s 400 -32600 naming the header (the SDK transport could not be given it: a Request throws)',
    async (_name, accept) => {
      const headers = { ...GOOD_HEADERS, accept };
      await expect(sdkAnswer(false, headers, request(1, 'ping'))).rejects.toThrow(TypeError);
      const answer = await proxyAnswer(false, request(1, 'ping'), headers);
      expect(answer.status).toBe(400);
      expect(json(answer)).toEqual({
        jsonrpc: '2.0',
        error: {
          code: -32600,
          message:
            'Invalid Request: the accept header holds a character HTTP headers cannot carry (NUL, CR, LF, or one above U+00FF)',
        },
        id: null,
      });
    },
  );
});

describe('tool-schemas.json', () => {
  it("is what the SDK's McpServer lists for the tools' zod schemas (npx tsx bin/mcp-tool-schemas.ts)", async () => {
    const committed = JSON.parse(readFileSync(TOOL_SCHEMAS_FILE, 'utf8')) as unknown;
    // Compared as text: the order of the keys is what a client receives too.
    expect(JSON.stringify(committed)).toBe(JSON.stringify(await sdkToolSchemas()));
  });

  it('has a schema for every tool, and nothing else', async () => {
    const committed = JSON.parse(readFileSync(TOOL_SCHEMAS_FILE, 'utf8')) as Record<string, unknown>;
    expect(Object.keys(committed)).toEqual((await sdkToolList()).map((tool) => tool.name));
  });
});
