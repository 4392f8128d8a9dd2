/**
 * Starts the local server (the real handlers) on 127.0.0.1 with its own runtime and config,
 * and offers small HTTP helpers. Free of vitest, so the benchmarks use it too; the suites use it
 * through test/support/fixtures.ts, which ties it to a test's lifetime.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRuntime, type Runtime, type RuntimeOverrides } from '../../lambdas/handlers/runtime.ts';
import { createLocalServer, type LocalServerOptions } from '../../lambdas/local/server.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';

import { TEST_PROXY_KEY } from './test-secrets.ts';

export { TEST_PROXY_KEY };

export interface ProxyHarness {
  readonly url: string;
  readonly runtime: Runtime;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<HttpAnswer>;
  get(path: string, headers?: Record<string, string>): Promise<HttpAnswer>;
  close(): Promise<void>;
}

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON, or `undefined` when it is not JSON. */
  readonly json: unknown;
}

export async function toAnswer(response: Response): Promise<HttpAnswer> {
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** How a proxy under test differs from the default one. */
export interface ProxyOptions {
  /** Environment on top of the test defaults (`PROXY_API_KEY` = the test key, `LOG_LEVEL` DEBUG). */
  readonly env?: Record<string, string>;
  /** Objects the runtime takes instead of building its own (a key source, a TLS CA...). */
  readonly overrides?: RuntimeOverrides;
  readonly server?: LocalServerOptions;
}

/** Starts the local server with a runtime of its own on a free port of 127.0.0.1. */
export async function startProxy(options: ProxyOptions = {}): Promise<ProxyHarness> {
  const config = loadConfig({
    PROXY_API_KEY: TEST_PROXY_KEY, // DEBUG: the leak guard (test/support/leak-guard.ts) scans every line the proxy logs.
    LOG_LEVEL: 'DEBUG',
    ...options.env,
  });
  const runtime = createRuntime(config, options.overrides);
  const server: Server = createLocalServer(runtime, options.server);
  // `PORT` in `env` (a test that needs the URL before the proxy starts, e.g. as an OAuth audience):
  // listen there; otherwise on any free port.
  // A port taken meanwhile (EADDRINUSE) rejects here, not as an uncaught exception.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.env?.PORT ? config.port : 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const post = async (
    path: string,
    body: unknown,
    headers: Record<string, string> = {},
  ): Promise<HttpAnswer> =>
    toAnswer(
      await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': TEST_PROXY_KEY, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    );
  const get = async (path: string, headers: Record<string, string> = {}): Promise<HttpAnswer> =>
    toAnswer(await fetch(`${url}${path}`, { headers }));
  return {
    url,
    runtime,
    post,
    get,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runtime.http.close();
    },
  };
}

/** A port of 127.0.0.1 that was free a moment ago (for a proxy whose URL a test needs up front). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
