/**
 * The mcp function's handler overhead of two trees in one process (`npm run bench:trees --
 * <before> <after> --mcp`, issue 55): each tree's own `createMcpRuntime` and `createHandler`
 * (loaded from its own files and node_modules) serve a `tools/call` of `search_count` (the
 * cold-start bench's event, bench/fixtures.ts) against a loopback upstream that answers at once,
 * the trees taking turns in ABBA blocks over many rounds, so the machine's drift hits both alike.
 * Per call, overhead = handler wall time − `context.record?.facts.upstreamMs`, as the execute rows
 * of bench/handler-overhead.ts. Two callers: a proxy key without a policy, and one whose policy
 * has the `methods` rule (its rules read the tool's ERP request: at the policy step since issue 55).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ProxyContext } from '../lambdas/core/request-facts.ts';
import { buildContext } from '../lambdas/local/server.ts';
import { BENCH_PROXY_KEY, isGoodAnswer, mcpToolCallEvent } from './fixtures.ts';
import { median } from './stats.ts';
import { sinkStdout } from './stdout-sink.ts';
import { startSmallUpstream } from './upstreams.ts';

type Invoke = (
  event: unknown,
  context: unknown,
) => Promise<{ statusCode: number; headers: Record<string, string>; body: string }>;

/** The key of the caller whose policy has a `methods` rule. */
const RULED_KEY = 'bench-mcp-ruled-key-0123456789abcdef';

/** The callers measured, by label: the key each presents. */
export const MCP_CALLERS: readonly { readonly label: string; readonly key: string }[] = [
  { label: 'mcp tools/call search_count, a key without a policy', key: BENCH_PROXY_KEY },
  { label: 'mcp tools/call search_count, a key with a methods rule', key: RULED_KEY },
];

const KEYS = JSON.stringify({
  keys: [
    { name: 'bench', key: BENCH_PROXY_KEY },
    { name: 'ruled', key: RULED_KEY, policy: { methods: { 'res.partner': ['search_count', 'read'] } } },
  ],
});

/** One tree's mcp handler, built from its own modules. */
async function treeHandler(tree: string): Promise<{ invoke: Invoke; close: () => Promise<void> }> {
  const load = (file: string) => import(pathToFileURL(resolve(tree, file)).href);
  const [config, mcp] = await Promise.all([
    load('lambdas/platform/config.ts'),
    load('lambdas/handlers/mcp.ts'),
  ]);
  const runtime = mcp.createMcpRuntime(config.loadConfig({ PROXY_API_KEYS: KEYS, LOG_LEVEL: 'INFO' }));
  return { invoke: mcp.createHandler(runtime) as Invoke, close: () => runtime.http.close() };
}

export interface McpOverheadRow {
  readonly label: string;
  readonly tree: string;
  readonly medianMs: number;
}

/**
 * The medians of `trees` (each a checkout with its node_modules) for each caller of
 * {@link MCP_CALLERS}, `iterations` calls each, in `rounds` ABBA rounds.
 */
export async function measureMcpOverhead(
  trees: readonly string[],
  options: { readonly warmup: number; readonly iterations: number; readonly rounds: number },
): Promise<McpOverheadRow[]> {
  const upstream = await startSmallUpstream();
  const handlers = await Promise.all(trees.map(treeHandler));
  const sink = sinkStdout();
  let requestNo = 0;
  const call = async (invoke: Invoke, key: string): Promise<number> => {
    const requestId = `bench-mcp-${++requestNo}`;
    const event = mcpToolCallEvent(upstream.url, requestId);
    event.headers['x-api-key'] = key;
    const context = buildContext('mcp', requestId) as ProxyContext;
    const started = performance.now();
    const response = await invoke(event, context);
    const elapsed = performance.now() - started;
    if (!isGoodAnswer('mcp', response.statusCode, response.body)) {
      throw new Error(`mcp: unexpected answer ${response.statusCode} ${response.body.slice(0, 300)}`);
    }
    const waited = context.record?.facts.upstreamMs;
    if (waited === undefined) throw new Error('mcp: the handler did not call the upstream');
    return elapsed - waited;
  };
  const samples = new Map<string, number[]>();
  try {
    for (let i = 0; i < options.warmup; i++)
      for (const handler of handlers)
        for (const caller of MCP_CALLERS) await call(handler.invoke, caller.key);
    const perBlock = Math.ceil(options.iterations / options.rounds);
    for (let round = 0; round < options.rounds; round++) {
      const order =
        round % 2 === 0 ? trees.map((_, index) => index) : trees.map((_, index) => index).reverse();
      for (const caller of MCP_CALLERS) {
        for (const index of order) {
          const key = `${caller.label}\n${index}`;
          const list = samples.get(key) ?? [];
          for (let k = 0; k < perBlock; k++)
            list.push(await call((handlers[index] as (typeof handlers)[number]).invoke, caller.key));
          samples.set(key, list);
        }
      }
    }
  } finally {
    sink.restore();
    await Promise.all(handlers.map((handler) => handler.close()));
    await upstream.close();
  }
  return MCP_CALLERS.flatMap((caller) =>
    trees.map((tree, index) => ({
      label: caller.label,
      tree,
      medianMs: median(samples.get(`${caller.label}\n${index}`) ?? []),
    })),
  );
}
