/**
 * `npm run bench -- --idempotency` (issue 39; BENCHMARKS.md, "Writes you can retry"): what an
 * `Idempotency-Key` costs, against Amazon's DynamoDB Local on loopback (test/support/dynamodb-local.ts),
 * side by side with the same calls without a key, in one run:
 *
 * - the first call of a fresh execution environment (the execute-v1 bundle, as deployed, in a new
 *   Node process) that creates with a key: the DynamoDB client loaded and three writes, over bare
 *   node; and the same first call without a key. On the pinned Node 24 (Lambda's nodejs24.x line,
 *   x64 here; the budget applies there) and on this machine's Node, interleaved round by round as
 *   bench/cold-start.ts runs them, each Node's rows over its own bare start;
 * - warm calls in one process (the execute-v1 handler over the ERP double, on this machine's
 *   Node): a create without a key, with a fresh key (three writes: the claim, the mark that it is sent, the answer), and a replay (one write), medians.
 *
 * Prints its rows (bench/report.ts `idempotencyRows`); BENCHMARKS.md is written by hand from them.
 * Needs Java (DynamoDB Local).
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { createExecuteV1Runtime, createHandler } from '../lambdas/handlers/execute-v1.ts';
import { loadConfig } from '../lambdas/platform/config.ts';
import { HANDLER_ENTRIES } from '../lambdas/platform/routes.ts';
import { esbuildOptions } from '../lib/proxy-function.ts';
import { startErpDouble } from '../test/erp-double/index.ts';
import { createStateTable, startDynamoDbLocal, stateTableEnv } from '../test/support/dynamodb-local.ts';
import {
  BARE_READY,
  type BenchNode,
  BUNDLE_DIR,
  benchNodes,
  CHILD,
  lambdaModeEnv,
  medians,
  type ProcessCase,
  runNode,
  runRounds,
  scriptCase,
} from './cold-start.ts';
import { ADMIN, postEvent } from './fixtures.ts';
import { median, progress, speedReference } from './stats.ts';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const ROOT = resolve(HERE, '..');
/** Measured rounds of the first calls (`--runs N` changes it). */
export const IDEMPOTENCY_RUNS = 9;
const WARM_CALLS = 150;

/** A first call of a fresh process, over its Node's bare start. */
export interface KeyedFirstCall {
  readonly firstCallMs: number;
  readonly invokeMs: number;
}

/** The first calls of one Node, without and with a key. */
export interface IdempotencyNodeRows {
  readonly node: BenchNode;
  readonly bareNodeMs: number;
  readonly without: KeyedFirstCall;
  readonly with: KeyedFirstCall;
}

export interface IdempotencyResult {
  readonly runs: number;
  /** {@link speedReference} before the first calls and at the end. */
  readonly speedReferenceMs: readonly [number, number];
  /** Per Node, the pinned Node 24 (role `lambda`) first. */
  readonly firstCalls: readonly IdempotencyNodeRows[];
  /** Warm medians in one process of this machine's Node. */
  readonly warm: {
    readonly calls: number;
    readonly withoutMs: number;
    readonly freshKeyMs: number;
    readonly replayMs: number;
  };
}

function createBody(url: string, id: string): string {
  return JSON.stringify({
    id,
    action: 'create',
    model_id: 'res.partner',
    params: [{ name: `Bench ${id}` }],
    erp_instance: { url, db: 'erp_a', user_id: ADMIN.uid, api_key: ADMIN.apiKey },
  });
}

