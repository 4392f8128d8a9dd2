/**
 * `POST /mcp` answers as the SDK's own parts would: the proxy's transport
 * (core/mcp/transport.ts) against the SDK's `WebStandardStreamableHTTPServerTransport` in the same
 * mode (stateless, JSON responses, parsed body), case by case at the HTTP level; the proxy's
 * server (the SDK's `Server` with `tools/list` and `tools/call` of its own, core/mcp/serve.ts)
 * against the SDK's `McpServer` with the same tools; and tool-schemas.json against what the SDK
 * makes of the tools' zod schemas.
 */
import { readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { sdkToolList, sdkToolSchemas, TOOL_SCHEMAS_FILE } from '../../bin/mcp-tool-schemas.ts';
import type { McpInbound } from '../../lambdas/core/mcp/connection.ts';
import type { McpDeps } from '../../lambdas/core/mcp/erp-access.ts';
import { MCP_INSTRUCTIONS, serveMcp } from '../../lambdas/core/mcp/serve.ts';
import { offeredTools } from '../../lambdas/core/mcp/tools.ts';
import { MAX_BATCH_SIZE, StatelessJsonTransport } from '../../lambdas/core/mcp/transport.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';
import { SERVICE_NAME } from '../../lambdas/platform/names.ts';
import { PROXY_DESCRIPTION, PROXY_VERSION } from '../../lambdas/platform/package-info.ts';
import { compileTargetPolicy } from '../../lambdas/upstream/target-policy.ts';
import type { VersionClient } from '../../lambdas/upstream/version-client.ts';
import { TEST_PROXY_KEY } from '../support/test-secrets.ts';

interface Answer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly body: string;
}

