/**
 * Handler overhead: the execute-v1, execute-v2 and version handlers (`createHandler(runtime)`,
 * the local server's runtime at LOG_LEVEL INFO with local metrics) invoked in-process with
 * payload 2.0 events against a loopback upstream that answers at once. Per call, overhead =
 * handler wall time − `context.record?.facts.upstreamMs` (the time the handler spent waiting on the
 * upstream, as the handler itself measures it).
 */

import type { ProxyContext } from '../lambdas/core/request-facts.ts';
import { createHandler as createV1 } from '../lambdas/handlers/execute-v1.ts';
import { createHandler as createV2 } from '../lambdas/handlers/execute-v2.ts';
import { createRuntime } from '../lambdas/handlers/runtime.ts';
import { createHandler as createVersion } from '../lambdas/handlers/version.ts';
import { buildContext } from '../lambdas/local/server.ts';
import { loadConfig } from '../lambdas/platform/config.ts';
import { BENCH_PROXY_KEY, type CallKind, postEvent, ROUTE_OF, smallBody } from './fixtures.ts';
import { median, p99, progress } from './stats.ts';
import { sinkStdout } from './stdout-sink.ts';
import { startSmallUpstream } from './upstreams.ts';

type Invoke = (
  event: unknown,
  context: unknown,
) => Promise<{ statusCode: number; headers: Record<string, string>; body: string }>;

export interface OverheadRow {
  readonly label: string;
  readonly iterations: number;
  readonly medianMs: number;
  readonly p99Ms: number;
  readonly upstreamMedianMs: number;
  readonly handlerMedianMs: number;
}

export interface OverheadResult {
  readonly rows: OverheadRow[];
  /** Log lines the logger formatted during the measurement (discarded, not printed). */
  readonly logWrites: number;
  readonly logBytes: number;
}

interface Case {
  readonly label: string;
  readonly kind: CallKind;
  /** Upstream base URL for iteration `i` (a new one per call defeats the version cache). */
  readonly url: (i: number) => string;
  /** Whether the handler must have called the upstream. */
  readonly expectUpstream: boolean;
}

/** Rounds of the measurement: each case's calls are spread over this many blocks. */
export const OVERHEAD_ROUNDS = 6;

export async function measureHandlerOverhead(options: {
  warmup: number;
  iterations: number;
}): Promise<OverheadResult> {
  const upstream = await startSmallUpstream();
  const runtime = createRuntime(loadConfig({ PROXY_API_KEY: BENCH_PROXY_KEY, LOG_LEVEL: 'INFO' }));
  const handlers: Record<CallKind, Invoke> = {
    v1: createV1(runtime) as unknown as Invoke,
    v2: createV2(runtime) as unknown as Invoke,
    version: createVersion(runtime) as unknown as Invoke,
  };
  const cases: Case[] = [
    { label: 'execute-v1 (search_count)', kind: 'v1', url: () => upstream.url, expectUpstream: true },
    { label: 'execute-v2 (search_count)', kind: 'v2', url: () => upstream.url, expectUpstream: true },
    {
      label: 'version (cache miss: GET /web/version)',
      kind: 'version',
      url: (i) => `${upstream.url}/n${i}`,
      expectUpstream: true,
    },
    { label: 'version (cached)', kind: 'version', url: () => upstream.url, expectUpstream: false },
  ];

  const rows: OverheadRow[] = [];
  const sink = sinkStdout();
  let requestNo = 0;
  try {
    // Warm-up, interleaved across all cases before any is measured: the code they share (HTTP
    // client, logger, metrics, Middy) is then equally warm for each, instead of the first case
    // measured paying for warming it.
    for (let i = 0; i < options.warmup; i++) {
      for (const c of cases) {
        const { path, fn } = ROUTE_OF[c.kind];
        const requestId = `bench-warmup-${++requestNo}`;
        const body = JSON.stringify(
          smallBody(c.kind, c.kind === 'version' && c.expectUpstream ? c.url(-i - 1) : c.url(0)),
        );
        await handlers[c.kind](postEvent(path, body, requestId), buildContext(fn, requestId) as ProxyContext);
      }
    }
    // Measured in blocks of consecutive calls of one handler (as a Lambda function runs only its
    // own), the blocks of all cases taking turns over several rounds: a slow spell of the machine
    // (this VM's speed drifts by tens of percent over seconds) then hits every case alike
    // instead of whichever case was being measured at that moment.
    const samples = cases.map(() => ({
      overhead: [] as number[],
      upstreamMs: [] as number[],
      handlerMs: [] as number[],
    }));
    const fixedBodies = cases.map((c) => JSON.stringify(smallBody(c.kind, c.url(0))));
    const perBlock = Math.ceil(options.iterations / OVERHEAD_ROUNDS);
    for (let round = 0; round < OVERHEAD_ROUNDS; round++) {
      for (const [index, c] of cases.entries()) {
        for (let k = 0; k < perBlock; k++) {
          const i = round * perBlock + k;
          const { path, fn } = ROUTE_OF[c.kind];
          const body =
            c.kind === 'version' && c.expectUpstream
              ? JSON.stringify(smallBody(c.kind, c.url(i)))
              : (fixedBodies[index] as string);
          const requestId = `bench-${++requestNo}`;
          const event = postEvent(path, body, requestId);
          const context = buildContext(fn, requestId) as ProxyContext;
          const started = performance.now();
          const response = await handlers[c.kind](event, context);
          const elapsed = performance.now() - started;
          if (response.statusCode !== 200 || !response.body.endsWith('"error":null}')) {
            throw new Error(
              `${c.label}: unexpected answer ${response.statusCode} ${response.body.slice(0, 300)}`,
            );
          }
          const waited = context.record?.facts.upstreamMs ?? 0;
          if (c.expectUpstream && context.record?.facts.upstreamMs === undefined) {
            throw new Error(`${c.label}: the handler did not call the upstream`);
          }
          const sample = samples[index] as (typeof samples)[number];
          sample.overhead.push(elapsed - waited);
          sample.upstreamMs.push(waited);
          sample.handlerMs.push(elapsed);
        }
      }
    }
    for (const [index, c] of cases.entries()) {
      const { overhead, upstreamMs, handlerMs } = samples[index] as (typeof samples)[number];
      rows.push({
        label: c.label,
        iterations: overhead.length,
        medianMs: median(overhead),
        p99Ms: p99(overhead),
        upstreamMedianMs: median(upstreamMs),
        handlerMedianMs: median(handlerMs),
      });
      progress(`  ${c.label}: median ${median(overhead).toFixed(3)} ms, p99 ${p99(overhead).toFixed(3)} ms`);
    }
  } finally {
    sink.restore();
    await runtime.http.close();
    await upstream.close();
  }
  return { rows, logWrites: sink.writes, logBytes: sink.bytes };
}
