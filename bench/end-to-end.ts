/**
 * End to end over loopback: the same small call (`search_count` on `res.partner`, v1) sent
 * straight to an upstream, through the local proxy, and through the pass-through floor, with
 * autocannon in this process and the servers in two child processes (upstreams; proxy + floors).
 * Latency at concurrency 1 (median, p99, from every answer's own response time), requests per
 * second at concurrency 16. Two upstreams: the ERP double (realistic, but it may be the
 * bottleneck) and the fast fixed-answer upstream (so that the ratio reflects the proxy's cost).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { BENCH_PROXY_KEY, directJsonRpcBody, smallBody } from './fixtures.ts';
import { median, p99, progress } from './stats.ts';

const HERE = dirname(fileURLToPath(import.meta.url));

/** `observed`: the floor plus erp-proxy's own request logging and metrics (fast upstream only). */
export type Path = 'direct' | 'proxy' | 'floor' | 'observed';
export type UpstreamName = 'double' | 'fast';

export interface EndToEndRow {
  readonly upstream: UpstreamName;
  readonly path: Path;
  readonly latencyMedianMs: number;
  readonly latencyP99Ms: number;
  readonly latencySamples: number;
  readonly rps: number;
}

export interface EndToEndOptions {
  readonly warmupSeconds: number;
  readonly seconds: number;
  readonly concurrency: number;
}

interface Target {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

const stopping = new WeakSet<ChildProcess>();

function startChild<T>(args: string[]): Promise<{ child: ChildProcess; info: T }> {
  return new Promise((resolvePromise, reject) => {
    const child = fork(join(HERE, 'e2e-servers-child.ts'), args, {
      cwd: resolve(HERE, '..'),
      execArgv: ['--import', 'tsx'],
      // The proxy's log lines go to /dev/null (a write per request, as a log sink costs).
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    child.once('message', (info) => resolvePromise({ child, info: info as T }));
    child.once('error', reject);
    child.on('exit', (code, signal) => {
      const error = new Error(`e2e-servers-child ${args[0]} exited (code ${code}, signal ${signal})`);
      if (!stopping.has(child)) progress(`  unexpected: ${error.message}`);
      reject(error);
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  stopping.add(child);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  if (child.connected) child.disconnect();
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await exited;
  clearTimeout(timer);
}

interface CannonResult {
  readonly latencies: number[];
  readonly rps: number;
}

function cannon(target: Target, connections: number, seconds: number): Promise<CannonResult> {
  return new Promise((resolvePromise, reject) => {
    const latencies: number[] = [];
    let ok = 0;
    // A server that stops answering must fail the run, not hang it.
    const watchdog = setTimeout(
      () => {
        instance.stop();
        reject(new Error(`${target.url}: no result ${seconds + 20} s after the start`));
      },
      (seconds + 20) * 1000,
    );
    const instance = autocannon(
      {
        url: target.url,
        method: 'POST',
        headers: target.headers,
        body: target.body,
        connections,
        pipelining: 1,
        duration: seconds,
        timeout: 10,
      },
      (error, result) => {
        clearTimeout(watchdog);
        if (error) return reject(error);
        if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0) {
          return reject(
            new Error(
              `${target.url}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx answers`,
            ),
          );
        }
        const elapsed = (result.finish.getTime() - result.start.getTime()) / 1000;
        resolvePromise({ latencies, rps: ok / elapsed });
      },
    );
    // autocannon's own histogram keeps whole milliseconds; each answer's time is fractional.
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      if (statusCode >= 200 && statusCode < 300) {
        ok += 1;
        latencies.push(responseTime);
      }
    });
  });
}

/** One call through `fetch` first: the answer must be a count, or the numbers mean nothing. */
async function checkTarget(name: string, target: Target): Promise<void> {
  const response = await fetch(target.url, {
    method: 'POST',
    headers: target.headers,
    body: target.body,
    signal: AbortSignal.timeout(10_000),
  });
  const answer = (await response.json()) as { result?: unknown; error?: unknown };
  if (response.status !== 200 || typeof answer.result !== 'number' || answer.error) {
    throw new Error(`${name}: not a search_count answer: HTTP ${response.status} ${JSON.stringify(answer)}`);
  }
}

export async function measureEndToEnd(options: EndToEndOptions): Promise<EndToEndRow[]> {
  const upstreams = await startChild<{ doubleUrl: string; fastUrl: string }>(['upstreams']);
  let proxies: {
    child: ChildProcess;
    info: { proxyUrl: string; floorDoubleUrl: string; floorFastUrl: string; observedFloorFastUrl: string };
  };
  try {
    proxies = await startChild(['proxies', upstreams.info.doubleUrl, upstreams.info.fastUrl]);
  } catch (error) {
    await stopChild(upstreams.child);
    throw error;
  }
  const json = { 'content-type': 'application/json' };
  const direct = directJsonRpcBody();
  /** The same small call straight to an upstream, through the local proxy, and through a floor. */
  const targetsOf = (
    upstreamUrl: string,
    floorUrl: string,
  ): Record<'direct' | 'proxy' | 'floor', Target> => ({
    direct: { url: `${upstreamUrl}/jsonrpc`, headers: json, body: direct },
    proxy: {
      url: `${proxies.info.proxyUrl}/api/erp/execute`,
      headers: { ...json, 'x-api-key': BENCH_PROXY_KEY },
      body: JSON.stringify(smallBody('v1', upstreamUrl)),
    },
    floor: { url: `${floorUrl}/jsonrpc`, headers: json, body: direct },
  });
  const targets: Record<UpstreamName, Partial<Record<Path, Target>>> = {
    double: targetsOf(upstreams.info.doubleUrl, proxies.info.floorDoubleUrl),
    fast: {
      ...targetsOf(upstreams.info.fastUrl, proxies.info.floorFastUrl),
      observed: { url: `${proxies.info.observedFloorFastUrl}/jsonrpc`, headers: json, body: direct },
    },
  };
  const rows: EndToEndRow[] = [];
  try {
    for (const upstream of ['fast', 'double'] as const) {
      for (const path of ['direct', 'floor', 'observed', 'proxy'] as const) {
        const target = targets[upstream][path];
        if (!target) continue;
        await checkTarget(`${path} (${upstream})`, target);
        await cannon(target, 1, options.warmupSeconds);
        const latency = await cannon(target, 1, options.seconds);
        await cannon(target, options.concurrency, options.warmupSeconds);
        const load = await cannon(target, options.concurrency, options.seconds);
        const row: EndToEndRow = {
          upstream,
          path,
          latencyMedianMs: median(latency.latencies),
          latencyP99Ms: p99(latency.latencies),
          latencySamples: latency.latencies.length,
          rps: load.rps,
        };
        rows.push(row);
        progress(
          `  ${upstream} upstream, ${path}: c=1 median ${row.latencyMedianMs.toFixed(3)} ms, ` +
            `p99 ${row.latencyP99Ms.toFixed(3)} ms; c=${options.concurrency} ${Math.round(row.rps)} req/s`,
        );
      }
    }
  } finally {
    await stopChild(proxies.child);
    await stopChild(upstreams.child);
  }
  return rows;
}
