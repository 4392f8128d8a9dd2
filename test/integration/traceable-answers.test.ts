/**
 * Every answer traceable (issue 58, items 5-7), over real HTTP: the local proxy in front of the ERP
 * double, which records the headers each ERP request arrived with.
 *
 * - `Request-Id` on every answer, the functions' (execute, version, MCP, operator, errors
 *   included) and the local server's own (404, 413), equal to `apigw-requestid`, to the log line's
 *   `request_id` and to the audit record's;
 * - a caller's W3C `traceparent` continued to each ERP request (v1, v2, version, MCP; `_meta` over
 *   the header), an invalid one ignored with its `tracestate`, a trace started without one, never
 *   `baggage`; the trace id in the log line and the audit record;
 * - `Server-Timing` on execute and MCP answers (`erp`, `store`, `proxy`), none with
 *   `SERVER_TIMING=off`;
 * - the typed client's request id and timing, on results (`onAnswer`) and errors.
 */
import { describe, expect, it } from 'vitest';
import { ErpError, ErpProxy, ErpProxyError } from '../../client/src/index.ts';
import type { AnswerInfo } from '../../client/src/types.ts';
import type { AuditRecord } from '../../lambdas/platform/audit/audit-record.ts';
import { type ErpDouble, startErpDouble } from '../erp-double/index.ts';
import type { RecordedRequest } from '../erp-double/types.ts';
import { logLinesDuring } from '../support/captured-output.ts';
import { USERS, useErpDouble, useProxy, withProxy } from '../support/fixtures.ts';
import { erpHeaders, MODERN_VERSION } from '../support/mcp-client.ts';
import type { HttpAnswer } from '../support/proxy-harness.ts';

const admin = USERS.adminA;
const KEYS = {
  writer: 'trace-writer-key-0123456789abcdef',
  auditor: 'trace-auditor-key-0123456789abcdef',
} as const;
const ENV = {
  PROXY_API_KEY: '',
  PROXY_API_KEYS: JSON.stringify({
    keys: [
      { name: 'writer', key: KEYS.writer },
      { name: 'auditor', key: KEYS.auditor, policy: { apis: ['audit', 'operator'] } },
    ],
  }),
  MCP_WRITE_TOOLS: 'true',
};

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const PARENT_ID = 'b7ad6b7169203331';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;
const META_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const META_TRACEPARENT = `00-${META_TRACE_ID}-00f067aa0ba902b7-00`;
const CALLER_TRACE = {
  traceparent: TRACEPARENT,
  tracestate: 'congo=t61rcWkgMzE',
  baggage: 'userId=alice',
};

/** The answer's `Request-Id`, checked to be the one API Gateway's header names. */
function requestIdOf(answer: HttpAnswer): string {
  const id = answer.headers.get('request-id');
  expect(id, `${answer.status} ${answer.text.slice(0, 200)}`).toMatch(/^[\da-f-]{36}$/);
  expect(answer.headers.get('apigw-requestid')).toBe(id);
  return id as string;
}

/** The request log line of what `act` sends (the last one), and what `act` returned. */
async function logged<T>(act: () => Promise<T>): Promise<{ value: T; line: Record<string, unknown> }> {
  let value: T | undefined;
  const lines = await logLinesDuring(async () => {
    value = await act();
  });
  const requests = lines
    .map((text) => JSON.parse(text) as Record<string, unknown>)
    .filter((entry) => entry.message === 'request');
  expect(requests.length).toBeGreaterThan(0);
  return { value: value as T, line: requests.at(-1) as Record<string, unknown> };
}

/** The `traceparent`s of ERP requests, parsed; every one checked to continue `traceId` with `flags`. */
function continued(requests: readonly RecordedRequest[], traceId: string, flags: string): string[] {
  expect(requests.length).toBeGreaterThan(0);
  return requests.map((request) => {
    const traceparent = request.headers.traceparent as string;
    expect(traceparent, `${request.method} ${request.path}`).toMatch(
      new RegExp(`^00-${traceId}-[\\da-f]{16}-${flags}$`),
    );
    expect(request.headers).not.toHaveProperty('baggage');
    return traceparent.slice(36, 52);
  });
}

