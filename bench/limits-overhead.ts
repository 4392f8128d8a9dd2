/**
 * The limits' cost (README, "Limits"), the execute-v1 handler in-process as in
 * `handler-overhead.ts`, over three runtimes side by side in one run:
 *
 * - no limits configured;
 * - limits configured for other keys and another ERP: the measured call has none, so it must do no
 *   store work at all (the handler overhead budget applies);
 * - a limited call: the caller's key has a rate limit and the ERP an in-flight cap, counted in a
 *   table of DynamoDB Local (one `UpdateItem` for the rate, one `PutItem` for the slot, one
 *   `DeleteItem` to release it): the added time is the row's point, beside the unlimited one.
 *
 * Blocks of the three take turns over several rounds (ABBA), so a slow spell hits all alike.
 */
import type { ProxyContext } from '../lambdas/core/request-facts.ts';
import { createHandler as createV1 } from '../lambdas/handlers/execute-v1.ts';
import { createRuntime, type Runtime } from '../lambdas/handlers/runtime.ts';
import { buildContext } from '../lambdas/local/server.ts';
import { loadConfig } from '../lambdas/platform/config.ts';
import { createStateTable, startDynamoDbLocal, stateTableEnv } from '../test/support/dynamodb-local.ts';
import { BENCH_PROXY_KEY, postEvent, ROUTE_OF, smallBody } from './fixtures.ts';
import type { OverheadRow } from './handler-overhead.ts';
import { median, p99, progress } from './stats.ts';
import { sinkStdout } from './stdout-sink.ts';
import { startSmallUpstream } from './upstreams.ts';

type Invoke = (event: unknown, context: unknown) => Promise<{ statusCode: number; body: string }>;

const ROUNDS = 6;
/** A limit the measured calls never reach: the cost of counting, not of refusing. */
const NEVER_REACHED = [{ requests: 1_000_000_000, per: 'day' }];

function keys(limited: 'bench' | 'others' | 'none'): string {
  const entry = (name: string, key: string, withLimits: boolean) => ({
    name,
    key,
    ...(withLimits ? { policy: { limits: NEVER_REACHED } } : {}),
  });
  return JSON.stringify({
    keys: [
      entry('agent', 'bench-agent-key-0123456789abcdef', limited !== 'none'),
      entry('bench', BENCH_PROXY_KEY, limited === 'bench'),
    ],
  });
}

interface Variant {
  readonly label: string;
  readonly runtime: Runtime;
  readonly handler: Invoke;
}

function variant(label: string, env: Record<string, string>): Variant {
  const runtime = createRuntime(loadConfig({ LOG_LEVEL: 'INFO', ...env }));
  return { label, runtime, handler: createV1(runtime) as unknown as Invoke };
}

/** The rows: execute-v1 without limits, with limits for others only, and limited against DynamoDB Local. */
export async function measureLimitsOverhead(options: {
  warmup: number;
  iterations: number;
}): Promise<OverheadRow[]> {
  const upstream = await startSmallUpstream();
  const dynamo = await startDynamoDbLocal();
  const table = await createStateTable(dynamo.endpoint, 'bench');
  const store = stateTableEnv(dynamo.endpoint, table);
  const upstreamHost = new URL(upstream.url).hostname;
  const variants = [
    variant('no limits configured', { PROXY_API_KEYS: keys('none') }),
    variant('limits for other keys and another ERP (no store work)', {
      ...store,
      PROXY_API_KEYS: keys('others'),
      ERP_TARGET_LIMITS: JSON.stringify({ 'erp.example.com': { in_flight: 6, requests: 50, per: 'second' } }),
    }),
    variant('limited: key rate + ERP in-flight cap, DynamoDB Local (3 requests)', {
      ...store,
      PROXY_API_KEYS: keys('bench'),
      ERP_TARGET_LIMITS: JSON.stringify({ [upstreamHost]: { in_flight: 100 } }),
    }),
  ];
  const body = JSON.stringify(smallBody('v1', upstream.url));
  const { path, fn } = ROUTE_OF.v1;
  const sink = sinkStdout();
  let requestNo = 0;
  const call = async (v: Variant): Promise<{ overhead: number; upstream: number; handler: number }> => {
    const requestId = `bench-limits-${++requestNo}`;
    const context = buildContext(fn, requestId) as ProxyContext;
    const started = performance.now();
    const response = await v.handler(postEvent(path, body, requestId), context);
    const elapsed = performance.now() - started;
    if (response.statusCode !== 200 || !response.body.endsWith('"error":null}')) {
      throw new Error(`${v.label}: unexpected answer ${response.statusCode} ${response.body.slice(0, 300)}`);
    }
    if (context.record?.facts.limitsFailedOpen) throw new Error(`${v.label}: the store did not answer`);
    const upstreamMs = context.record?.facts.upstreamMs ?? 0;
    return { overhead: elapsed - upstreamMs, upstream: upstreamMs, handler: elapsed };
  };
  type Samples = { overhead: number[]; upstream: number[]; handler: number[] };
  const samples: Samples[] = variants.map(() => ({ overhead: [], upstream: [], handler: [] }));
  try {
    for (let i = 0; i < options.warmup; i++) for (const v of variants) await call(v);
    const perBlock = Math.ceil(options.iterations / ROUNDS);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? [...variants.keys()] : [...variants.keys()].reverse();
      for (const which of order) {
        const sample = samples[which] as Samples;
        for (let k = 0; k < perBlock; k++) {
          const { overhead, upstream: waited, handler } = await call(variants[which] as Variant);
          sample.overhead.push(overhead);
          sample.upstream.push(waited);
          sample.handler.push(handler);
        }
      }
    }
  } finally {
    sink.restore();
    for (const v of variants) await v.runtime.http.close();
    await upstream.close();
    await dynamo.stop();
  }
  return variants.map((v, which) => {
    const { overhead, upstream: waited, handler } = samples[which] as Samples;
    const row = {
      label: `execute-v1 (search_count), ${v.label}`,
      iterations: overhead.length,
      medianMs: median(overhead),
      p99Ms: p99(overhead),
      upstreamMedianMs: median(waited),
      handlerMedianMs: median(handler),
    };
    progress(`  ${row.label}: median ${row.medianMs.toFixed(3)} ms, p99 ${row.p99Ms.toFixed(3)} ms`);
    return row;
  });
}
