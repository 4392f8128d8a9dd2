/**
 * One large-answer case, alone in a fresh process (run with `node --expose-gc --import tsx`):
 * the handler of `kind` (`createHandler` over a local runtime at LOG_LEVEL INFO) is warmed up
 * with 16 KB answers, then called for a `search_read` whose upstream answer is `size`, with or
 * without `accept-encoding: gzip`. Peak memory is the growth of `resourceUsage().maxRSS` over
 * its value just before the first large call; latency is taken over that call and a few more.
 * Usage: large-answer-child.ts <v1|v2> <size> <gzip|identity> <upstream-url> <runs>
 */

import type { ProxyContext } from '../lambdas/core/request-facts.ts';
import { createHandler as createV1 } from '../lambdas/handlers/execute-v1.ts';
import { createHandler as createV2 } from '../lambdas/handlers/execute-v2.ts';
import { createRuntime } from '../lambdas/handlers/runtime.ts';
import { buildContext } from '../lambdas/local/server.ts';
import { loadConfig } from '../lambdas/platform/config.ts';
import { BENCH_PROXY_KEY, postEvent, ROUTE_OF, searchReadBody } from './fixtures.ts';

type Invoke = (
  event: unknown,
  context: unknown,
) => Promise<{
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded?: boolean;
}>;

export interface LargeAnswerReport {
  readonly baselineMaxRssKb: number;
  readonly rssBeforeKb: number;
  readonly peakMaxRssKb: number;
  readonly addedMs: number[];
  readonly upstreamMs: number[];
  readonly statusCode: number;
  /** The envelope's error code, `null` for a result. */
  readonly errorCode: number | null;
  /** Bytes of the response body as the client receives it (compressed when gzip). */
  readonly responseBytes: number;
}

const [kind, size, encoding, upstreamUrl, runsArg] = process.argv.slice(2) as [
  'v1' | 'v2',
  string,
  'gzip' | 'identity',
  string,
  string,
];
const runs = Number(runsArg);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

const runtime = createRuntime(loadConfig({ PROXY_API_KEY: BENCH_PROXY_KEY, LOG_LEVEL: 'INFO' }));
const handler = (kind === 'v1' ? createV1(runtime) : createV2(runtime)) as unknown as Invoke;
const { path, fn } = ROUTE_OF[kind];
const headers: Record<string, string> = encoding === 'gzip' ? { 'accept-encoding': 'gzip' } : {};
let requestNo = 0;

async function call(sizeName: string) {
  const requestId = `large-${++requestNo}`;
  const event = postEvent(
    path,
    JSON.stringify(searchReadBody(kind, `${upstreamUrl}/${sizeName}`)),
    requestId,
    headers,
  );
  const context = buildContext(fn, requestId) as ProxyContext;
  const started = performance.now();
  const response = await handler(event, context);
  const elapsed = performance.now() - started;
  const upstreamMs = context.record?.facts.upstreamMs ?? 0;
  return { response, addedMs: elapsed - upstreamMs, upstreamMs };
}

function errorCodeOf(response: Awaited<ReturnType<Invoke>>): number | null {
  // Error envelopes are small and never compressed; a large result ends with `"error":null}`.
  if (response.isBase64Encoded || response.body.endsWith('"error":null}')) return null;
  const parsed = JSON.parse(response.body) as { error?: { code?: number } | null };
  return parsed.error?.code ?? null;
}

for (let i = 0; i < 5; i++) await call('16kb');
gc();
gc();
const baselineMaxRssKb = process.resourceUsage().maxRSS;
const rssBeforeKb = Math.round(process.memoryUsage.rss() / 1024);

const first = await call(size);
const peakMaxRssKb = process.resourceUsage().maxRSS;
const addedMs = [first.addedMs];
const upstreamMs = [first.upstreamMs];
const responseBytes = first.response.isBase64Encoded
  ? Buffer.byteLength(first.response.body, 'base64')
  : Buffer.byteLength(first.response.body, 'utf8');
const report: LargeAnswerReport = {
  baselineMaxRssKb,
  rssBeforeKb,
  peakMaxRssKb,
  addedMs,
  upstreamMs,
  statusCode: first.response.statusCode,
  errorCode: errorCodeOf(first.response),
  responseBytes,
};
for (let i = 1; i < runs; i++) {
  gc();
  const next = await call(size);
  addedMs.push(next.addedMs);
  upstreamMs.push(next.upstreamMs);
}
process.send?.(report, () => process.exit(0));
