/**
 * The parts of `POST /mcp` below the SDK (lambdas/core/mcp/): results cut to size by whole items,
 * the failure results (code, name, retry advice by the error table and whether the tool writes),
 * the proxy's messages in an MCP client's words, the connection headers, a bug inside a tool (a
 * -32603 result, logged), and the routing of the refused methods.
 */
import { describe, expect, it } from 'vitest';
import {
  erpFailure,
  failureJson,
  fitJson,
  MAX_RESULT_CHARS,
  mcpWording,
  proxyFailure,
} from '../../lambdas/core/mcp/answers.ts';
import {
  type ErpHeaders,
  erpConnection,
  erpUrl,
  type McpErp,
  type McpInbound,
} from '../../lambdas/core/mcp/connection.ts';
import { type ErpAccess, ErpCallError } from '../../lambdas/core/mcp/erp-access.ts';
import type { ToolLookups, ToolRequest } from '../../lambdas/core/mcp/tool-requests.ts';
import { compactFields, MAX_DEFAULT_SELECTION, TOOLS } from '../../lambdas/core/mcp/tools.ts';
import { presentedProxyKey } from '../../lambdas/middleware/api-key-auth.ts';
import type { ProxyEvent } from '../../lambdas/middleware/types.ts';
import { presentedCredential } from '../../lambdas/platform/bearer.ts';
import { PROXY_ERRORS } from '../../lambdas/platform/error-table.ts';
import {
  BadUpstreamResponseError,
  IdempotencyInProgressError,
  IdempotencyKeyReusedError,
  InternalError,
  InvalidRequestError,
  Json2UnavailableError,
  ResponseTooLargeError,
  TargetRefusedError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '../../lambdas/platform/errors.ts';
import { matchRoute, ROUTES, routeKeys } from '../../lambdas/platform/routes.ts';
import { serveMcp } from '../../lambdas/protocol/mcp/serve.ts';
import { mcpDeps } from '../support/mcp-serve.ts';
import { TEST_PROXY_KEY } from '../support/test-secrets.ts';

describe("fields_get's default answer", () => {
  it('leaves out false and empty attributes, and gives a long selection as its count', () => {
    const zones = Array.from({ length: MAX_DEFAULT_SELECTION + 1 }, (_, n) => [`Zone/${n}`, `Zone ${n}`]);
    const short = Array.from({ length: MAX_DEFAULT_SELECTION }, (_, n) => [`v${n}`, `V ${n}`]);
    expect(
      compactFields({
        name: {
          string: 'Name',
          type: 'char',
          required: true,
          readonly: false,
          relation: null,
          selection: [],
        },
        tz: { string: 'Timezone', type: 'selection', required: false, selection: zones },
        kind: { string: 'Kind', type: 'selection', selection: short },
        odd: 'not an object',
      }),
    ).toEqual({
      description: {
        name: { string: 'Name', type: 'char', required: true },
        tz: { string: 'Timezone', type: 'selection', selection_count: MAX_DEFAULT_SELECTION + 1 },
        kind: { string: 'Kind', type: 'selection', selection: short },
        odd: 'not an object',
      },
      cut: ['tz'],
    });
    expect(compactFields([1, 2])).toEqual({ description: [1, 2], cut: [] });
  });
});

describe('fitJson', () => {
  it('keeps a value that fits as it is, and counts its items', () => {
    expect(fitJson([1, 2, 3])).toEqual({ json: '[1,2,3]', total: 3 });
    expect(fitJson({ a: 1 })).toEqual({ json: '{"a":1}', total: 1 });
    expect(fitJson(42)).toEqual({ json: '42' });
    expect(fitJson(null)).toEqual({ json: 'null' });
    expect(fitJson(undefined)).toEqual({ json: 'null' });
  });

  it('cuts an array or an object by whole items, in order, to at most the limit', () => {
    const records = Array.from({ length: 10 }, (_, id) => ({ id, name: 'x'.repeat(20) }));
    const cut = fitJson(records, 100);
    expect(cut.json.length).toBeLessThanOrEqual(100);
    expect(JSON.parse(cut.json)).toEqual(records.slice(0, cut.kept));
    expect(cut).toMatchObject({ kept: 2, total: 10 });
    const fields = Object.fromEntries(records.map((record) => [`f${record.id}`, record]));
    const cutFields = fitJson(fields, 100);
    expect(cutFields.json.length).toBeLessThanOrEqual(100);
    expect(Object.keys(JSON.parse(cutFields.json))).toEqual(['f0', 'f1']);
    expect(cutFields).toMatchObject({ kept: 2, total: 10 });
  });

  it('keeps nothing of an array whose first item alone is too large, and says so', () => {
    expect(fitJson(['y'.repeat(200), 1], 100)).toEqual({ json: '[]', kept: 0, total: 2 });
  });

  it('cuts a long text to valid JSON within the limit, escapes included', () => {
    for (const text of ['a'.repeat(500), '"\\'.repeat(300), '\n'.repeat(300), 'é'.repeat(300)]) {
      const cut = fitJson(text, 101);
      expect(cut.json.length).toBeLessThanOrEqual(101);
      const kept = JSON.parse(cut.json) as string;
      expect(text.startsWith(kept)).toBe(true);
      expect(cut.kept).toBe(kept.length);
      expect(cut.total).toBe(text.length);
    }
  });

  it('cuts at the documented size by default', () => {
    const cut = fitJson(Array.from({ length: 100 }, () => 'z'.repeat(1000)));
    expect(cut.json.length).toBeLessThanOrEqual(MAX_RESULT_CHARS);
    expect(cut.kept).toBe(49);
  });
});

describe('failure results', () => {
  it('carry the ERP code, message and exception name, with advice for each code', () => {
    const failure = erpFailure(409, 'locked', { name: 'odoo.exceptions.LockError', debug: 'Traceback...' });
    expect(JSON.parse(failureJson(failure))).toEqual({
      error: {
        source: 'erp',
        code: 409,
        name: 'odoo.exceptions.LockError',
        message: 'locked',
        retry_safe: true,
        retry_can_help: true,
        retry: expect.stringMatching(/^Another transaction holds the record .* Retry after a short wait\./),
      },
    });
    expect(failureJson(failure)).not.toContain('Traceback');
    for (const code of [401, 403, 404, 422]) {
      expect(erpFailure(code, 'm', {}).retry, String(code)).toMatch(/nothing was changed/);
    }
    expect(erpFailure(401, 'm', {}).retry).toMatch(/x-erp-api-key/);
    expect(erpFailure(422, 'm'.repeat(5000), { name: 'n'.repeat(300) })).toMatchObject({
      message: `${'m'.repeat(2048)}…`,
      name: `${'n'.repeat(256)}…`,
    });
    const server = erpFailure(500, 'boom', 'not an object');
    expect(server.name).toBeUndefined();
    expect(server.retry).toMatch(/^The ERP failed while running the call/);
    expect(JSON.parse(failureJson(server)).error).not.toHaveProperty('name');
  });

  it('say whether retrying a proxy error is safe and whether it can help, by the code and whether the tool writes', () => {
    expect(proxyFailure(new UpstreamUnavailableError('busy'), false)).toMatchObject({
      code: -32004,
      retrySafe: true,
      retryCanHelp: true,
      retry: expect.stringMatching(/did not run\. Retrying after a short wait is safe and may succeed/),
    });
    // Did not run, and only the user's configuration or the operator can change it.
    for (const error of [
      new TargetRefusedError('no'),
      new Json2UnavailableError('no'),
      new InvalidRequestError('The x-erp-db header is missing.'),
    ]) {
      expect(error.row.callRan).toBe('no');
      expect(proxyFailure(error, false), error.message).toMatchObject({
        retrySafe: true,
        retryCanHelp: false,
        retry: expect.stringMatching(
          /did not run\. .*Retrying cannot help, and the model cannot change this: tell the user/,
        ),
      });
    }
    // Did not run, and the model can fix the call.
    expect(proxyFailure(new InvalidRequestError('kwargs.x is not allowed'), false)).toMatchObject({
      retrySafe: true,
      retryCanHelp: false,
      retry: expect.stringMatching(/fails the same way: fix what the message says first/),
    });
    // A timeout: a read may be retried and may then succeed; a write must be checked first.
    expect(proxyFailure(new UpstreamTimeoutError('slow'), true)).toMatchObject({
      retrySafe: true,
      retryCanHelp: true,
      retry: expect.stringMatching(/only reads: retrying is safe.*asking for less/),
    });
    expect(proxyFailure(new UpstreamTimeoutError('slow'), false)).toMatchObject({
      retrySafe: false,
      retryCanHelp: false,
      retry: expect.stringMatching(/may happen twice/),
    });
    // Not an ERP answer: a read is safe to repeat, but repeating never helps (the URL is wrong).
    expect(proxyFailure(new BadUpstreamResponseError('html'), true)).toMatchObject({
      retrySafe: true,
      retryCanHelp: false,
      retry: expect.stringMatching(/tell the user to check the x-erp-url header/),
    });
    expect(proxyFailure(new BadUpstreamResponseError('html'), false)).toMatchObject({
      retrySafe: false,
      retryCanHelp: false,
      retry: expect.stringMatching(/The call may have run: check the records/),
    });
    // Idempotency, said for an agent: its key is an argument, its request a tool call on a connection.
    const reused = proxyFailure(
      new IdempotencyKeyReusedError(
        'This Idempotency-Key was already used for a different request (another route, body or ERP): nothing ran. Use a new key for a new operation.',
      ),
      false,
    );
    expect(reused).toMatchObject({
      code: -32011,
      retrySafe: true,
      retryCanHelp: false,
      message:
        'Nothing ran: this idempotency_key was already used for another call (another tool, other arguments, or another ERP connection).',
      retry: expect.stringMatching(/^Use a new idempotency_key for this new change\./),
    });
    expect(`${reused.message} ${reused.retry}`).not.toMatch(/route|body|Idempotency-Key/);
    expect(
      proxyFailure(
        new IdempotencyInProgressError('A call with this Idempotency-Key is still running.'),
        false,
      ).message,
    ).toBe('A call with this idempotency_key is still running.');
    expect(proxyFailure(new InternalError(), true)).toMatchObject({ retrySafe: true, retryCanHelp: false });
    expect(proxyFailure(new InternalError(), false)).toMatchObject({ retrySafe: false, retryCanHelp: false });
    // Ran: too large.
    expect(proxyFailure(new ResponseTooLargeError('big'), true)).toMatchObject({
      retrySafe: true,
      retryCanHelp: false,
      retry: expect.stringMatching(/ask for less/),
    });
    expect(proxyFailure(new ResponseTooLargeError('big'), false)).toMatchObject({
      retrySafe: false,
      retryCanHelp: false,
      retry: expect.stringMatching(/do not call it again/),
    });
    // A bug shows nothing of itself.
    expect(proxyFailure(new InternalError(new Error('secret detail')), true).message).toBe(
      'Internal error (a bug of the proxy; its logs have the details).',
    );
    expect(PROXY_ERRORS.internal.callRan).toBe('maybe');
  });

  it('never suggests retrying what cannot change, nor asks the model to change what only its user or an operator can', () => {
    const errors = [
      new UpstreamUnavailableError('busy'),
      new UpstreamTimeoutError(
        'The ERP at h did not answer within 1 s. x Raise x-request-timeout for slow calls.',
      ),
      new BadUpstreamResponseError('html'),
      new TargetRefusedError('no'),
      new Json2UnavailableError('no'),
      new InvalidRequestError('The x-erp-url header is missing.'),
      new InvalidRequestError('bad kwargs'),
      new ResponseTooLargeError('big'),
      new InternalError(),
    ];
    for (const readOnly of [true, false]) {
      for (const error of errors) {
        const failure = proxyFailure(error, readOnly);
        const words = `${failure.message} ${failure.retry}`;
        if (!failure.retryCanHelp)
          expect(failure.retry, error.message).not.toMatch(/\b(Retry|retry) (after|shortly|later)/);
        // The time limit is the client's configuration: the model is never told to raise a header.
        expect(words, error.message).not.toMatch(
          /[Rr]aise x-request-timeout|[Ss]et the x-erp-[a-z-]+ header/,
        );
      }
    }
    for (const code of [401, 403, 404, 422, 500]) {
      expect(erpFailure(code, 'm', {}).retryCanHelp, String(code)).toBe(false);
      expect(erpFailure(code, 'm', {}).retry, String(code)).not.toMatch(/Retry after/);
    }
    expect(erpFailure(409, 'm', {}).retryCanHelp).toBe(true);
    expect(erpFailure(401, 'm', {}).retry).toMatch(/tell the user that the x-erp-api-key header/);
  });

  it("put the proxy's messages in an MCP client's words: headers, not erp_instance fields", () => {
    expect(
      mcpWording(
        'Check erp_instance.url. Fix erp_instance.db; add erp_instance.user_id, not erp_instance.api_key',
      ),
    ).toBe(
      'Check the x-erp-url header. Fix the x-erp-db header; add the x-erp-user-id header, not the x-erp-api-key header',
    );
    expect(
      mcpWording('like an ERP. Check the URL (url on the version endpoints, erp_instance.url on execute).'),
    ).toBe('like an ERP. Check the URL (the x-erp-url header).');
    expect(mcpWording('The ERP is older than 19 (use v1) or the database could not be selected.')).toBe(
      'The ERP is older than 19 or the database could not be selected.',
    );
    expect(
      mcpWording(
        '"limit" is given both in params and in keyword. Pass the arguments by name in keyword, or call v2 (/v2/erp/execute) with named kwargs.',
      ),
    ).toBe(
      '"limit" is given both in args and in kwargs. Pass the arguments by name in kwargs instead of args.',
    );
  });
});

describe('the connection headers', () => {
  const headers = (extra: Partial<ErpHeaders> = {}): ErpHeaders => ({
    url: 'https://erp.example.com',
    db: 'prod',
    apiKey: 'a'.repeat(40),
    userId: undefined,
    ...extra,
  });
  const fromHeaders = (extra: Partial<ErpHeaders> = {}): McpErp => ({
    from: 'headers',
    headers: headers(extra),
  });

  it('give a checked connection, trimmed, with the user id when given', () => {
    expect(erpConnection(fromHeaders({ db: ' prod ', userId: ' 7 ' }), TEST_PROXY_KEY)).toEqual({
      baseUrl: new URL('https://erp.example.com'),
      db: 'prod',
      apiKey: 'a'.repeat(40),
      uid: 7,
    });
    expect(erpConnection(fromHeaders({ userId: '' }), undefined).uid).toBeUndefined();
  });

  it('name what is missing or wrong, and never echo the key', () => {
    const problem = (extra: Partial<ErpHeaders>) => {
      try {
        erpConnection(fromHeaders(extra), TEST_PROXY_KEY);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidRequestError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(problem({ url: undefined, db: undefined })).toMatch(/the x-erp-url, x-erp-db headers are missing/);
    expect(problem({ url: ' ', db: 'prod' })).toMatch(/the x-erp-url header is missing/);
    expect(problem({ db: '' })).toMatch(/^The x-erp-db header is missing\./);
    expect(problem({ db: undefined, apiKey: undefined })).toMatch(
      /^The x-erp-db and x-erp-api-key headers are missing\./,
    );
    expect(problem({ url: 'https://erp.example.com/?db=x' })).toMatch(/without query or fragment/);
    expect(problem({ db: 'd'.repeat(5000) })).toMatch(/longer than 4096 characters/);
    expect(problem({ apiKey: 'key with\u0001control' })).toMatch(/must hold the ERP user's API key/);
    expect(problem({ apiKey: 'key with\u0001control' })).not.toContain('control');
    expect(problem({ userId: '0' })).toMatch(/x-erp-user-id header must be the ERP user's id/);
    expect(problem({ userId: '2.5' })).toMatch(/x-erp-user-id header/);
    expect(problem({ apiKey: TEST_PROXY_KEY })).toMatch(/holds the proxy key/);
    expect(problem({ apiKey: TEST_PROXY_KEY })).not.toContain(TEST_PROXY_KEY);
    expect(erpUrl(fromHeaders({ db: undefined })).href).toBe('https://erp.example.com/');
  });
});

describe('the proxy key of a request', () => {
  const event = (headers: Record<string, string>) => ({ headers }) as unknown as ProxyEvent;

  it('is x-api-key, else (on /mcp) the bearer token', () => {
    expect(
      presentedProxyKey(event({ 'x-api-key': 'k1', authorization: 'Bearer k2' }), { bearer: true }),
    ).toEqual({
      kind: 'key',
      key: 'k1',
      header: 'x-api-key',
    });
    expect(presentedProxyKey(event({ authorization: 'BEARER  k2 ' }), { bearer: true })).toEqual({
      kind: 'key',
      key: 'k2',
      header: 'Authorization: Bearer',
    });
    expect(presentedProxyKey(event({ authorization: 'Bearer k2' }))).toBeUndefined();
    expect(presentedProxyKey(event({ authorization: 'Basic k2' }), { bearer: true })).toBeUndefined();
    expect(presentedProxyKey(event({ authorization: 'Bearer' }), { bearer: true })).toBeUndefined();
    expect(presentedProxyKey({} as ProxyEvent, { bearer: true })).toBeUndefined();
  });

  it('read once as a credential: a JWT bearer is an access token only with OAuth on; x-api-key wins', () => {
    const jwt = `${Buffer.from('{"alg":"ES256"}').toString('base64url')}.e30.c2ln`;
    expect(presentedCredential({ authorization: `Bearer ${jwt}` }, { bearer: true, tokens: true })).toEqual({
      kind: 'token',
      token: jwt,
    });
    expect(presentedCredential({ authorization: `Bearer ${jwt}` }, { bearer: true })).toEqual({
      kind: 'key',
      key: jwt,
      header: 'Authorization: Bearer',
    });
    expect(
      presentedCredential(
        { 'x-api-key': 'k1', authorization: `Bearer ${jwt}` },
        { bearer: true, tokens: true },
      ),
    ).toEqual({ kind: 'key', key: 'k1', header: 'x-api-key' });
    expect(presentedCredential({ authorization: 'Bearer k2' }, { bearer: true, tokens: true })).toMatchObject(
      {
        kind: 'key',
        key: 'k2',
      },
    );
  });
});

describe('the tools', () => {
  it('are declared once each, the write tools flagged as such, each description one line', () => {
    const names = TOOLS.map((tool) => tool.name);
    expect(new Set(names).size).toBe(names.length);
    expect(TOOLS.filter((tool) => tool.writes).map((tool) => tool.name)).toEqual([
      'create',
      'write',
      'unlink',
      'call_method',
    ]);
    for (const tool of TOOLS) {
      expect(tool.description, tool.name).not.toContain('\n');
      expect(tool.annotations.readOnlyHint, tool.name).toBe(!tool.writes);
    }
  });
});

describe('a bug inside a tool', () => {
  it("is the tool's result (-32603, nothing of the bug shown), kept for the log line", async () => {
    const broken = {
      call: () => Promise.reject(new TypeError('cannot read properties of undefined (secret)')),
    };
    const deps = mcpDeps(false, broken);
    const message = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'search_count', arguments: { model: 'res.partner' } },
    };
    const inbound: McpInbound = {
      keyPolicy: undefined,
      body: { ok: true, value: message, members: new Map(), tooDeep: false },
      protocolHeaders: {
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-protocol-version': '2025-11-25',
      },
      erp: {
        from: 'headers',
        headers: { url: 'http://127.0.0.1:9', db: 'erp_a', apiKey: 'b'.repeat(40), userId: '2' },
      },
      identity: { kind: 'key', name: 'test' },
      envelopeId: null,
      presentedProxyKey: TEST_PROXY_KEY,
      requestTimeout: undefined,
      responseEncoding: undefined,
      sourceIp: '127.0.0.1',
      remainingMs: undefined,
    };
    const { response, facts: state } = await serveMcp(inbound, deps);
    expect(response.statusCode).toBe(200);
    const result = (
      JSON.parse(response.body) as { result: { isError: boolean; content: { text: string }[] } }
    ).result;
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content[0]?.text ?? '')).toMatchObject({
      error: { source: 'proxy', code: -32603 },
    });
    expect(response.body).not.toContain('secret');
    expect(state).toMatchObject({
      outcome: 'proxy_error',
      errorCode: -32603,
      tool: 'search_count',
      mcpMethod: 'tools/call',
    });
    expect(state.internalError).toBeInstanceOf(TypeError);
  });
});

describe('the route of /mcp', () => {
  it('reaches the mcp function for POST, and for GET and DELETE (answered 405), under their own route keys', () => {
    const mcp = ROUTES.find((route) => route.path === '/mcp');
    expect(mcp && routeKeys(mcp)).toEqual(['POST /mcp', 'GET /mcp', 'DELETE /mcp']);
    expect(matchRoute('POST', '/mcp')).toMatchObject({ key: 'POST /mcp', route: { fn: 'mcp' } });
    expect(matchRoute('GET', '/mcp')).toMatchObject({ key: 'GET /mcp', route: { fn: 'mcp' } });
    expect(matchRoute('DELETE', '/mcp')).toMatchObject({ key: 'DELETE /mcp', route: { fn: 'mcp' } });
    expect(matchRoute('PUT', '/mcp')).toBeUndefined();
    expect(matchRoute('DELETE', '/_/about')).toBeUndefined();
    expect(matchRoute('GET', '/_/about')).toMatchObject({ key: 'GET /_/about', route: { fn: 'aux' } });
    // The specification's nine routes refuse no method of their own.
    expect(ROUTES.filter((route) => route.refusedMethods !== undefined).map((route) => route.path)).toEqual([
      '/mcp',
    ]);
  });
});

describe('the aggregate tool', () => {
  const aggregate = TOOLS.find((tool) => tool.name === 'aggregate');
  /**
   * An ERP of this version that answers `answer(method, kwargs)`, recording the requests sent; the
   * tool's run gets the requests its declaration made with this version.
   */
  function fakeErp(version: string, answer: (method: string, kwargs: Record<string, unknown>) => unknown) {
    const calls: { method: string; kwargs: Readonly<Record<string, unknown>> }[] = [];
    const facts = { erpHost: 'erp.test', erpDb: 'db' };
    const lookups: ToolLookups = {
      version: async () => ({ version, version_info: [Number(version.split('.')[0]), 0, 0, 'final', 0, ''] }),
      fieldsToRead: async (_model, given) => given,
    };
    const erp = {
      send: async (request: ToolRequest) => {
        calls.push({ method: request.method, kwargs: request.kwargs });
        return {
          value: answer(request.method, request.kwargs as Record<string, unknown>),
          facts: { ...facts, model: request.model, action: request.method },
        };
      },
    };
    const run = async (args: unknown) => {
      const tool = aggregate as NonNullable<typeof aggregate>;
      return tool.run(args as never, erp as unknown as ErpAccess, await tool.declare(args as never, lookups));
    };
    return { run, calls };
  }
  const args = {
    model: 'sale.order',
    group_by: ['partner_id', 'date_order:month'],
    aggregates: ['amount_total:sum', 'amount_total:avg'],
    order: 'amount_total:sum desc, count',
    limit: 2,
  };

  it('uses formatted_read_group on ERP 19+, with its aggregate names and order', async () => {
    const { run, calls } = fakeErp('19.0', () => [
      {
        partner_id: [7, 'Azure'],
        'date_order:month': 'May 2026',
        __extra_domain: [],
        __count: 3,
        'amount_total:sum': 30,
        'amount_total:avg': 10,
      },
    ]);
    const answer = await run(args);
    expect(calls).toEqual([
      {
        method: 'formatted_read_group',
        kwargs: {
          domain: [],
          groupby: ['partner_id', 'date_order:month'],
          aggregates: ['__count', 'amount_total:sum', 'amount_total:avg'],
          offset: 0,
          limit: 2,
          order: 'amount_total:sum desc, __count',
          context: { bin_size: true },
        },
      },
    ]);
    expect(answer?.structured).toEqual({
      groups: [
        {
          partner_id: [7, 'Azure'],
          'date_order:month': 'May 2026',
          count: 3,
          'amount_total:sum': 30,
          'amount_total:avg': 10,
        },
      ],
    });
  });

  it('uses read_group (not lazy, aliased aggregates) on ERP 16-18, and on 19+ without formatted_read_group', async () => {
    const row = {
      partner_id: false,
      'date_order:month': 'May 2026',
      __count: 2,
      aggregate_0: 5,
      aggregate_1: 2.5,
      __domain: [],
    };
    for (const [version, methods] of [
      ['17.0', ['read_group']],
      ['19.0', ['formatted_read_group', 'read_group']],
    ] as const) {
      const { run, calls } = fakeErp(version, (method) => {
        if (method === 'formatted_read_group') throw new ErpCallError(404, 'no such method', {});
        return [row, row];
      });
      const answer = await run(args);
      expect(calls.map((call) => call.method)).toEqual(methods);
      // The answer carries the facts of the ERP call it comes from: the last one.
      expect(answer?.facts).toEqual({
        erpHost: 'erp.test',
        erpDb: 'db',
        model: 'sale.order',
        action: methods.at(-1),
      });
      expect(calls.at(-1)?.kwargs).toEqual({
        domain: [],
        fields: ['aggregate_0:sum(amount_total)', 'aggregate_1:avg(amount_total)', 'record_count:count(id)'],
        groupby: ['partner_id', 'date_order:month'],
        offset: 0,
        limit: 2,
        orderby: 'aggregate_0 desc, record_count',
        lazy: false,
        context: { bin_size: true },
      });
      const group = {
        partner_id: false,
        'date_order:month': 'May 2026',
        count: 2,
        'amount_total:sum': 5,
        'amount_total:avg': 2.5,
      };
      expect(answer?.structured).toEqual({ groups: [group, group], next_offset: 2 });
      expect(answer?.note).toMatch(
        /^2 groups, the limit: more may match\. Call aggregate again with offset=2/,
      );
    }
  });

  it('passes on an ERP error other than a missing formatted_read_group', async () => {
    const { run, calls } = fakeErp('19.0', () => {
      throw new ErpCallError(403, 'denied', {});
    });
    await expect(run(args)).rejects.toThrow('denied');
    expect(calls.map((call) => call.method)).toEqual(['formatted_read_group']);
  });
});
