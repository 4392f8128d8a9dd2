/**
 * The floor for any Node proxy: a minimal `node:http` pass-through written only for the
 * benchmark. It forwards the method, path and POST body to one upstream over a keep-alive
 * `http.Agent` and pipes the answer back: no parsing, validation, auth, logging or metrics.
 *
 * With `observed`, the same pass-through also does what the proxy requires of
 * every request, and nothing else: it runs erp-proxy's own `observe` middleware (the request
 * log line through the Powertools Logger, the EMF records through Powertools Metrics, kept in
 * process as the local server keeps them), called directly, without Middy. Its throughput is
 * the ceiling for any proxy that observes requests the way the design asks.
 */
import { randomUUID } from 'node:crypto';
import { Agent, createServer, request } from 'node:http';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createRuntime } from '../lambdas/handlers/runtime.ts';
import { buildContext } from '../lambdas/local/server.ts';
import { observe } from '../lambdas/middleware/observe.ts';
import { learn } from '../lambdas/middleware/step.ts';
import type { ProxyRequest } from '../lambdas/middleware/types.ts';
import { loadConfig } from '../lambdas/platform/config.ts';
import { BENCH_PROXY_KEY } from './fixtures.ts';
import { listen, type RunningServer } from './upstreams.ts';

export interface FloorProxyOptions {
  readonly maxSockets?: number;
  /** Log and record every request as erp-proxy does (see the module comment). */
  readonly observed?: boolean;
}

/** Ends the observation of one request: the upstream's status, its time and the answer's size. */
type Done = (status: number, upstreamMs: number, responseBytes: number) => void;

/** The observe middleware's `before` (at the start) and `after` (at `Done`) of each request. */
function observer(erpHost: string): (method: string, path: string) => Done {
  const runtime = createRuntime(loadConfig({ PROXY_API_KEY: BENCH_PROXY_KEY, LOG_LEVEL: 'INFO' }));
  const middleware = observe({ logger: runtime.logger, metrics: runtime.metrics, api: 'v1' });
  return (method, path) => {
    const requestId = randomUUID();
    const routeKey = `${method} ${path}`;
    const event = { routeKey, requestContext: { requestId, routeKey } } as APIGatewayProxyEventV2;
    const proxyRequest = {
      event,
      context: buildContext('execute-v1', requestId),
      response: undefined,
      error: undefined,
      internal: {},
    } as unknown as ProxyRequest;
    void middleware.before?.(proxyRequest);
    return (status, upstreamMs, responseBytes) => {
      // The fields the proxy's line carries for the same call (it reads them from the envelope).
      learn(proxyRequest.context, undefined, {
        envelopeId: 'bench-v1',
        action: 'search_count',
        model: 'res.partner',
        erpHost,
        erpDb: 'erp_a',
        callerKeyName: 'default',
        responseBytes,
        upstreamStatus: status,
        upstreamMs,
        outcome: status < 400 ? 'success' : 'proxy_error',
      });
      proxyRequest.response = { statusCode: status, headers: {}, body: '' };
      void middleware.after?.(proxyRequest);
    };
  };
}

export function startFloorProxy(
  upstreamUrl: string,
  options: FloorProxyOptions = {},
): Promise<RunningServer> {
  const target = new URL(upstreamUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 16 });
  const observeRequest = options.observed ? observer(target.host) : undefined;
  const server = createServer((req, res) => {
    const done = observeRequest?.(req.method ?? 'GET', req.url ?? '/');
    const sentAt = performance.now();
    const headers: Record<string, string> = {};
    if (req.headers['content-type']) headers['content-type'] = req.headers['content-type'];
    if (req.headers['content-length']) headers['content-length'] = req.headers['content-length'];
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent },
      (answer) => {
        const out: Record<string, string> = {};
        if (answer.headers['content-type']) out['content-type'] = answer.headers['content-type'];
        if (answer.headers['content-length']) out['content-length'] = answer.headers['content-length'];
        res.writeHead(answer.statusCode ?? 502, out);
        if (done) {
          let bytes = 0;
          answer.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
          });
          answer.once('end', () => done(answer.statusCode ?? 502, performance.now() - sentAt, bytes));
        }
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      done?.(502, performance.now() - sentAt, 0);
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  return listen(server).then((running) => ({
    ...running,
    close: async () => {
      await running.close();
      agent.destroy();
    },
  }));
}
