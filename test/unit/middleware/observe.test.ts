import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { factsOf, type ProxyContext, withFacts } from '../../../lambdas/core/request-facts.ts';
import { observe } from '../../../lambdas/middleware/observe.ts';
import { learn } from '../../../lambdas/middleware/step.ts';
import { LocalMetricsStore } from '../../../lambdas/operator/local-metrics-store.ts';
import { loadConfig } from '../../../lambdas/platform/config.ts';
import {
  InternalError,
  LicenseError,
  ProxyError,
  UpstreamTimeoutError,
} from '../../../lambdas/platform/errors.ts';
import { createLogger } from '../../../lambdas/platform/logger.ts';
import { createMetrics } from '../../../lambdas/platform/metrics/powertools.ts';
import { captureLogLines } from '../../support/captured-output.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

const PROXY_KEY = 'proxy-key-0123456789abcdef-SECRET';
const ERP_KEY = 'erp-api-key-abcdef-SECRET';

function event(requestId = 'apigw-req-123'): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: 'POST /api/erp/execute',
    rawPath: '/api/erp/execute',
    rawQueryString: '',
    headers: { 'x-api-key': PROXY_KEY, 'content-type': 'application/json' },
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: {
        method: 'POST',
        path: '/api/erp/execute',
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: 't',
      },
      requestId,
      routeKey: 'POST /api/erp/execute',
      stage: '$default',
      time: '21/Nov/2026:10:00:00 +0000',
      timeEpoch: 0,
    },
    body: JSON.stringify({
      id: 'env-7',
      erp_instance: { url: 'http://erp.local', db: 'erp_a', user_id: 2, api_key: ERP_KEY },
      action: 'search_read',
      model_id: 'res.partner',
      params: [[['name', 'ilike', 'CONFIDENTIAL-PARAM']]],
    }),
    isBase64Encoded: false,
  };
}

function context(awsRequestId = 'lambda-req-1', functionName = 'erp-proxy-execute-v1'): ProxyContext {
  // Only the fields the chain reads; `record` is created by observe's before.
  return {
    awsRequestId,
    functionName,
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
  } as unknown as ProxyContext;
}

type Handler = (event: APIGatewayProxyEventV2, context: ProxyContext) => Promise<APIGatewayProxyResultV2>;

/**
 * A chain like the real ones: observe first, then a stand-in for the steps and the envelope
 * middleware that returns what the real ones return (the caller and target facts; the outcome,
 * error code, response size and the facts an error carries) through `learn`, and turns errors
 * into responses without returning them.
 */
function chain(handler: Handler, logger: Logger = createLogger(loadConfig({}))) {
  const store = new LocalMetricsStore();
  const metrics = createMetrics(loadConfig({}), { store });
  const fakeEnvelope: middy.MiddlewareObj<
    APIGatewayProxyEventV2,
    APIGatewayProxyResultV2,
    Error,
    ProxyContext
  > = {
    before: (request) => {
      learn(request.context, undefined, {
        envelopeId: 'env-7',
        callerKeyName: 'billing',
        action: 'search_read',
        model: 'res.partner',
        erpHost: 'erp.local',
        erpDb: 'erp_a',
      });
    },
    after: (request) => {
      const body = typeof request.response === 'object' ? (request.response?.body ?? '') : '';
      learn(request.context, undefined, { responseBytes: Buffer.byteLength(body) });
    },
    onError: (request) => {
      const error = request.error;
      const proxyError = error instanceof ProxyError ? error : undefined;
      const errorCode = proxyError?.code ?? -32603;
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 'env-7',
        error: { code: errorCode, message: 'x' },
      });
      learn(request.context, undefined, {
        ...factsOf(error),
        outcome: 'proxy_error',
        errorCode,
        responseBytes: Buffer.byteLength(body),
      });
      request.response = { statusCode: proxyError?.httpStatus ?? 500, body };
    },
  };
  const handle = middy<APIGatewayProxyEventV2, APIGatewayProxyResultV2, Error, ProxyContext>()
    .use(observe({ logger, metrics, api: 'v1' }))
    .use(fakeEnvelope)
    .handler(handler);
  return { handle, store };
}

