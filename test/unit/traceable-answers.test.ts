/**
 * Every answer names itself and says where its time went (issue 58, items 5-7), in process:
 * observe's `Request-Id` and `Server-Timing` on a chain's answers (errors included), the log
 * line's `request_id` and `trace_id`, the store meter, and the `traceparent` each ERP request
 * carries (the request's trace continued through the call context, on both protocols and the
 * version lookups). Over real HTTP: test/integration/traceable-answers.test.ts.
 */

import { generateKeyPairSync } from 'node:crypto';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { withCallContext } from '../../lambdas/core/call-context.ts';
import type { InboundCall } from '../../lambdas/core/inbound-call.ts';
import { type ProxyContext, StoreMeter } from '../../lambdas/core/request-facts.ts';
import { observe, serverTimingOf } from '../../lambdas/middleware/observe.ts';
import { learn } from '../../lambdas/middleware/step.ts';
import { LocalMetricsStore } from '../../lambdas/operator/local-metrics-store.ts';
import { keyPairSigner, sealWindow, verifyWindows } from '../../lambdas/platform/audit/audit-chain.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';
import { UpstreamTimeoutError } from '../../lambdas/platform/errors.ts';
import { createLogger } from '../../lambdas/platform/logger.ts';
import { createMetrics } from '../../lambdas/platform/metrics/powertools.ts';
import { parseTraceparent, type TraceContext } from '../../lambdas/platform/trace-context.ts';
import type { HttpClient, UpstreamRequest } from '../../lambdas/upstream/http-client.ts';
import { Json2Transport } from '../../lambdas/upstream/json2-transport.ts';
import { JsonRpcTransport } from '../../lambdas/upstream/jsonrpc-transport.ts';
import { VersionClient } from '../../lambdas/upstream/version-client.ts';
import { auditRecord } from '../support/audit-records.ts';
import { captureLogLines } from '../support/captured-output.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

function event(headers: Record<string, string> = {}, requestId = 'apigw-req-58'): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: 'POST /v2/erp/execute',
    rawPath: '/v2/erp/execute',
    rawQueryString: '',
    headers,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: {
        method: 'POST',
        path: '/v2/erp/execute',
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: 't',
      },
      requestId,
      routeKey: 'POST /v2/erp/execute',
      stage: '$default',
      time: '21/Nov/2026:10:00:00 +0000',
      timeEpoch: 0,
    },
    isBase64Encoded: false,
  };
}

const context = (): ProxyContext => ({ awsRequestId: 'lambda-req-58' }) as unknown as ProxyContext;

type Handler = (event: APIGatewayProxyEventV2, context: ProxyContext) => Promise<APIGatewayProxyResultV2>;

/** observe, outermost, around `handler`; an error becomes a 504 as the envelope middleware would answer it. */
function chain(handler: Handler, serverTiming: boolean) {
  const config = loadConfig({});
  const metrics = createMetrics(config, { store: new LocalMetricsStore() });
  const errors: middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyResultV2, Error, ProxyContext> = {
    onError: (request) => {
      request.response = { statusCode: 504, headers: { 'content-type': 'application/json' }, body: '{}' };
    },
  };
  return middy<APIGatewayProxyEventV2, APIGatewayProxyResultV2, Error, ProxyContext>()
    .use(observe({ logger: createLogger(config), metrics, api: 'v2', serverTiming }))
    .use(errors)
    .handler(handler);
}

/** What observe gave the request (its trace and store meter), as a chain's steps see it. */
function observed(ctx: ProxyContext): { trace: TraceContext; storeMeter: StoreMeter } {
  return ctx.record?.values as { trace: TraceContext; storeMeter: StoreMeter };
}

