/**
 * A person confirms what an agent writes (issue 47; docs/guide/confirmations.md), end to end: the
 * official v2 MCP client (`@modelcontextprotocol/client`) pinned to 2026-07-28 with its
 * elicitation handler, against the local proxy and the ERP double, which counts the writes it
 * receives; raw HTTP for what a client library would not send (a state replayed, changed, sent by
 * another key, for other arguments or another ERP).
 */
import { describe, expect, it } from 'vitest';
import type { ErpDouble } from '../erp-double/index.ts';
import { USERS, useErpAndProxy } from '../support/fixtures.ts';
import {
  erpHeaders as connectionHeaders,
  MODERN_VERSION,
  withConfirmingClient,
  withMcpClient,
} from '../support/mcp-client.ts';

const admin = USERS.adminA;
const KEYS = {
  agent: 'confirm-agent-key-0123456789abcdef',
  other: 'confirm-other-key-0123456789abcdef',
  free: 'confirm-free-key-0123456789abcdefg',
} as const;
const PROXY_API_KEYS = JSON.stringify({
  keys: [
    { name: 'agent', key: KEYS.agent, policy: { confirm: 'writes' } },
    { name: 'other', key: KEYS.other, policy: { confirm: 'writes' } },
    { name: 'free', key: KEYS.free },
  ],
});

function headers(double: ErpDouble, key: string = KEYS.agent, db = 'erp_a'): Record<string, string> {
  return {
    'x-api-key': key,
    ...connectionHeaders({ url: double.url, db, apiKey: admin.apiKey, uid: admin.uid }),
  };
}

/** The ERP writes the double received (create, write, unlink, over JSON-2 or /jsonrpc). */
function writes(double: ErpDouble): number {
  return double.requests.filter(
    (request) =>
      /\/json\/2\/[^/]+\/(create|write|unlink)$/.test(request.path) ||
      (request.path === '/jsonrpc' && /"(create|write|unlink)"/.test(request.body)),
  ).length;
}

const META = (capabilities: Record<string, unknown>) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': capabilities,
});

/** One raw 2026-07-28 `tools/call`. */
async function rawCall(
  url: string,
  head: Record<string, string>,
  name: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = { elicitation: {} },
): Promise<{
  status: number;
  body: { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };
}> {
  const response = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      ...head,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_VERSION,
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name, ...params, _meta: META(capabilities) },
    }),
  });
  return { status: response.status, body: (await response.json()) as never };
}

const CREATE = { model: 'res.partner', values: { name: 'Confirmed Co' } };