const GOOD_HEADERS = {
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

/** A small server of the SDK's: one tool that echoes its argument. */
function echoServer(): McpServer {
  const server = new McpServer({ name: 'echo', version: '1' });
  server.registerTool('echo', { description: 'echo', inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  return server;
}

/** The SDK transport's answer to one POST (undefined headers left out, as API Gateway would). */
async function sdkAnswer(
  server: {
    connect(transport: WebStandardStreamableHTTPServerTransport): Promise<void>;
    close(): Promise<void>;
  },
  headers: Record<string, string>,
  body: unknown,
): Promise<Answer> {
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

/** The proxy transport's answer to the same POST. */
async function ownAnswer(
  server: { connect(transport: StatelessJsonTransport): Promise<void>; close(): Promise<void> },
  headers: Record<string, string>,
  body: unknown,
): Promise<Answer> {
  const transport = new StatelessJsonTransport();
  await server.connect(transport);
  try {
    const answer = await transport.handle(headers, body);
    return { status: answer.status, contentType: answer.headers['content-type'], body: answer.body };
  } finally {
    await server.close();
  }
}

const notification = { jsonrpc: '2.0', method: 'notifications/initialized' };
const TRANSPORT_CASES: readonly [string, Record<string, string>, unknown][] = [
  ['a tools/call', GOOD_HEADERS, call(1, 'echo', { text: 'hi' })],
  ['a tools/call with a string id', GOOD_HEADERS, call('a-1', 'echo', { text: 'hi' })],
  ['a tools/call with id 0', GOOD_HEADERS, call(0, 'echo', { text: 'hi' })],
  ['a tools/call whose arguments do not fit', GOOD_HEADERS, call(1, 'echo', { text: 3 })],
  ['initialize', GOOD_HEADERS, initialize()],
  ['initialize of an older version', GOOD_HEADERS, initialize(1, '2025-03-26')],
  ['initialize of an unknown version', GOOD_HEADERS, initialize(1, '1999-01-01')],
  [
    'initialize with an unsupported version header (not checked on initialize)',
    { ...GOOD_HEADERS, 'mcp-protocol-version': '1999-01-01' },
    initialize(),
  ],
  ['tools/list', GOOD_HEADERS, request(2, 'tools/list')],
  ['ping', GOOD_HEADERS, request(3, 'ping')],
  ['an unknown method', GOOD_HEADERS, request(4, 'resources/list')],
  ['a method with bad params', GOOD_HEADERS, request(5, 'tools/call', { arguments: {} })],
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
  ['no Content-Type', { accept: GOOD_HEADERS.accept }, request(1, 'ping')],
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
    'an unsupported protocol version',
    { ...GOOD_HEADERS, 'mcp-protocol-version': '1999-01-01' },
    request(1, 'ping'),
  ],
  ['an empty protocol version', { ...GOOD_HEADERS, 'mcp-protocol-version': '' }, request(1, 'ping')],
  [
    'a protocol version with spaces around it',
    { ...GOOD_HEADERS, 'mcp-protocol-version': ' 2025-06-18 ' },
    request(1, 'ping'),
  ],
  [
    'an older protocol version',
    { ...GOOD_HEADERS, 'mcp-protocol-version': '2024-11-05' },
    request(1, 'ping'),
  ],
  [
    'no protocol version',
    { accept: GOOD_HEADERS.accept, 'content-type': 'application/json' },
    request(1, 'ping'),
  ],
  [
    'a notification with an unsupported protocol version',
    { ...GOOD_HEADERS, 'mcp-protocol-version': '1999-01-01' },
    notification,
  ],
  ['not JSON-RPC: an object', GOOD_HEADERS, { foo: 1 }],
  ['not JSON-RPC: version 1.0', GOOD_HEADERS, { jsonrpc: '1.0', id: 1, method: 'ping' }],
  ['not JSON-RPC: a number', GOOD_HEADERS, 42],
  ['not JSON-RPC: null', GOOD_HEADERS, null],
  ['not JSON-RPC: a string', GOOD_HEADERS, 'ping'],
  ['not JSON-RPC: a null id', GOOD_HEADERS, { jsonrpc: '2.0', id: null, method: 'ping' }],
  ['an empty batch', GOOD_HEADERS, []],
  ['a batch of two requests', GOOD_HEADERS, [request(1, 'ping'), call(2, 'echo', { text: 'b' })]],
  ['a batch of notifications', GOOD_HEADERS, [notification, notification]],
  ['a batch with initialize and another request', GOOD_HEADERS, [initialize(), request(2, 'ping')]],
  ['a batch with a member that is not JSON-RPC', GOOD_HEADERS, [request(1, 'ping'), { foo: 1 }]],
  [
    'a batch over the limit',
    GOOD_HEADERS,
    Array.from({ length: MAX_BATCH_SIZE + 1 }, (_, id) => request(id, 'ping')),
  ],
  [
    'a batch at the limit',
    GOOD_HEADERS,
    Array.from({ length: MAX_BATCH_SIZE }, (_, id) => request(id, 'ping')),
  ],
  ['a batch of two requests with one id', GOOD_HEADERS, [request(1, 'ping'), request(1, 'ping')]],
];

describe('the proxy transport', () => {
  it.each(TRANSPORT_CASES)('answers %s as the SDK transport does', async (_name, headers, body) => {
    const expected = await sdkAnswer(echoServer(), headers, body);
    const answer = await ownAnswer(echoServer(), headers, body);
    expect(answer).toEqual(expected);
  });

  it.each([
    ['a NUL', 'application/json,\0 text/event-stream'],
    ['a line feed', 'application/json,\n text/event-stream'],
    ['a character above U+00FF', 'application/json, text/event-stream, \u2603'],
  ])(
    'answers a header value with %s 400 -32600 naming the header (the SDK transport could not be given it: a Request throws)',
    async (_name, accept) => {
      const headers = { ...GOOD_HEADERS, accept };
      await expect(sdkAnswer(echoServer(), headers, request(1, 'ping'))).rejects.toThrow(TypeError);
      const answer = await ownAnswer(echoServer(), headers, request(1, 'ping'));
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toEqual({
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

  it('gives serveMcp an answer for such a header, not an error (a 500 -32603 before)', async () => {
    const answer = await proxyAnswer(false, request(1, 'ping'), { ...GOOD_HEADERS, accept: '\u2603' });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body ?? '{}').error.code).toBe(-32600);
  });

  it('takes a header value with Latin-1 characters, tabs and control characters, as a Request does', async () => {
    for (const accept of [
      '\u00e9 application/json, text/event-stream',
      'application/json,\ttext/event-stream\u007f',
    ]) {
      const headers = { ...GOOD_HEADERS, accept };
      expect(await ownAnswer(echoServer(), headers, request(1, 'ping'))).toEqual(
        await sdkAnswer(echoServer(), headers, request(1, 'ping')),
      );
    }
  });

  it('serves one request only, as the SDK transport in stateless mode', async () => {
    const server = echoServer();
    const transport = new StatelessJsonTransport();
    await server.connect(transport);
    await transport.handle(GOOD_HEADERS, request(1, 'ping'));
    await expect(transport.handle(GOOD_HEADERS, request(2, 'ping'))).rejects.toThrow(/cannot be reused/);
    await server.close();
  });
});

/** The SDK's `McpServer` with the proxy's tools, as core/mcp/serve.ts built it before. */
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

/** What serveMcp answers (no ERP: these cases never reach a tool). */
async function proxyAnswer(writeTools: boolean, body: unknown, headers = GOOD_HEADERS): Promise<Answer> {
  const config = loadConfig({ PROXY_API_KEY: TEST_PROXY_KEY });
  const never = { call: () => Promise.reject(new Error('no tool runs in these cases')) };
  const deps: McpDeps = {
    config,
    policy: compileTargetPolicy({ allowedTargets: config.allowedTargets, allowedDatabases: [] }),
    versions: { cached: () => undefined } as unknown as VersionClient,
    named: never,
    positional: never,
    writeTools,
  };
  const inbound: McpInbound = {
    envelopeId: null,
    body: { ok: true, value: body, members: new Map(), tooDeep: false },
    protocolHeaders: headers,
    erp: { url: 'http://127.0.0.1:9', db: 'erp_a', apiKey: 'b'.repeat(40), userId: '2' },
    presentedProxyKey: TEST_PROXY_KEY,
    requestTimeout: undefined,
    responseEncoding: undefined,
    sourceIp: '127.0.0.1',
    remainingMs: undefined,
  };
  const { response } = await serveMcp(inbound, deps);
  return {
    status: response.statusCode,
    contentType: response.headers?.['content-type'],
    body: response.body,
  };
}

const nested = (depth: number): unknown => (depth === 0 ? 'x' : [nested(depth - 1)]);
const SERVER_CASES: readonly [string, unknown][] = [
  ['initialize', initialize()],
  ['tools/list', request(2, 'tools/list')],
  ['tools/list with a cursor', request(2, 'tools/list', { cursor: 'next' })],
  ['an unknown tool', call(3, 'delete_everything', {})],
  ['a write tool when writes are off, or a write tool with bad arguments', call(3, 'create', { model: 'x' })],
  ['no arguments', call(3, 'search_read')],
  ['arguments that are not an object', call(3, 'search_read', [1, 2])],
  [
    'arguments with many problems',
    call(4, 'search_read', { model: 'Bad Model!', limit: 0, domain: [['a']], fields: 'x', offset: 1.5 }),
  ],
  ['empty ids and a wrong field list', call(5, 'read', { model: 'res.partner', ids: [], fields: [1] })],
  ['ids that are not positive integers', call(6, 'read', { ids: [1.5, -1, '3'] })],
  [
    'a bad method name',
    call(7, 'call_method', { model: 'res.partner', method: 'bad-name', args: {}, kwargs: [] }),
  ],
  ['out-of-range paging', call(8, 'list_models', { limit: 5000, offset: -1, search: 3 })],
  [
    'a bad domain',
    call(9, 'search_count', { model: 'res.partner', domain: ['x', ['a', '=', 1, 2], [1, 2, 3]] }),
  ],
  ['values that are not a dict', call(10, 'create', { model: 'res.partner', values: 'x', context: [] })],
  ['a too long model name', call(11, 'fields_get', { model: 'a'.repeat(300), attributes: [1] })],
  [
    'more than 10,000 elements',
    call(12, 'call_method', {
      model: 'res.partner',
      method: 'x',
      args: Array.from({ length: 10_001 }, () => 1),
    }),
  ],
  [
    'deep arguments that do not fit',
    call(13, 'read', { model: 'res.partner', ids: [nested(5)], context: nested(3) }),
  ],
  [
    'nested problems in a domain',
    call(13, 'search_read', { model: 'res.partner', domain: ['&', [1, '=', nested(40)], [null, 2, 3], 'x'] }),
  ],
  ['unknown arguments (dropped) with bad known ones', call(14, 'list_models', { extra: 1, limit: 'x' })],
  [
    'a task-augmented call (arguments that do not fit)',
    request(15, 'tools/call', { name: 'read', arguments: { ids: [] }, task: { ttl: 1000 } }),
  ],
  ['ping', request(15, 'ping')],
  ['an unknown method', request(16, 'prompts/list')],
  ['a notification', notification],
];

describe('the proxy server', () => {
  for (const writeTools of [false, true]) {
    it.each(SERVER_CASES)(
      `answers %s as the SDK's McpServer with the same tools does (writes ${writeTools ? 'on' : 'off'})`,
      async (_name, body) => {
        const expected = await sdkAnswer(referenceServer(writeTools), GOOD_HEADERS, body);
        expect(await proxyAnswer(writeTools, body)).toEqual(expected);
      },
    );
  }
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