describe("observe: the answer's Request-Id and Server-Timing, the log line's request and trace ids", () => {
  it("names the request on its answer with the log line's request_id, and the caller's trace in the log line", async () => {
    const lines = captureLogLines();
    let seen: TraceContext | undefined;
    const handle = chain(async (_event, ctx) => {
      seen = observed(ctx).trace;
      return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' };
    }, false);
    const response = (await handle(
      event({ traceparent: TRACEPARENT, tracestate: 'congo=t61' }),
      context(),
    )) as {
      headers: Record<string, string>;
    };
    expect(response.headers['request-id']).toBe('apigw-req-58');
    expect(response.headers).not.toHaveProperty('server-timing');
    expect(seen).toEqual({ traceId: TRACE_ID, flags: '01', state: 'congo=t61' });
    const line = lines().find((entry) => entry.message === 'request');
    expect(line).toMatchObject({ request_id: 'apigw-req-58', trace_id: TRACE_ID });
  });

  it('starts a trace for a request without a valid traceparent (ignoring its tracestate), logged', async () => {
    const lines = captureLogLines();
    let seen: TraceContext | undefined;
    const handle = chain(async (_event, ctx) => {
      seen = observed(ctx).trace;
      return { statusCode: 200, body: '{}' };
    }, false);
    await handle(event({ traceparent: TRACEPARENT.toUpperCase(), tracestate: 'congo=t61' }), context());
    expect(seen?.traceId).toMatch(/^[\da-f]{32}$/);
    expect(seen?.traceId).not.toBe(TRACE_ID.toUpperCase());
    expect(seen).toMatchObject({ flags: '01' });
    expect(seen?.state).toBeUndefined();
    expect(lines().find((entry) => entry.message === 'request')).toMatchObject({ trace_id: seen?.traceId });
  });

  it('says where the time went: the ERP part (the upstream facts), the stores (the meter) and the rest', async () => {
    const lines = captureLogLines();
    const handle = chain(async (_event, ctx) => {
      // 1.23 ms said to be the ERP's, within 5 ms of the handler's own time, and 20 ms on the store.
      await new Promise((resolve) => setTimeout(resolve, 5));
      learn(ctx, undefined, { upstreamMs: 1.2345 });
      await observed(ctx).storeMeter.timed(new Promise((resolve) => setTimeout(resolve, 20)));
      return { statusCode: 200, headers: {}, body: '{}' };
    }, true);
    const response = (await handle(event(), context())) as { headers: Record<string, string> };
    const timing = response.headers['server-timing'] as string;
    expect(timing).toMatch(/^erp;dur=1\.23, store;dur=\d+(\.\d+)?, proxy;dur=\d+(\.\d+)?$/);
    const store = Number(/store;dur=([\d.]+)/.exec(timing)?.[1]);
    expect(store).toBeGreaterThanOrEqual(15);
    const line = lines().find((entry) => entry.message === 'request') as Record<string, number>;
    expect(line.store_ms).toBe(store);
    // The parts add up to the request's duration (each rounded to 0.01 ms).
    const proxy = Number(/proxy;dur=([\d.]+)/.exec(timing)?.[1]);
    expect(proxy).toBeGreaterThan(3);
    expect(Math.abs(1.23 + store + proxy - (line.duration_ms as number))).toBeLessThan(0.05);
  });

  it('names an error answer too, and never changes the answer object a handler shares', async () => {
    const shared = Object.freeze({ statusCode: 200, headers: Object.freeze({ a: '1' }), body: '{}' });
    const ok = chain(async () => shared as APIGatewayProxyResultV2, true);
    const answered = (await ok(event({}, 'req-a'), context())) as { headers: Record<string, string> };
    expect(answered.headers).toMatchObject({ a: '1', 'request-id': 'req-a' });
    expect(shared.headers).toEqual({ a: '1' });

    const failing = chain(async () => {
      throw new UpstreamTimeoutError('slow');
    }, true);
    const refused = (await failing(event({}, 'req-b'), context())) as {
      statusCode: number;
      headers: Record<string, string>;
    };
    expect(refused.statusCode).toBe(504);
    expect(refused.headers['request-id']).toBe('req-b');
    expect(refused.headers['server-timing']).toMatch(/^proxy;dur=[\d.]+$/);
  });
});

describe('serverTimingOf', () => {
  it.each([
    [10, undefined, undefined, 'proxy;dur=10'],
    [10, 7.123, undefined, 'erp;dur=7.12, proxy;dur=2.88'],
    [10, 7, 2, 'erp;dur=7, store;dur=2, proxy;dur=1'],
    [10, undefined, 3.5, 'store;dur=3.5, proxy;dur=6.5'],
    // The parts are measured apart: the rest is never negative.
    [5, 4, 3, 'erp;dur=4, store;dur=3, proxy;dur=0'],
  ])('%s ms with erp %s and store %s: %s', (total, erp, store, expected) => {
    expect(serverTimingOf(total, erp, store)).toBe(expected);
  });
});