describe('traceable answers', () => {
  const double = useErpDouble({ mode: '19' });
  const proxy = useProxy({ env: ENV });
  const instance = () => ({ url: double.url, db: 'erp_a', user_id: admin.uid, api_key: admin.apiKey });
  const v1Count = { id: 'v1', action: 'search_count', model_id: 'res.partner', params: [[]] };
  const v2Count = { id: 'v2', model_id: 'res.partner', method: 'search_count', kwargs: { domain: [] } };
  const asWriter = (headers: Record<string, string> = {}) => ({ 'x-api-key': KEYS.writer, ...headers });
  const mcpHeaders = (method: string, name?: string, headers: Record<string, string> = {}) => ({
    ...asWriter(headers),
    ...erpHeaders({ url: double.url, db: 'erp_a', apiKey: admin.apiKey, uid: admin.uid }),
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN_VERSION,
    'mcp-method': method,
    ...(name === undefined ? {} : { 'mcp-name': name }),
  });
  /** A 2026-07-28 `tools/call`, its `_meta` with `meta` too. */
  const toolCall = (name: string, args: Record<string, unknown>, meta: Record<string, unknown> = {}) => ({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name,
      arguments: args,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
        ...meta,
      },
    },
  });
  /** The audit record `GET /_/audit` has under `auditId`. */
  const auditRecord = async (auditId: unknown): Promise<AuditRecord> => {
    const answer = await proxy.get('/_/audit?limit=1000', { 'x-api-key': KEYS.auditor });
    expect(answer.status).toBe(200);
    const records = (answer.json as { records: AuditRecord[] }).records;
    const record = records.find((candidate) => candidate.audit_id === auditId);
    expect(record, String(auditId)).toBeDefined();
    return record as AuditRecord;
  };

  it("names every answer, errors and the local server's own included, each with an id of its own", async () => {
    const answers: [string, HttpAnswer, number][] = [
      ['v1', await proxy.post('/api/erp/execute', { ...v1Count, erp_instance: instance() }, asWriter()), 200],
      ['v2', await proxy.post('/v2/erp/execute', { ...v2Count, erp_instance: instance() }, asWriter()), 200],
      ['version v1', await proxy.post('/api/erp/version', { id: 'v', url: double.url }, asWriter()), 200],
      ['version v2', await proxy.post('/v2/erp/version', { id: 'v', url: double.url }, asWriter()), 200],
      [
        'a wrong key',
        await proxy.post('/v2/erp/execute', v2Count, { 'x-api-key': 'not-a-key-0123456789' }),
        401,
      ],
      ['v1 not JSON', await proxy.post('/api/erp/execute', '{"id":', asWriter()), 400],
      ['v2 bad body', await proxy.post('/v2/erp/execute', { ...v2Count, kwargs: [] }, asWriter()), 400],
      [
        'mcp',
        await proxy.post(
          '/mcp',
          toolCall('search_count', { model: 'res.partner' }),
          mcpHeaders('tools/call', 'search_count'),
        ),
        200,
      ],
      ['mcp 406', await proxy.post('/mcp', toolCall('search_count', {}), asWriter()), 406],
      ['mcp GET', await proxy.get('/mcp', asWriter()), 405],
      ['about', await proxy.get('/_/about'), 200],
      ['license without a key', await proxy.get('/_/license'), 401],
      ['metrics', await proxy.get('/_/metrics', { 'x-api-key': KEYS.auditor }), 200],
      ['an unknown route', await proxy.get('/nowhere'), 404],
      [
        'a body over 6 MB',
        await proxy.post('/api/erp/execute', `"${'x'.repeat(6 * 1024 * 1024)}"`, asWriter()),
        413,
      ],
    ];
    const ids = new Set<string>();
    for (const [what, answer, status] of answers) {
      expect(answer.status, what).toBe(status);
      ids.add(requestIdOf(answer));
    }
    expect(ids.size).toBe(answers.length);
  });

  it("gives the log line's request_id and the audit record's, and the caller's trace id to both", async () => {
    const { value: answer, line } = await logged(() =>
      proxy.post(
        '/v2/erp/execute',
        {
          id: 'w',
          model_id: 'res.partner',
          method: 'create',
          kwargs: { vals_list: [{ name: 'Traced Ltd' }] },
          erp_instance: instance(),
        },
        asWriter(CALLER_TRACE),
      ),
    );
    expect(answer.status).toBe(200);
    const requestId = requestIdOf(answer);
    expect(line).toMatchObject({ request_id: requestId, trace_id: TRACE_ID });
    const record = await auditRecord(line.audit_id);
    expect(record).toMatchObject({ request_id: requestId, trace_id: TRACE_ID, outcome: 'ok' });
  });

  it("continues the caller's trace to each ERP request of v1, v2 and the version endpoints, with its tracestate, never its baggage", async () => {
    // An ERP 16 the proxy has not asked yet: its version is asked twice (`/web/version`, then `/jsonrpc`).
    const older = await startErpDouble({ mode: '16' });
    const calls: [ErpDouble, () => Promise<HttpAnswer>][] = [
      [
        double,
        () =>
          proxy.post('/api/erp/execute', { ...v1Count, erp_instance: instance() }, asWriter(CALLER_TRACE)),
      ],
      [
        double,
        () => proxy.post('/v2/erp/execute', { ...v2Count, erp_instance: instance() }, asWriter(CALLER_TRACE)),
      ],
      [older, () => proxy.post('/v2/erp/version', { id: 'v', url: older.url }, asWriter(CALLER_TRACE))],
    ];
    const spans: string[] = [];
    try {
      for (const [erp, call] of calls) {
        erp.reset();
        const { value: answer, line } = await logged(call);
        expect(answer.status, answer.text).toBe(200);
        expect(line.trace_id).toBe(TRACE_ID);
        spans.push(...continued(erp.requests, TRACE_ID, '01'));
        for (const request of erp.requests) expect(request.headers.tracestate).toBe(CALLER_TRACE.tracestate);
      }
      expect(older.requests.map((request) => request.path)).toEqual(['/web/version', '/jsonrpc']);
    } finally {
      await older.close();
    }
    // A new span id per ERP request, never the caller's.
    expect(new Set(spans).size).toBe(spans.length);
    expect(spans).not.toContain(PARENT_ID);
  });

  it("continues an MCP tool call's trace: `_meta.traceparent` wins over the header, and the audit record names it", async () => {
    double.reset();
    const { value: byHeader, line: headerLine } = await logged(() =>
      proxy.post(
        '/mcp',
        toolCall('search_count', { model: 'res.partner' }),
        mcpHeaders('tools/call', 'search_count', CALLER_TRACE),
      ),
    );
    expect(byHeader.status).toBe(200);
    expect(headerLine.trace_id).toBe(TRACE_ID);
    continued(double.requests, TRACE_ID, '01');

    double.reset();
    const { value: byMeta, line: metaLine } = await logged(() =>
      proxy.post(
        '/mcp',
        toolCall(
          'create',
          { model: 'res.partner', values: { name: 'Meta Ltd' } },
          {
            traceparent: META_TRACEPARENT,
            tracestate: 'rojo=00f067aa0ba902b7',
          },
        ),
        mcpHeaders('tools/call', 'create', CALLER_TRACE),
      ),
    );
    expect(byMeta.status).toBe(200);
    expect((byMeta.json as { result: { isError?: boolean } }).result.isError).not.toBe(true);
    expect(metaLine.trace_id).toBe(META_TRACE_ID);
    continued(double.requests, META_TRACE_ID, '00');
    for (const request of double.requests) expect(request.headers.tracestate).toBe('rojo=00f067aa0ba902b7');
    expect(await auditRecord(metaLine.audit_id)).toMatchObject({
      request_id: requestIdOf(byMeta),
      trace_id: META_TRACE_ID,
    });

    // An invalid `_meta.traceparent` is ignored: the header's trace goes on.
    double.reset();
    await proxy.post(
      '/mcp',
      toolCall('search_count', { model: 'res.partner' }, { traceparent: META_TRACEPARENT.toUpperCase() }),
      mcpHeaders('tools/call', 'search_count', CALLER_TRACE),
    );
    continued(double.requests, TRACE_ID, '01');
  });

  it('ignores an invalid traceparent with its tracestate, and starts a trace (flags 01) as without one', async () => {
    const invalid: Record<string, string>[] = [
      { traceparent: `00-${'0'.repeat(32)}-${PARENT_ID}-01`, tracestate: 'congo=t61rcWkgMzE' },
      { traceparent: TRACEPARENT.toUpperCase(), tracestate: 'congo=t61rcWkgMzE' },
      { traceparent: `${TRACEPARENT}-extra` },
      {},
    ];
    for (const traceHeaders of invalid) {
      double.reset();
      const { value: answer, line } = await logged(() =>
        proxy.post('/v2/erp/execute', { ...v2Count, erp_instance: instance() }, asWriter(traceHeaders)),
      );
      expect(answer.status, JSON.stringify(traceHeaders)).toBe(200);
      const started = line.trace_id as string;
      expect(started).toMatch(/^[\da-f]{32}$/);
      expect(started).not.toBe(TRACE_ID);
      continued(double.requests, started, '01');
      for (const request of double.requests) expect(request.headers).not.toHaveProperty('tracestate');
    }
  });

  it('passes on a tracestate of up to 512 characters, and drops a longer one', async () => {
    for (const [tracestate, passed] of [
      [`a=${'x'.repeat(510)}`, true],
      [`a=${'x'.repeat(511)}`, false],
    ] as const) {
      double.reset();
      await proxy.post(
        '/v2/erp/execute',
        { ...v2Count, erp_instance: instance() },
        asWriter({ traceparent: TRACEPARENT, tracestate }),
      );
      continued(double.requests, TRACE_ID, '01');
      expect(double.requests[0]?.headers.tracestate).toBe(passed ? tracestate : undefined);
    }
  });

  it('says where the time went on execute and MCP answers: erp, store when used, proxy', async () => {
    const timing = (answer: HttpAnswer) => answer.headers.get('server-timing') ?? '';
    const read = await proxy.post('/api/erp/execute', { ...v1Count, erp_instance: instance() }, asWriter());
    expect(timing(read)).toMatch(/^erp;dur=[\d.]+, proxy;dur=[\d.]+$/);
    const write = await proxy.post(
      '/v2/erp/execute',
      {
        id: 'w',
        model_id: 'res.partner',
        method: 'create',
        kwargs: { vals_list: [{ name: 'Timed' }] },
        erp_instance: instance(),
      },
      asWriter({ 'idempotency-key': `timed-${Date.now()}` }),
    );
    expect(write.status).toBe(200);
    // The idempotency record and the audit record: the store's part.
    expect(timing(write)).toMatch(/^erp;dur=[\d.]+, store;dur=[\d.]+, proxy;dur=[\d.]+$/);
    const mcp = await proxy.post(
      '/mcp',
      toolCall('search_count', { model: 'res.partner' }),
      mcpHeaders('tools/call', 'search_count'),
    );
    expect(timing(mcp)).toMatch(/^erp;dur=[\d.]+, proxy;dur=[\d.]+$/);
    // A refusal before the ERP: the proxy's part only.
    const refused = await proxy.post('/v2/erp/execute', { ...v2Count, kwargs: [] }, asWriter());
    expect(timing(refused)).toMatch(/^proxy;dur=[\d.]+$/);
    // Not on the version and operator endpoints.
    expect(timing(await proxy.post('/v2/erp/version', { id: 'v', url: double.url }, asWriter()))).toBe('');
    expect(timing(await proxy.get('/_/about'))).toBe('');
  });

  it('leaves Server-Timing out with SERVER_TIMING=off, and still names every answer', async () => {
    await withProxy({ env: { ...ENV, SERVER_TIMING: 'off' } }, async (quiet) => {
      const answers = [
        await quiet.post('/api/erp/execute', { ...v1Count, erp_instance: instance() }, asWriter()),
        await quiet.post('/v2/erp/execute', { ...v2Count, erp_instance: instance() }, asWriter()),
        await quiet.post(
          '/mcp',
          toolCall('search_count', { model: 'res.partner' }),
          mcpHeaders('tools/call', 'search_count'),
        ),
      ];
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(answer.headers.get('server-timing')).toBeNull();
        requestIdOf(answer);
      }
    });
  });

  it('the typed client gives the request id and the timing on results (onAnswer) and on errors', async () => {
    const seen: AnswerInfo[] = [];
    const client = new ErpProxy({
      url: proxy.url,
      apiKey: KEYS.writer,
      onAnswer: (answer) => seen.push(answer),
    });
    const erp = client.erp({ url: double.url, db: 'erp_a', apiKey: admin.apiKey, userId: admin.uid });
    const perCall: AnswerInfo[] = [];
    const { line } = await logged(() =>
      erp.searchCount('res.partner', [], { onAnswer: (answer) => perCall.push(answer) }),
    );
    const answer = perCall[0] as AnswerInfo;
    expect(perCall).toHaveLength(1);
    expect(seen.at(-1)).toEqual(answer);
    expect(answer).toMatchObject({ requestId: line.request_id, httpStatus: 200 });
    expect(answer.serverTiming).toEqual({ erp: expect.any(Number), proxy: expect.any(Number) });

    const erpError = await erp.searchCount('no.such.model').catch((error: unknown) => error);
    expect(erpError).toBeInstanceOf(ErpError);
    expect((erpError as ErpError).requestId).toBe(seen.at(-1)?.requestId);
    expect((erpError as ErpError).serverTiming).toMatchObject({ erp: expect.any(Number) });

    const refused = await new ErpProxy({ url: proxy.url, apiKey: 'not-a-key-0123456789', retries: 0 })
      .erp({ url: double.url, db: 'erp_a', apiKey: admin.apiKey })
      .searchCount('res.partner')
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ErpProxyError);
    expect((refused as ErpProxyError).httpStatus).toBe(401);
    expect((refused as ErpProxyError).requestId).toMatch(/^[\da-f-]{36}$/);

    const gateway = await new ErpProxy({ url: `${proxy.url}/nowhere`, apiKey: KEYS.writer, retries: 0 })
      .v2({ ...v2Count, erp_instance: instance() })
      .catch((error: unknown) => error);
    expect(gateway).toBeInstanceOf(ErpProxyError);
    expect((gateway as ErpProxyError).httpStatus).toBe(404);
    expect((gateway as ErpProxyError).requestId).toMatch(/^[\da-f-]{36}$/);
  });
});