describe('observe middleware', () => {
  it('writes exactly one INFO line per successful request, with every field and no secret', async () => {
    // Prepare
    const lines = captureLogLines();
    const { handle, store } = chain(async (_event, ctx) => {
      learn(ctx, undefined, { upstreamStatus: 200, upstreamMs: 12.345 });
      return { statusCode: 200, body: '{"jsonrpc":"2.0","id":"env-7","result":[],"error":null}' };
    });

    // Act
    const response = await handle(event(), context());

    // Assess
    expect(response).toMatchObject({ statusCode: 200 });
    const logged = lines();
    expect(logged).toHaveLength(1);
    const line = logged[0] ?? {};
    expect(line).toMatchObject({
      level: 'INFO',
      message: 'request',
      service: 'erp-proxy',
      correlation_id: 'apigw-req-123',
      function_request_id: 'lambda-req-1',
      function_name: 'erp-proxy-execute-v1',
      function_arn: 'arn:aws:lambda:local:000000000000:function:erp-proxy-execute-v1',
      function_memory_size: '512',
      envelope_id: 'env-7',
      request_id: 'apigw-req-123',
      route: 'POST /api/erp/execute',
      api: 'v1',
      action: 'search_read',
      model: 'res.partner',
      erp_host: 'erp.local',
      erp_db: 'erp_a',
      caller: 'billing',
      upstream_status: 200,
      upstream_ms: 12.35,
      outcome: 'success',
      http_status: 200,
      response_bytes: 55,
    });
    expect(typeof line.duration_ms).toBe('number');
    // Unknown fields (null) are left out of the line by Powertools.
    expect(line).not.toHaveProperty('error_code');
    const text = JSON.stringify(logged);
    expect(text).not.toContain(PROXY_KEY);
    expect(text).not.toContain(ERP_KEY);
    expect(text).not.toContain('CONFIDENTIAL-PARAM');
    expect(text).not.toMatch(/"(params|keyword|kwargs|result|body)"/);

    const families = store.families();
    expect(families.find((f) => f.name === 'erp_proxy_requests')?.samples).toEqual([
      { labels: { api: 'v1', outcome: 'success' }, value: 1 },
    ]);
  });

  it('names what an Idempotency-Key did in the line (idempotency)', async () => {
    const lines = captureLogLines();
    const { handle } = chain(async (_event, ctx) => {
      learn(ctx, undefined, { idempotency: 'replayed' });
      return { statusCode: 200, body: '{"jsonrpc":"2.0","id":"env-7","result":1,"error":null}' };
    });
    await handle(event(), context());
    expect(lines()[0]).toMatchObject({ message: 'request', idempotency: 'replayed' });
  });

  it('logs a proxy error at WARN without a stack, and counts it by code', async () => {
    const lines = captureLogLines();
    const { handle, store } = chain(async () => {
      throw withFacts(new UpstreamTimeoutError('The ERP did not answer within 15 s; the call may have run'), {
        upstreamMs: 15000,
      });
    });

    const response = await handle(event(), context());

    expect(response).toMatchObject({ statusCode: 504 });
    const logged = lines();
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      level: 'WARN',
      message: 'request',
      outcome: 'proxy_error',
      error_code: -32003,
      http_status: 504,
    });
    expect(logged[0]).not.toHaveProperty('error');
    const families = store.families();
    expect(families.find((f) => f.name === 'erp_proxy_errors')?.samples).toEqual([
      { labels: { api: 'v1', code: '-32003' }, value: 1 },
    ]);
    expect(families.find((f) => f.name === 'erp_proxy_upstream_timeouts')?.samples).toEqual([
      { labels: { api: 'v1' }, value: 1 },
    ]);
  });

  it('gives each of two overlapping requests its own Lambda context and correlation id', async () => {
    // Prepare: the local server's situation, one Logger shared by requests that overlap.
    const lines = captureLogLines();
    let releaseSlow: () => void = () => {};
    const slowGate = new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    const { handle } = chain(async (ev) => {
      if (ev.requestContext.requestId === 'apigw-slow') await slowGate;
      return { statusCode: 200, body: '{}' };
    });

    // Act: the slow request starts, the fast one runs start to end, then the slow one ends.
    const slow = handle(event('apigw-slow'), context('lambda-slow', 'erp-proxy-execute-v1'));
    await new Promise((resolve) => setImmediate(resolve));
    await handle(event('apigw-fast'), context('lambda-fast', 'erp-proxy-execute-v2'));
    releaseSlow();
    await slow;

    // Assess
    const logged = lines();
    expect(logged.map((line) => line.request_id)).toEqual(['apigw-fast', 'apigw-slow']);
    expect(logged[0]).toMatchObject({
      correlation_id: 'apigw-fast',
      function_request_id: 'lambda-fast',
      function_name: 'erp-proxy-execute-v2',
      function_arn: 'arn:aws:lambda:local:000000000000:function:erp-proxy-execute-v2',
    });
    expect(logged[1]).toMatchObject({
      correlation_id: 'apigw-slow',
      function_request_id: 'lambda-slow',
      function_name: 'erp-proxy-execute-v1',
      function_arn: 'arn:aws:lambda:local:000000000000:function:erp-proxy-execute-v1',
    });
  });

  it('counts a license refusal under code "license", not "0"', async () => {
    const lines = captureLogLines();
    const { handle, store } = chain(async () => {
      throw new LicenseError('The license has expired');
    });

    const response = await handle(event(), context());

    expect(response).toMatchObject({ statusCode: 403 });
    expect(lines()[0]).toMatchObject({
      level: 'WARN',
      outcome: 'proxy_error',
      error_code: 0,
      http_status: 403,
    });
    expect(store.families().find((f) => f.name === 'erp_proxy_errors')?.samples).toEqual([
      { labels: { api: 'v1', code: 'license' }, value: 1 },
    ]);
  });

  it.each([
    [
      'an unexpected error',
      () => new TypeError('Cannot read properties of undefined (reading "x")'),
      'TypeError',
    ],
    [
      'the cause an InternalError wraps (not the wrapper)',
      () => new InternalError(new RangeError('the real failure')),
      'RangeError',
    ],
  ])('logs %s at ERROR with its stack, in the same single line', async (_label, makeError, name) => {
    const thrown = makeError();
    const logged = thrown instanceof InternalError ? (thrown.cause as Error) : thrown;
    const lines = captureLogLines();
    const { handle } = chain(async () => {
      throw thrown;
    });

    const response = await handle(event(), context());

    expect(response).toMatchObject({ statusCode: 500 });
    const written = lines();
    expect(written).toHaveLength(1);
    expect(written[0]).toMatchObject({
      level: 'ERROR',
      message: 'request',
      outcome: 'proxy_error',
      error_code: -32603,
      http_status: 500,
      error: { name, message: logged.message },
    });
    const error = (written[0]?.error ?? {}) as Record<string, unknown>;
    expect(String(error.stack)).toContain(`${name}: ${logged.message}`);
  });

  it('logs a bundle frame of the stack in source terms, from the map beside the bundle', async () => {
    // As deployed: a minified index.mjs with index.mjs.map beside it, no --enable-source-maps.
    const dir = mkdtempSync(join(tmpdir(), 'observe-map-'));
    const bundle = join(dir, 'index.mjs');
    writeFileSync(bundle, 'export{};');
    // One mapping: generated 1:1 is line 1, column 1 of the source.
    writeFileSync(
      `${bundle}.map`,
      JSON.stringify({ version: 3, sources: ['../../lambdas/core/forward.ts'], names: [], mappings: 'AAAA' }),
    );
    try {
      const thrown = new TypeError('a bug in the bundle');
      thrown.stack = `TypeError: a bug in the bundle\n    at forwardV1 (${pathToFileURL(bundle).href}:1:1)`;
      const lines = captureLogLines();
      const { handle } = chain(async () => {
        throw thrown;
      });
      await handle(event(), context());
      const error = (lines()[0]?.error ?? {}) as Record<string, unknown>;
      expect(String(error.stack)).toBe(
        'TypeError: a bug in the bundle\n    at forwardV1 (lambdas/core/forward.ts:1:1)',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('never breaks a response when logging or metrics fail', async () => {
    const stderr: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => {
      stderr.push(String(chunk));
      return true;
    });
    const logger = createLogger(loadConfig({}));
    vi.spyOn(logger, 'info').mockImplementation(() => {
      throw new Error('disk full');
    });
    vi.spyOn(logger, 'setCorrelationId').mockImplementation(() => {
      throw new Error('boom');
    });
    const { handle } = chain(async () => ({ statusCode: 200, body: '{}' }), logger);

    await expect(handle(event(), context())).resolves.toMatchObject({ statusCode: 200 });
    expect(stderr.join('')).toContain('observe: writing the request log line failed');
  });
});