describe('StoreMeter', () => {
  it('is undefined until a wait, and counts waits that overlap once', async () => {
    const meter = new StoreMeter();
    expect(meter.ms).toBeUndefined();
    const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const started = performance.now();
    await Promise.all([meter.timed(wait(30)), meter.timed(wait(30)), meter.timed(wait(30))]);
    const wall = performance.now() - started;
    expect(meter.ms).toBeGreaterThanOrEqual(25);
    expect(meter.ms).toBeLessThanOrEqual(wall + 1);
    await expect(meter.timed(Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(meter.ms).toBeGreaterThanOrEqual(25);
  });
});

describe('the traceparent of each ERP request', () => {
  /** An HTTP client that records each request and answers `answer(request)`. */
  function recordingClient(answer: (request: UpstreamRequest) => string): {
    client: HttpClient;
    sent: UpstreamRequest[];
  } {
    const sent: UpstreamRequest[] = [];
    const client: HttpClient = {
      send: async (request) => {
        sent.push(request);
        return {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: Buffer.from(answer(request), 'utf8'),
        };
      },
      close: async () => undefined,
    };
    return { client, sent };
  }

  const jsonRpcResult = (result: unknown) => (request: UpstreamRequest) =>
    JSON.stringify({ jsonrpc: '2.0', id: JSON.parse(request.body ?? '{}').id, result });

  function inbound(trace: TraceContext | undefined): InboundCall {
    return {
      body: { ok: false },
      identity: { kind: 'key', name: 'k' },
      envelopeId: null,
      keyPolicy: undefined,
      presentedProxyKey: undefined,
      requestTimeout: undefined,
      responseEncoding: undefined,
      sourceIp: '127.0.0.1',
      remainingMs: undefined,
      trace,
    };
  }

  const call = {
    baseUrl: new URL('http://erp.local'),
    db: 'erp_a',
    apiKey: 'k',
    uid: 2,
    model: 'res.partner',
    method: 'search_count',
    argsJson: '[[]]',
    kwargsJson: '{}',
  };
  const config = loadConfig({});
  const caller = parseTraceparent(TRACEPARENT, 'congo=t61') as TraceContext;

  it('continues the trace on /jsonrpc, JSON-2 and the version lookups: same trace id and flags, a new span id each', async () => {
    const rpc = recordingClient(jsonRpcResult(3));
    const json2 = recordingClient(() => '3');
    const versions = recordingClient(() =>
      JSON.stringify({ version_info: [19, 0, 0, 'final', 0, ''], version: '19.0' }),
    );
    await withCallContext(inbound(caller), config, async (callContext) => {
      await new JsonRpcTransport(rpc.client).call(call, callContext);
      await new JsonRpcTransport(rpc.client).call(call, callContext);
      await new Json2Transport(json2.client).call(call, callContext);
      await new VersionClient(versions.client).version(call.baseUrl, callContext);
    });
    const sent = [...rpc.sent, ...json2.sent, ...versions.sent];
    expect(sent).toHaveLength(4);
    const spans = new Set<string>();
    for (const request of sent) {
      const { traceparent, tracestate } = request.headers;
      expect(traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-[\\da-f]{16}-01$`));
      expect(tracestate).toBe('congo=t61');
      expect(request.headers).not.toHaveProperty('baggage');
      spans.add((traceparent as string).slice(36, 52));
    }
    expect(spans.size).toBe(4);
    expect(spans.has('00f067aa0ba902b7')).toBe(false);
  });

  it('sends a trace the proxy started without a tracestate, and nothing when the call has no trace', async () => {
    const started = recordingClient(jsonRpcResult(1));
    await withCallContext(inbound({ traceId: 'a'.repeat(32), flags: '01' }), config, (callContext) =>
      new JsonRpcTransport(started.client).call(call, callContext),
    );
    expect(started.sent[0]?.headers.traceparent).toMatch(/^00-a{32}-[\da-f]{16}-01$/);
    expect(started.sent[0]?.headers).not.toHaveProperty('tracestate');

    const none = recordingClient(jsonRpcResult(1));
    await withCallContext(inbound(undefined), config, (callContext) =>
      new JsonRpcTransport(none.client).call(call, callContext),
    );
    expect(none.sent[0]?.headers).not.toHaveProperty('traceparent');
  });
});

describe("the audit's seal of records that carry a trace id", () => {
  it('seals and verifies them, and names a changed trace id', async () => {
    const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const start = Date.UTC(2026, 11, 7, 10, 0);
    const records = [1, 2].map((second) =>
      auditRecord(start + second * 1000, { request_id: `req-${second}`, trace_id: TRACE_ID }),
    );
    const sealed = await sealWindow(
      { start, end: start + 300_000, auditOn: true },
      records,
      '0'.repeat(64),
      keyPairSigner(keys),
      start + 600_000,
    );
    expect(sealed.lines.join('\n')).toContain(`"trace_id":"${TRACE_ID}"`);
    expect(verifyWindows([sealed], keys.publicKey)).toMatchObject({ records: 2, problems: [] });
    const changed = { ...sealed, lines: sealed.lines.map((line) => line.replace(TRACE_ID, 'f'.repeat(32))) };
    expect(verifyWindows([changed], keys.publicKey).problems.map((problem) => problem.kind)).toContain(
      'record_changed',
    );
  });
});
