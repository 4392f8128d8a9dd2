/**
 * `POST /mcp` as a value pipeline (docs/design.md, "The tools/call pipeline"): every step returns
 * its answer with how the request ended, and the request's facts (the log line, the metrics) are
 * those values, never read back from the answer's text. `serveMcp` is called directly, as the mcp
 * function calls it.
 */
import { describe, expect, it } from 'vitest';
import type { McpErp } from '../../lambdas/core/mcp/connection.ts';
import { factsOf } from '../../lambdas/core/request-facts.ts';
import { IdentityRefusedError } from '../../lambdas/platform/errors.ts';
import { compileKeyPolicy } from '../../lambdas/platform/key-policy.ts';
import { serveMcp } from '../../lambdas/protocol/mcp/serve.ts';
import type { ErpCall, ErpOutcome } from '../../lambdas/upstream/erp-transport.ts';
import { mcpDeps, mcpInbound } from '../support/mcp-serve.ts';

const LEGACY = {
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
  'mcp-protocol-version': '2025-11-25',
};

/**
 * The runtime's MCP parts over an ERP that answers `outcome` (42 by default) to every named call,
 * recording the calls; `env` over the test configuration (the target policy comes from it).
 */
function depsWith(
  writeTools: boolean,
  outcome: ErpOutcome = { kind: 'result', value: 42 },
  env: Record<string, string> = {},
) {
  const calls: ErpCall[] = [];
  const erp = {
    call: async (call: ErpCall): Promise<ErpOutcome> => {
      calls.push(call);
      return outcome;
    },
  };
  return { deps: mcpDeps(writeTools, erp, env), calls };
}

const ERP: McpErp = {
  from: 'headers',
  headers: { url: 'http://127.0.0.1:9', db: 'erp_a', apiKey: 'b'.repeat(40), userId: '2' },
};

function toolsCall(name: string, args: unknown, id = 1) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