export async function measureIdempotency(options: { runs: number }): Promise<IdempotencyResult> {
  const nodes = benchNodes();
  progress(
    `idempotency bench on ${nodes.map((node) => node.version).join(' and ')}; starting DynamoDB Local`,
  );
  const dynamo = await startDynamoDbLocal();
  const double = await startErpDouble({ mode: '19', recordRequests: false });
  try {
    const table = await createStateTable(dynamo.endpoint, 'bench');
    const stateEnv = stateTableEnv(dynamo.endpoint, table);
    mkdirSync(BUNDLE_DIR, { recursive: true });
    const bundle = join(BUNDLE_DIR, 'execute-v1-idempotency', 'index.mjs');
    await build(esbuildOptions(resolve(ROOT, HANDLER_ENTRIES['execute-v1']), bundle));
    const env = { ...lambdaModeEnv(), ...stateEnv };

    // Cold: bare node, the first call without a key, the first call with one, on both Nodes.
    let sent = 0;
    const firstCall = (kind: 'without' | 'with'): ProcessCase => ({
      id: kind,
      once: async (node) => {
        const id = `cold-${kind}-${sent++}-${Date.now()}`;
        const event = postEvent(
          '/api/erp/execute',
          createBody(double.url, id),
          id,
          kind === 'with' ? { 'idempotency-key': id } : {},
        );
        const result = await runNode([CHILD, bundle, JSON.stringify(event), 'execute-v1'], env, node.path);
        const report = result.report as {
          statusCode: number;
          body: string;
          importMs: number;
          invokeMs: number;
        };
        if (report.statusCode !== 200 || !report.body.includes('"error":null')) {
          throw new Error(
            `first call ${kind} a key on Node ${node.version}: ${report.statusCode} ${report.body}`,
          );
        }
        return {
          readyMs: result.readyMs,
          exitMs: result.exitMs,
          importMs: report.importMs,
          invokeMs: report.invokeMs,
        };
      },
    });
    const speedAtStart = speedReference();
    progress(`  speed reference ${speedAtStart.toFixed(1)} ms; ${options.runs} round(s) of first calls`);
    const samples = await runRounds(
      [scriptCase('bare', BARE_READY, env), firstCall('without'), firstCall('with')],
      nodes,
      options.runs,
      'first calls',
    );
    const firstCalls = nodes.map((node): IdempotencyNodeRows => {
      const of = (id: string) => medians(samples.get(`${node.role} ${id}`));
      const bareNodeMs = of('bare').readyMs;
      const row = (id: string): KeyedFirstCall => ({
        firstCallMs: of(id).readyMs - bareNodeMs,
        invokeMs: of(id).invokeMs,
      });
      return { node, bareNodeMs, without: row('without'), with: row('with') };
    });
    const warm = await measureWarm(double.url, stateEnv);
    const speedAtEnd = speedReference();
    progress(`speed reference at the end: ${speedAtEnd.toFixed(1)} ms`);
    return { runs: options.runs, speedReferenceMs: [speedAtStart, speedAtEnd], firstCalls, warm };
  } finally {
    await double.close();
    await dynamo.stop();
  }
}

/** Warm: one runtime, as one execution environment serves its later calls. */
async function measureWarm(
  erpUrl: string,
  stateEnv: Record<string, string>,
): Promise<IdempotencyResult['warm']> {
  const runtime = createExecuteV1Runtime(
    loadConfig({ PROXY_API_KEY: 'bench-proxy-key-0123456789abcdef', LOG_LEVEL: 'SILENT', ...stateEnv }),
  );
  const handler = createHandler(runtime);
  const context = { getRemainingTimeInMillis: () => 28_000, awsRequestId: 'warm', functionName: 'bench' };
  const warm = { without: [] as number[], first: [] as number[], replay: [] as number[] };
  for (let i = -10; i < WARM_CALLS; i++) {
    for (const kind of ['without', 'first', 'replay'] as const) {
      const id = `warm-${i}-${Date.now()}`;
      const key = kind === 'without' ? undefined : `warm-key-${i}-${Date.now()}`;
      const send = (idem: string | undefined) =>
        handler(
          postEvent('/api/erp/execute', createBody(erpUrl, id), id, idem ? { 'idempotency-key': idem } : {}),
          context as never,
        );
      if (kind === 'replay') await send(key);
      const started = performance.now();
      const answer = await send(key);
      const took = performance.now() - started;
      if (answer.statusCode !== 200) throw new Error(`warm ${kind}: ${answer.statusCode} ${answer.body}`);
      if (i >= 0) warm[kind].push(took);
    }
  }
  await runtime.http.close?.();
  return {
    calls: WARM_CALLS,
    withoutMs: median(warm.without),
    freshKeyMs: median(warm.first),
    replayMs: median(warm.replay),
  };
}