describe('a person confirms MCP writes (2026-07-28, the official v2 client)', () => {
  const { double, proxy } = useErpAndProxy(
    { mode: '19' },
    { env: { PROXY_API_KEY: '', PROXY_API_KEYS, MCP_WRITE_TOOLS: 'true' } },
  );

  it('accepted: the form says what will happen, and the write runs once', async () => {
    double.reset();
    await withConfirmingClient(proxy.url, headers(double), 'accept', async (client, forms) => {
      const result = await client.callTool({
        name: 'write',
        arguments: { model: 'res.partner', ids: [1], values: { name: 'Renamed' } },
      });
      expect(result.isError ?? false).toBe(false);
      expect(forms).toHaveLength(1);
      const form = forms[0] as string;
      expect(form).toContain(`ERP: ${JSON.stringify(`${double.url}/`)}, database "erp_a"`);
      expect(form).toMatch(/Update 1 record of ".+" \("res\.partner"\)\./);
      expect(form).toMatch(/ {2}- id 1: ".+"/);
      expect(form).toContain('  - "name": "Renamed"');
    });
    expect(writes(double)).toBe(1);
  });

  it('declined and cancelled: a tool result that says nothing was written, and no write', async () => {
    double.reset();
    for (const [action, outcome] of [
      ['decline', 'declined'],
      ['cancel', 'cancelled'],
    ] as const) {
      await withConfirmingClient(proxy.url, headers(double), action, async (client) => {
        const result = await client.callTool({ name: 'create', arguments: CREATE });
        expect(result.isError).toBe(false);
        expect(result.structuredContent).toEqual({ confirmed: false, outcome });
        expect(JSON.stringify(result.content)).toMatch(/nothing was written/);
      });
    }
    expect(writes(double)).toBe(0);
  });

  it('reads and keys without confirm are never asked', async () => {
    double.reset();
    await withConfirmingClient(proxy.url, headers(double, KEYS.free), 'decline', async (client, forms) => {
      const created = await client.callTool({ name: 'create', arguments: CREATE });
      expect(created.isError ?? false).toBe(false);
      expect(forms).toEqual([]);
    });
    await withConfirmingClient(proxy.url, headers(double), 'decline', async (client, forms) => {
      await client.callTool({ name: 'search_read', arguments: { model: 'res.partner', limit: 1 } });
      await client.callTool({
        name: 'call_method',
        arguments: { model: 'res.partner', method: 'name_search', kwargs: { name: 'a' } },
      });
      expect(forms).toEqual([]);
    });
    expect(writes(double)).toBe(1);
  });

  it('tools/list marks the tools a person confirms', async () => {
    await withConfirmingClient(proxy.url, headers(double), 'accept', async (client) => {
      const { tools } = await client.listTools();
      const create = tools.find((tool) => tool.name === 'create');
      expect(create?.description).toMatch(/A person confirms each call of this tool/);
      expect(tools.find((tool) => tool.name === 'read')?.description).not.toMatch(/A person confirms/);
    });
  });

  it('a 2026-07-28 client without elicitation: -32021 naming it; a legacy client: a tool error; nothing written', async () => {
    double.reset();
    const missing = await rawCall(proxy.url, headers(double), 'create', { arguments: CREATE }, {});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { elicitation: {} } },
    });
    await withMcpClient(proxy.url, headers(double), async (client) => {
      const result = (await client.callTool({ name: 'create', arguments: CREATE })) as {
        isError?: boolean;
        content: unknown;
      };
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toMatch(/-32008.*2026-07-28.*elicitation/);
    });
    expect(writes(double)).toBe(0);
  });

  it('execute writes from a confirming key: -32008 rule confirm; its reads pass', async () => {
    double.reset();
    const envelope = (method: string) => ({
      id: 'c',
      erp_instance: { url: double.url, db: 'erp_a', api_key: admin.apiKey },
      model_id: 'res.partner',
      method,
      kwargs:
        method === 'create' ? { vals_list: [{ name: 'X' }] } : { domain: [], fields: ['name'], limit: 1 },
    });
    const write = await proxy.post('/v2/erp/execute', envelope('create'), { 'x-api-key': KEYS.agent });
    expect(write.status).toBe(403);
    expect(JSON.stringify(write.json)).toMatch(/-32008/);
    expect(JSON.stringify(write.json)).toMatch(/only POST \/mcp can ask/);
    const read = await proxy.post('/v2/erp/execute', envelope('search_read'), { 'x-api-key': KEYS.agent });
    expect(read.status).toBe(200);
    expect(writes(double)).toBe(0);
  });

  /** A state and its accepted answer, asked for `params` with the agent key. */
  async function askedState(params: Record<string, unknown>, head = headers(double)): Promise<string> {
    const asked = await rawCall(proxy.url, head, 'create', params);
    expect(asked.body.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { confirm: { method: 'elicitation/create' } },
    });
    return asked.body.result?.requestState as string;
  }
  const ACCEPT = { confirm: { action: 'accept' } };

  it('a state replayed after its run, changed, sent by another key, for other arguments or another ERP: -32602, no write', async () => {
    double.reset();
    const state = await askedState({ arguments: CREATE });
    const ran = await rawCall(proxy.url, headers(double), 'create', {
      arguments: CREATE,
      requestState: state,
      inputResponses: ACCEPT,
    });
    expect(ran.body.result?.isError ?? false).toBe(false);
    expect(writes(double)).toBe(1);
    const refused = async (head: Record<string, string>, params: Record<string, unknown>, why: RegExp) => {
      const answer = await rawCall(proxy.url, head, 'create', { inputResponses: ACCEPT, ...params });
      expect(answer.body.error?.code, JSON.stringify(answer.body)).toBe(-32602);
      expect(answer.body.error?.message).toMatch(why);
    };
    await refused(headers(double), { arguments: CREATE, requestState: state }, /already used/);
    const fresh = await askedState({ arguments: CREATE });
    const bytes = Buffer.from(fresh, 'base64url');
    bytes[bytes.length - 5] = (bytes[bytes.length - 5] as number) ^ 1;
    await refused(
      headers(double),
      { arguments: CREATE, requestState: bytes.toString('base64url') },
      /changed/,
    );
    await refused(headers(double, KEYS.other), { arguments: CREATE, requestState: fresh }, /another caller/);
    await refused(
      headers(double),
      { arguments: { ...CREATE, values: { name: 'Other' } }, requestState: fresh },
      /other arguments/,
    );
    await refused(
      headers(double, KEYS.agent, 'erp_b'),
      { arguments: CREATE, requestState: fresh },
      /another ERP/,
    );
    expect(writes(double)).toBe(1);
  });

  it('two accepted retries of one state at once: one write', async () => {
    double.reset();
    const state = await askedState({ arguments: CREATE });
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        rawCall(proxy.url, headers(double), 'create', {
          arguments: CREATE,
          requestState: state,
          inputResponses: ACCEPT,
        }),
      ),
    );
    expect(answers.filter((answer) => answer.body.result !== undefined)).toHaveLength(1);
    expect(answers.filter((answer) => answer.body.error?.code === -32602)).toHaveLength(3);
    expect(writes(double)).toBe(1);
  });

  it('a retry without an answer is asked again; an idempotency_key across rounds writes once, and its replay asks nothing', async () => {
    double.reset();
    const keyed = { ...CREATE, idempotency_key: 'confirm-once-1' };
    const state = await askedState({ arguments: keyed });
    const again = await rawCall(proxy.url, headers(double), 'create', {
      arguments: keyed,
      requestState: state,
    });
    expect(again.body.result).toMatchObject({ resultType: 'input_required' });
    expect(writes(double)).toBe(0);
    const ran = await rawCall(proxy.url, headers(double), 'create', {
      arguments: keyed,
      requestState: state,
      inputResponses: ACCEPT,
    });
    expect(ran.body.result?.isError ?? false).toBe(false);
    const replay = await rawCall(proxy.url, headers(double), 'create', { arguments: keyed });
    expect(replay.body.result).toMatchObject({ resultType: 'complete' });
    expect(replay.body.result?.content).toEqual(ran.body.result?.content);
    expect(writes(double)).toBe(1);
  });
});

describe('an expired confirmation is asked again', () => {
  const { double, proxy } = useErpAndProxy(
    { mode: '19' },
    { env: { PROXY_API_KEY: '', PROXY_API_KEYS, MCP_WRITE_TOOLS: 'true', CONFIRM_TTL: '30' } },
  );

  it('a state past CONFIRM_TTL gets a new input-required round, and nothing is written', async () => {
    double.reset();
    const realNow = Date.now;
    const asked = await rawCall(proxy.url, headers(double), 'create', { arguments: CREATE });
    const state = asked.body.result?.requestState as string;
    Date.now = () => realNow() + 31_000;
    try {
      const late = await rawCall(proxy.url, headers(double), 'create', {
        arguments: CREATE,
        requestState: state,
        inputResponses: { confirm: { action: 'accept' } },
      });
      expect(late.body.result).toMatchObject({ resultType: 'input_required' });
      expect(late.body.result?.requestState).not.toBe(state);
    } finally {
      Date.now = realNow;
    }
    expect(writes(double)).toBe(0);
  });
});