describe('the facts of a POST /mcp request, as values', () => {
  it.each([
    [
      'a notification',
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      LEGACY,
      {
        mcpMethod: 'notifications/initialized',
        outcome: 'success',
      },
    ],
    ['ping', { jsonrpc: '2.0', id: 1, method: 'ping' }, LEGACY, { mcpMethod: 'ping', outcome: 'success' }],
    [
      'a method of no era',
      { jsonrpc: '2.0', id: 1, method: 'resources/list' },
      LEGACY,
      {
        mcpMethod: 'resources/list',
        outcome: 'proxy_error',
        errorCode: -32601,
      },
    ],
    [
      'an unknown tool',
      toolsCall('nope', {}),
      LEGACY,
      {
        mcpMethod: 'tools/call',
        outcome: 'proxy_error',
        errorCode: -32602,
      },
    ],
    [
      'a write tool while writes are off',
      toolsCall('create', { model: 'res.partner', values: {} }),
      LEGACY,
      {
        tool: 'create',
        outcome: 'proxy_error',
        errorCode: -32602,
      },
    ],
    [
      'arguments that do not fit',
      toolsCall('search_count', { model: 'res.partner', feilds: [] }),
      LEGACY,
      {
        tool: 'search_count',
        outcome: 'proxy_error',
        errorCode: -32602,
      },
    ],
    [
      'an Accept without text/event-stream',
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      {
        ...LEGACY,
        accept: 'application/json',
      },
      { mcpMethod: 'ping', outcome: 'proxy_error', errorCode: -32000 },
    ],
    [
      'a 2026-07-28 call whose headers disagree with the body',
      {
        ...toolsCall('search_count', { model: 'res.partner' }),
        params: {
          name: 'search_count',
          arguments: { model: 'res.partner' },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
      {
        ...LEGACY,
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'read',
      },
      { mcpMethod: 'tools/call', outcome: 'proxy_error', errorCode: -32020 },
    ],
  ] as const)('%s', async (_name, body, headers, expected) => {
    const { deps, calls } = depsWith(false);
    const { facts } = await serveMcp(mcpInbound(body, headers, { erp: ERP }), deps);
    expect(facts).toMatchObject(expected);
    // A tool is named in the facts only once the call names a declared one.
    expect(facts.tool).toBe('tool' in expected ? expected.tool : undefined);
    expect(calls).toEqual([]);
  });

  it("a tool that ran: its ERP call's facts come back with its result", async () => {
    const { deps, calls } = depsWith(false);
    const { response, facts } = await serveMcp(
      mcpInbound(toolsCall('search_count', { model: 'res.partner' }), LEGACY, { erp: ERP }),
      deps,
    );
    expect(JSON.parse(response.body)).toMatchObject({ result: { structuredContent: { count: 42 } } });
    expect(calls.map((call) => `${call.model}.${call.method}`)).toEqual(['res.partner.search_count']);
    expect(facts).toMatchObject({
      mcpMethod: 'tools/call',
      tool: 'search_count',
      model: 'res.partner',
      action: 'search_count',
      erpHost: '127.0.0.1:9',
      erpDb: 'erp_a',
      outcome: 'success',
    });
    expect(facts.errorCode).toBeUndefined();
  });

  it("a tool whose ERP call failed: the call's facts come back with the ERP error's outcome", async () => {
    const { deps, calls } = depsWith(false, {
      kind: 'erp_error',
      code: 404,
      message: "Object res.nope doesn't exist",
      data: { name: 'odoo.exceptions.MissingError' },
    });
    const { response, facts } = await serveMcp(
      mcpInbound(toolsCall('search_count', { model: 'res.nope' }), LEGACY, { erp: ERP }),
      deps,
    );
    expect(JSON.parse(response.body)).toMatchObject({ result: { isError: true } });
    expect(calls.map((call) => `${call.model}.${call.method}`)).toEqual(['res.nope.search_count']);
    expect(facts).toMatchObject({
      mcpMethod: 'tools/call',
      tool: 'search_count',
      model: 'res.nope',
      action: 'search_count',
      erpHost: '127.0.0.1:9',
      erpDb: 'erp_a',
      outcome: 'erp_error',
      errorCode: 404,
    });
  });

  it('a tool refused by the target policy: the refused target and database in its facts, no ERP call', async () => {
    // A target policy that lists another host only: the call's 127.0.0.1 is not in it.
    const { deps, calls } = depsWith(false, undefined, { ERP_ALLOWED_TARGETS: 'erp.example.com' });
    const { response, facts } = await serveMcp(
      mcpInbound(toolsCall('search_count', { model: 'res.partner' }), LEGACY, { erp: ERP }),
      deps,
    );
    expect(JSON.parse(response.body)).toMatchObject({ result: { isError: true } });
    expect(calls).toEqual([]);
    expect(facts).toMatchObject({
      mcpMethod: 'tools/call',
      tool: 'search_count',
      erpHost: '127.0.0.1:9',
      erpDb: 'erp_a',
      outcome: 'proxy_error',
      // The gate's question names the model, as an execute call's facts do before its policies.
      model: 'res.partner',
    });
  });
});

describe("a policy refusal's advice names whose policy refused", () => {
  const refusedModel = toolsCall('search_count', { model: 'res.users' });
  const keyPolicy = compileKeyPolicy({ models: ['res.partner'] });

  it("a token caller: its identity map entry's policy, no key, no header; nothing reaches the ERP", async () => {
    const { deps, calls } = depsWith(false);
    const signedIn: McpErp = {
      from: 'identity',
      identity: 'sales',
      connection: { baseUrl: new URL('http://127.0.0.1:9'), db: 'erp_a', apiKey: 'b'.repeat(40), uid: 2 },
    };
    const { response, facts } = await serveMcp(
      mcpInbound(refusedModel, LEGACY, {
        erp: signedIn,
        keyPolicy,
        identity: { kind: 'oauth', issuer: 'https://id.example.com', subject: 'alice', entry: 'sales' },
        presentedProxyKey: undefined,
      }),
      deps,
    );
    const { retry, message } = JSON.parse(JSON.parse(response.body).result.content[0].text).error;
    expect(retry).toContain(
      `The policy of the operator's identity map entry "sales" does not allow this model`,
    );
    expect(retry).not.toMatch(/x-erp|\bkey\b|key's/);
    // The message too names the identity's policy, never a key's (the person has none).
    expect(message).toMatch(/^Refused by the policy of the operator's identity map entry "sales": model /);
    expect(message).not.toMatch(/\bkey\b|key's/);
    expect(facts).toMatchObject({ tool: 'search_count', outcome: 'proxy_error', errorCode: -32008 });
    expect(calls).toEqual([]);
  });

  it("a proxy-key caller: the key's policy", async () => {
    const { deps } = depsWith(false);
    const { response } = await serveMcp(mcpInbound(refusedModel, LEGACY, { erp: ERP, keyPolicy }), deps);
    const { retry } = JSON.parse(JSON.parse(response.body).result.content[0].text).error;
    expect(retry).toContain("This key's policy does not allow this model");
  });
});

describe('the OAuth scope check, on the parsed call', () => {
  const grant = (scopes: string[]) => ({
    scopes: new Set(scopes),
    resource: 'https://proxy.example.com/mcp',
  });
  const create = toolsCall('create', { model: 'res.partner', values: { name: 'x' } });

  it('refuses a write tool to a token without erp.write: 403 insufficient_scope, the tool in its facts, no ERP call', async () => {
    const { deps, calls } = depsWith(true);
    const refused = await serveMcp(mcpInbound(create, LEGACY, { erp: ERP }), deps, grant(['erp.read'])).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(IdentityRefusedError);
    expect((refused as IdentityRefusedError).headers['WWW-Authenticate']).toMatch(
      /error="insufficient_scope".*scope="erp.read erp.write"/,
    );
    expect(factsOf(refused)).toMatchObject({ mcpMethod: 'tools/call', tool: 'create' });
    expect(calls).toEqual([]);
  });

  it('lets a token with erp.write write, a read tool through with erp.read, and a proxy key through', async () => {
    const { deps, calls } = depsWith(true);
    const written = await serveMcp(
      mcpInbound(create, LEGACY, { erp: ERP }),
      deps,
      grant(['erp.read', 'erp.write']),
    );
    expect(written.facts).toMatchObject({ tool: 'create', outcome: 'success' });
    const read = await serveMcp(
      mcpInbound(toolsCall('search_count', { model: 'res.partner' }), LEGACY, { erp: ERP }),
      deps,
      grant(['erp.read']),
    );
    expect(read.facts).toMatchObject({ tool: 'search_count', outcome: 'success' });
    const byKey = await serveMcp(mcpInbound(create, LEGACY, { erp: ERP }), deps);
    expect(byKey.facts).toMatchObject({ tool: 'create', outcome: 'success' });
    expect(calls.map((call) => call.method)).toEqual(['create', 'search_count', 'create']);
  });

  it('with writes off, a write tool is the writes-off tool error, not a scope challenge', async () => {
    const { deps } = depsWith(false);
    const answer = await serveMcp(mcpInbound(create, LEGACY, { erp: ERP }), deps, grant(['erp.read']));
    expect(answer.response.body).toMatch(/writes are off on this server/);
    expect(answer.facts).toMatchObject({ tool: 'create', outcome: 'proxy_error', errorCode: -32602 });
  });
});
