/**
 * Key policies (README, "Key policies") over real HTTP: the local server in front of the ERP double,
 * with named keys in PROXY_API_KEYS, some of them with a policy. Every refusal is -32008 with HTTP 403,
 * the envelope `id` echoed, a message naming the rule and never the key, and nothing sent to the ERP;
 * the request log line names the key and the rule; `/_/metrics` counts refusals by key name and rule.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { captureLogLines } from '../support/captured-output.ts';
import { type Envelope, executeCalls, USERS, useErpAndProxy } from '../support/fixtures.ts';
import {
  connectMcp,
  erpHeaders,
  isError,
  json,
  READ_TOOLS,
  texts,
  toolError,
} from '../support/mcp-client.ts';

const admin = USERS.adminA;

const KEYS = {
  full: 'full-key-0123456789abcdef',
  reporting: 'reporting-key-0123456789abcdef',
  agent: 'agent-key-0123456789abcdef',
  agentRead: 'agent-read-key-0123456789abcdef',
  elsewhere: 'elsewhere-key-0123456789abcdef',
  loopback: 'loopback-key-0123456789abcdef',
  otherDb: 'other-db-key-0123456789abcdef',
  operator: 'operator-key-0123456789abcdef',
  both: 'both-apis-key-0123456789abcdef',
} as const;

const PROXY_API_KEYS = JSON.stringify({
  keys: [
    { name: 'full', key: KEYS.full },
    {
      name: 'reporting',
      key: KEYS.reporting,
      policy: { apis: ['v1', 'v2', 'version'], access: 'read', models: ['res.partner', 'sale.*'] },
    },
    { name: 'agent', key: KEYS.agent, policy: { apis: ['mcp'], models: ['res.partner', 'res.country'] } },
    { name: 'agent-read', key: KEYS.agentRead, policy: { apis: ['mcp'], access: 'read' } },
    { name: 'elsewhere', key: KEYS.elsewhere, policy: { targets: ['10.20.0.0/16', 'erp.example.com'] } },
    { name: 'loopback', key: KEYS.loopback, policy: { targets: ['127.0.0.1'], databases: ['erp_a'] } },
    { name: 'other-db', key: KEYS.otherDb, policy: { databases: ['erp_b'] } },
    { name: 'operator', key: KEYS.operator, policy: { apis: ['operator'] } },
    {
      name: 'both',
      key: KEYS.both,
      policy: { apis: ['v2', 'mcp'], access: 'read', models: ['res.partner'], databases: ['erp_a'] },
    },
  ],
});

const SECRETS = [...Object.values(KEYS), admin.apiKey];

describe('key policies over HTTP', () => {
  const { double, proxy } = useErpAndProxy(
    { mode: '19' },
    { env: { PROXY_API_KEY: '', PROXY_API_KEYS, MCP_WRITE_TOOLS: 'true' } },
  );

  afterEach(() => {
    vi.restoreAllMocks();
  });

  const instance = () => ({ url: double.url, db: 'erp_a', api_key: admin.apiKey, user_id: admin.uid });

  const { v1, v2 } = executeCalls(proxy, instance, 'policy');

  /** A -32008 refusal naming `rule`'s words, with nothing sent to the ERP and no secret in it. */
  const expectRefused = async (
    call: () => Promise<{ status: number; text: string; envelope: Envelope }>,
    id: string,
    words: RegExp,
  ) => {
    const before = double.requests.length;
    const answer = await call();
    expect(answer.status).toBe(403);
    expect(answer.envelope.id).toBe(id);
    expect(answer.envelope.error?.code).toBe(-32008);
    expect(answer.envelope.error?.message).toMatch(/^Refused by this key's policy: /);
    expect(answer.envelope.error?.message).toMatch(words);
    for (const secret of SECRETS) expect(answer.text).not.toContain(secret);
    expect(double.requests.length).toBe(before);
  };

  it('a read key reads on v1 and v2, and cannot create, write, unlink or archive on either', async () => {
    const read = await v1(KEYS.reporting, { action: 'search_read', model_id: 'res.partner' });
    expect(read.envelope.error).toBeNull();
    expect(Array.isArray(read.envelope.result)).toBe(true);
    const count = await v2(KEYS.reporting, {
      model_id: 'res.partner',
      method: 'search_count',
      kwargs: { domain: [] },
    });
    expect(count.envelope.error).toBeNull();
    const partners = await v1(KEYS.full, { action: 'search_count', model_id: 'res.partner', params: [[]] });

    for (const action of ['create', 'write', 'unlink'] as const) {
      await expectRefused(
        () => v1(KEYS.reporting, { action, model_id: 'res.partner', params: [[1]] }, `v1-${action}`),
        `v1-${action}`,
        new RegExp(`this key may only read; ${action} is not a read method`),
      );
    }
    for (const method of ['create', 'write', 'unlink', 'action_archive']) {
      await expectRefused(
        () => v2(KEYS.reporting, { model_id: 'res.partner', method, kwargs: { ids: [1] } }, `v2-${method}`),
        `v2-${method}`,
        /this key may only read/,
      );
    }
    // call_method: the fn_name decides, trimmed as it is sent.
    await expectRefused(
      () =>
        v1(
          KEYS.reporting,
          { action: 'call_method', fn_name: ' action_archive ', model_id: 'res.partner', params: [[1]] },
          'v1-archive',
        ),
      'v1-archive',
      /action_archive is not a read method/,
    );
    const viaCallMethod = await v1(KEYS.reporting, {
      action: 'call_method',
      fn_name: ' search_count ',
      model_id: 'res.partner',
      params: [[]],
    });
    expect(viaCallMethod.envelope.error).toBeNull();
    // Nothing was created, archived or deleted: the full key counts the same partners.
    const after = await v1(KEYS.full, { action: 'search_count', model_id: 'res.partner', params: [[]] });
    expect(partners.envelope.result).toEqual(expect.any(Number));
    expect(after.envelope.result).toBe(partners.envelope.result);
  });

  it('a key limited to models refuses the others, compared exactly as sent', async () => {
    for (const model of ['res.users', 'Res.Partner', 'sale', 'res.partner.x']) {
      await expectRefused(
        () => v1(KEYS.reporting, { action: 'search_count', model_id: model }, 'model'),
        'model',
        /is not in this key's models/,
      );
    }
    // A name off the grammar is no model name: refused before any rule reads it (-32600 on v1).
    for (const model of ['res.partner ', 'res.partner/../res.users', 'res.partner?x']) {
      const answer = await v1(KEYS.reporting, { action: 'search_count', model_id: model }, 'name');
      expect(answer.status).toBe(400);
      expect(answer.envelope.error).toMatchObject({ code: -32600 });
      expect(answer.envelope.error?.message).toContain('model_id: expected an ERP model name');
    }
    await expectRefused(
      () => v2(KEYS.reporting, { model_id: 'res.users', method: 'search_count' }, 'v2-model'),
      'v2-model',
      /model res\.users is not in this key's models/,
    );
    // A glob lets its models through (the double has no sale.order: the ERP's own error, not -32008).
    const sale = await v1(KEYS.reporting, { action: 'search_count', model_id: 'sale.order' });
    expect(sale.status).toBe(200);
    expect(sale.envelope.error?.code).not.toBe(-32008);
  });

  it('apis: a key is refused on the APIs its policy does not list, with the id echoed', async () => {
    const version = (key: string) =>
      proxy.post('/api/erp/version', { id: 'ver', url: double.url }, { 'x-api-key': key });
    expect((await version(KEYS.reporting)).status).toBe(200);
    const refused = await version(KEYS.agent);
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({
      id: 'ver',
      error: {
        code: -32008,
        message: "Refused by this key's policy: this key may not use the version endpoints",
      },
    });
    await expectRefused(
      () => v1(KEYS.agent, { action: 'search_count', model_id: 'res.partner', params: [[]] }, 'agent-v1'),
      'agent-v1',
      /may not use the v1 execute API/,
    );
    await expectRefused(
      () => v1(KEYS.operator, { action: 'search_count', model_id: 'res.partner', params: [[]] }, 'op-v1'),
      'op-v1',
      /may not use the v1 execute API/,
    );
  });

  it('targets and databases narrow the proxy policy: loopback and erp_a only, or nothing here', async () => {
    expect(
      (await v1(KEYS.loopback, { action: 'search_count', model_id: 'res.partner', params: [[]] })).envelope
        .error,
    ).toBeNull();
    await expectRefused(
      () => v1(KEYS.elsewhere, { action: 'search_count', model_id: 'res.partner', params: [[]] }, 'target'),
      'target',
      /target http:\/\/127\.0\.0\.1:\d+ is not in this key's targets/,
    );
    await expectRefused(
      () => v2(KEYS.otherDb, { model_id: 'res.partner', method: 'search_count' }, 'db'),
      'db',
      /database "erp_a" is not in this key's databases/,
    );
    const version = await proxy.post(
      '/v2/erp/version',
      { id: 'ver-target', url: double.url },
      { 'x-api-key': KEYS.elsewhere },
    );
    expect(version.status).toBe(403);
    expect((version.json as Envelope).error?.message).toMatch(/is not in this key's targets/);
  });

  it('POST /mcp: 403 -32008 before any MCP processing for a key without mcp', async () => {
    const before = double.requests.length;
    const answer = await proxy.post(
      '/mcp',
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { 'x-api-key': KEYS.reporting, accept: 'application/json, text/event-stream' },
    );
    expect(answer.status).toBe(403);
    expect(answer.json).toMatchObject({ error: { code: -32008, message: /may not use POST \/mcp/ } });
    expect(double.requests.length).toBe(before);
  });

  it('POST /mcp: a read key lists no write tool (MCP_WRITE_TOOLS=true) and is refused one', async () => {
    const headers = { 'x-api-key': KEYS.agentRead, ...erpHeaders({ ...instanceHeaders(), uid: admin.uid }) };
    const { client } = await connectMcp(proxy.url, headers);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(READ_TOOLS);
      const before = double.requests.length;
      for (const [name, args] of [
        ['create', { model: 'res.partner', values: { name: 'Nope' } }],
        ['unlink', { model: 'res.partner', ids: [1] }],
        ['call_method', { model: 'res.partner', method: 'search_count', kwargs: { domain: [] } }],
      ] as const) {
        const error = toolError(await client.callTool({ name, arguments: args }));
        expect(error).toMatchObject({ source: 'proxy', code: -32008, retry_safe: true });
        expect(error.message).toMatch(/this key may only read/);
      }
      expect(double.requests.length).toBe(before);
      const count = await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } });
      expect(isError(count)).toBe(false);
    } finally {
      await client.close();
    }
  });

  it('POST /mcp: a key limited to models lists only those and is refused the others', async () => {
    const headers = { 'x-api-key': KEYS.agent, ...erpHeaders({ ...instanceHeaders(), uid: admin.uid }) };
    const { client } = await connectMcp(proxy.url, headers);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('create');
      const models = json(await client.callTool({ name: 'list_models', arguments: {} })) as {
        model: string;
      }[];
      expect(models.map((entry) => entry.model).sort()).toEqual(['res.country', 'res.partner']);
      const refused = await client.callTool({
        name: 'search_read',
        arguments: { model: 'res.users', limit: 1 },
      });
      expect(toolError(refused)).toMatchObject({ source: 'proxy', code: -32008 });
      expect(texts(refused)[0]).toMatch(/model res\.users is not in this key's models/);
      const viaMethod = await client.callTool({
        name: 'call_method',
        arguments: { model: 'res.users', method: 'search_count', kwargs: { domain: [] } },
      });
      expect(toolError(viaMethod).code).toBe(-32008);
      const allowed = await client.callTool({ name: 'search_count', arguments: { model: 'res.country' } });
      expect(isError(allowed)).toBe(false);
    } finally {
      await client.close();
    }
  });

  it('operator endpoints honour operator; about says policies are in use; metrics count refusals', async () => {
    const refused = await proxy.get('/_/metrics', { 'x-api-key': KEYS.reporting });
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({
      error: { code: -32008, message: /may not use the operator endpoints/ },
    });
    expect((await proxy.get('/_/license', { 'x-api-key': KEYS.agent })).status).toBe(403);
    expect((await proxy.get('/_/license', { 'x-api-key': KEYS.operator })).status).toBe(200);
    expect((await proxy.get('/_/license', { 'x-api-key': KEYS.full })).status).toBe(200);
    const about = await proxy.get('/_/about');
    expect((about.json as { key_policies: unknown }).key_policies).toBe(true);
    expect(about.text).not.toContain('res.partner');

    const lines = captureLogLines();
    await v1(KEYS.reporting, { action: 'unlink', model_id: 'res.partner', params: [[1]] }, 'logged');
    const metrics = await proxy.get('/_/metrics', { 'x-api-key': KEYS.operator });
    vi.restoreAllMocks();
    const line = lines().find((entry) => entry.message === 'request' && entry.envelope_id === 'logged');
    expect(line).toMatchObject({
      caller: 'reporting',
      policy_rule: 'access',
      error_code: -32008,
      http_status: 403,
    });
    for (const secret of SECRETS) expect(JSON.stringify(lines())).not.toContain(secret);
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/^erp_proxy_policy_refusals\{key="reporting",rule="access"\} [1-9]/m);
    expect(metrics.text).toMatch(/^erp_proxy_policy_refusals\{key="reporting",rule="model"\} [1-9]/m);
    expect(metrics.text).toMatch(/^erp_proxy_policy_refusals\{key="agent",rule="api"\} [1-9]/m);
  });

  it("POST /mcp: a refusal by the key's policy is execute's -32008 (message, rule), with that rule's advice", async () => {
    const { client } = await connectMcp(proxy.url, {
      'x-api-key': KEYS.both,
      ...erpHeaders({ ...instanceHeaders(), uid: admin.uid }),
    });
    const { client: otherDb } = await connectMcp(proxy.url, {
      'x-api-key': KEYS.both,
      ...erpHeaders({ ...instanceHeaders(), db: 'erp_b', uid: admin.uid }),
    });
    try {
      const lines = captureLogLines();
      const cases = [
        {
          rule: 'model',
          mcp: await client.callTool({ name: 'search_count', arguments: { model: 'res.users' } }),
          execute: await v2(KEYS.both, { model_id: 'res.users', method: 'search_count' }, 'rule-model'),
          advice: /does not allow this model: use one it allows \(list_models lists only those\)/,
        },
        {
          rule: 'database',
          mcp: await otherDb.callTool({ name: 'search_count', arguments: { model: 'res.partner' } }),
          execute: await proxy
            .post(
              '/v2/erp/execute',
              {
                id: 'rule-database',
                erp_instance: { ...instance(), db: 'erp_b' },
                model_id: 'res.partner',
                method: 'search_count',
                kwargs: {},
              },
              { 'x-api-key': KEYS.both },
            )
            .then((answer) => ({ ...answer, envelope: answer.json as Envelope })),
          advice: /does not allow the database of this connection/,
        },
      ];
      vi.restoreAllMocks();
      const toolLines = lines().filter(
        (entry) => entry.message === 'request' && entry.mcp_method === 'tools/call',
      );
      for (const [index, { rule, mcp, execute, advice }] of cases.entries()) {
        const error = toolError(mcp);
        expect(execute.status, rule).toBe(403);
        // The same refusal: execute's message, word for word, and the same rule in the log line.
        expect(error, rule).toMatchObject({
          source: 'proxy',
          code: -32008,
          message: execute.envelope.error?.message,
          retry_safe: true,
          retry_can_help: false,
        });
        expect(error.retry, rule).toMatch(advice);
        expect(error.retry, rule).not.toMatch(/operator does not allow this ERP or database/);
        expect(toolLines[index], rule).toMatchObject({ policy_rule: rule, error_code: -32008 });
      }
      // The example of a refusal in the MCP guide (docs/guide/mcp.md) is this answer, exactly.
      const readme = readFileSync(new URL('../../docs/guide/mcp.md', import.meta.url), 'utf8');
      const example = readme
        .split('\n')
        .find((line) => line.startsWith('{"error":{"source":"proxy","code":-32008'));
      expect(JSON.parse(example ?? '{}')).toEqual(json(cases[0]?.mcp));
      // A write under a read key: the tool itself is refused, before any ERP call.
      const write = toolError(
        await client.callTool({ name: 'create', arguments: { model: 'res.partner', values: { name: 'x' } } }),
      );
      expect(write.message).toBe(
        "Refused by this key's policy: this key may only read; the tool create can change data",
      );
      expect(write.retry).toMatch(/allows reading only: the read tools work/);
    } finally {
      await client.close();
      await otherDb.close();
    }
  });

  function instanceHeaders() {
    return { url: double.url, db: 'erp_a', apiKey: admin.apiKey };
  }
});

