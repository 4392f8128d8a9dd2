/**
 * Each deployed function builds its own runtime on its first invocation (the `create…Runtime`
 * factory its handler module exports, which `lambdaHandler` calls): only the parts its handler
 * uses, and the handler serves from it. The local server's runtime (`createRuntime`) has every
 * part, for every handler. Which code each bundle carries is checked in test/infra/bundle.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createExecuteV1Runtime,
  createHandler as createV1Handler,
} from '../../lambdas/handlers/execute-v1.ts';
import {
  createExecuteV2Runtime,
  createHandler as createV2Handler,
} from '../../lambdas/handlers/execute-v2.ts';
import {
  createHandler as createOperatorHandler,
  createOperatorRuntime,
} from '../../lambdas/handlers/operator.ts';
import { createRuntime } from '../../lambdas/handlers/runtime.ts';
import {
  createHandler as createVersionHandler,
  createVersionRuntime,
} from '../../lambdas/handlers/version.ts';
import { type Config, loadConfig } from '../../lambdas/platform/config.ts';
import { ROUTES } from '../../lambdas/platform/routes.ts';
import type { HttpClient } from '../../lambdas/upstream/http-client.ts';
import { USERS, useErpDouble } from '../support/fixtures.ts';
import { httpApiEvent, type InvokedHandler, lambdaContext } from '../support/http-api-event.ts';
import { TEST_PROXY_KEY } from '../support/test-secrets.ts';

const config: Config = loadConfig({ PROXY_API_KEY: TEST_PROXY_KEY, LOG_LEVEL: 'SILENT' });

describe('the runtime each function builds', () => {
  const double = useErpDouble({ mode: '19' });
  const clients: HttpClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });

  const instance = () => ({ url: double.url, db: 'erp_a', user_id: 2, api_key: USERS.adminA.apiKey });
  const invoke = (handler: unknown, fn: string, path: string, body?: unknown) => {
    const route = ROUTES.find((r) => r.path === path);
    if (!route) throw new Error(`no route ${path}`);
    const event = httpApiEvent(route, {
      headers: { 'content-type': 'application/json', 'x-api-key': TEST_PROXY_KEY },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (handler as InvokedHandler)(event, lambdaContext(fn));
  };

  it('execute-v1: the v1 transport over an HTTP client, no v2 transport, no metrics source', async () => {
    const runtime = createExecuteV1Runtime(config);
    clients.push(runtime.http);
    expect(Object.keys(runtime.forward).sort()).toEqual(['config', 'idempotency', 'lookup', 'policy', 'v1']);
    expect(runtime.store?.kind).toBe('embedded');
    expect(runtime).not.toHaveProperty('metricsSource');

    const response = await invoke(createV1Handler(runtime), 'execute-v1', '/api/erp/execute', {
      id: 'r1',
      action: 'search_count',
      model_id: 'res.partner',
      params: [[]],
      erp_instance: instance(),
    });
    expect(JSON.parse(response.body)).toEqual({
      jsonrpc: '2.0',
      id: 'r1',
      result: expect.any(Number),
      error: null,
    });
  });

  it('execute-v2: the v2 transport, no v1 transport, no metrics source', async () => {
    const runtime = createExecuteV2Runtime(config);
    clients.push(runtime.http);
    expect(Object.keys(runtime.forward).sort()).toEqual(['config', 'idempotency', 'lookup', 'policy', 'v2']);
    expect(runtime).not.toHaveProperty('metricsSource');

    const response = await invoke(createV2Handler(runtime), 'execute-v2', '/v2/erp/execute', {
      id: 'r2',
      model_id: 'res.partner',
      method: 'search_count',
      kwargs: { domain: [] },
      erp_instance: instance(),
    });
    expect(JSON.parse(response.body).result).toEqual(expect.any(Number));
  });

  it('version: the version client and no transport', async () => {
    const runtime = createVersionRuntime(config);
    // No state: the version endpoints never take an Idempotency-Key.
    expect(runtime).not.toHaveProperty('store');
    clients.push(runtime.http);
    expect(Object.keys(runtime.forward).sort()).toEqual(['config', 'lookup', 'policy', 'versions']);

    const response = await invoke(createVersionHandler(runtime), 'version', '/v2/erp/version', {
      id: 'r3',
      url: double.url,
    });
    expect(JSON.parse(response.body).result).toEqual({
      version_info: [19, 0, 0, 'final', 0, ''],
      version: '19.0',
    });
  });

  it('aux: the metrics source and no HTTP client or transport; locally it reads what the metrics recorded', async () => {
    const runtime = createOperatorRuntime(config);
    expect(runtime).not.toHaveProperty('http');
    expect(runtime).not.toHaveProperty('forward');
    const handler = createOperatorHandler(runtime);

    const about = await invoke(handler, 'aux', '/_/about');
    expect(about.statusCode).toBe(200);
    // The aux function's own request, recorded by its Metrics into the store its source reads.
    const metrics = await invoke(handler, 'aux', '/_/metrics');
    expect(metrics.body).toContain('erp_proxy_requests{api="aux",outcome="success"} 1');
  });

  it('the local server runtime has every part, for every handler', () => {
    const runtime = createRuntime(config);
    clients.push(runtime.http);
    expect(Object.keys(runtime.forward).sort()).toEqual([
      'config',
      'idempotency',
      'lookup',
      'policy',
      'v1',
      'v2',
      'versions',
    ]);
    expect(runtime.metricsSource).toBeDefined();
  });
});