/** The policy decides on what was asked, whatever transport would then carry the call. */
describe.each([
  ['v1 translated to JSON-2 (ERP_V1_TRANSPORT=json2, ERP 19)', '19', { ERP_V1_TRANSPORT: 'json2' }],
  ['v2 sent over /jsonrpc (ERP_V2_TRANSPORT=auto, ERP 18)', '18', { ERP_V2_TRANSPORT: 'auto' }],
  ['v1 over /jsonrpc (ERP 16)', '16', {}],
] as const)('key policies, %s', (_label, mode, transportEnv) => {
  const { double, proxy } = useErpAndProxy(
    { mode },
    { env: { PROXY_API_KEY: '', PROXY_API_KEYS, ...transportEnv } },
  );
  const instance = () => ({ url: double.url, db: 'erp_a', api_key: admin.apiKey, user_id: admin.uid });

  it('a read key reads, and its writes and other models never reach the ERP', async () => {
    const api = mode === '18' ? 'v2' : 'v1';
    const call = (method: string, model = 'res.partner', id = 'transport') =>
      api === 'v1'
        ? proxy.post(
            '/api/erp/execute',
            {
              id,
              erp_instance: instance(),
              model_id: model,
              action: 'call_method',
              fn_name: method,
              params: method === 'search_count' ? [[]] : [[1]],
            },
            { 'x-api-key': KEYS.reporting },
          )
        : proxy.post(
            '/v2/erp/execute',
            {
              id,
              erp_instance: instance(),
              model_id: model,
              method,
              kwargs: method === 'search_count' ? { domain: [] } : { ids: [1] },
            },
            { 'x-api-key': KEYS.reporting },
          );
    const read = await call('search_count');
    expect((read.json as Envelope).error, read.text).toBeNull();
    // The read went the way the label says.
    const paths = double.requests.map((request) => request.path);
    expect(paths).toContainEqual(mode === '19' ? expect.stringMatching(/^\/json\/2\//) : '/jsonrpc');
    for (const [method, model, words] of [
      ['unlink', 'res.partner', /this key may only read; unlink is not a read method/],
      ['action_archive', 'res.partner', /action_archive is not a read method/],
      ['search_count', 'res.users', /model res\.users is not in this key's models/],
    ] as const) {
      const before = double.requests.length;
      const answer = await call(method, model, `${method}-${model}`);
      expect(answer.status).toBe(403);
      expect(answer.json).toMatchObject({
        id: `${method}-${model}`,
        error: { code: -32008, message: words },
      });
      expect(double.requests.length).toBe(before);
    }
  });
});
