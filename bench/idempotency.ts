/**
 * `npm run bench -- --idempotency` (issue 39; BENCHMARKS.md, "Writes you can retry"): what an
 * `Idempotency-Key` costs, against Amazon's DynamoDB Local on loopback (test/support/dynamodb-local.ts),
 * side by side with the same calls without a key, in one run:
 *
 * - the first call of a fresh execution environment (the execute-v1 bundle, as deployed, in a new
 *   Node process) that creates with a key: the DynamoDB client loaded and two writes, over bare
 *   node (budget 130 ms, as the first call with secrets); and the same first call without a key;
 * - warm calls in one process (the execute-v1 handler over the ERP double): a create without a
 *   key, with a fresh key (two writes), and a replay (one write), medians.
 *
 * Prints its rows; BENCHMARKS.md is written by hand from them. Needs Java (DynamoDB Local).
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
import { BUNDLE_DIR, lambdaModeEnv, runNode } from './cold-start.ts';
import { ADMIN, postEvent } from './fixtures.ts';
import { median, progress, speedReference } from './stats.ts';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const ROOT = resolve(HERE, '..');
const RUNS = 9;
const WARM_CALLS = 150;
const BARE_READY =
  "(await import('node:fs')).writeSync(3, JSON.stringify({ at: performance.timeOrigin + performance.now() }));";

function createBody(url: string, id: string): string {
  return JSON.stringify({
    id,
    action: 'create',
    model_id: 'res.partner',
    params: [{ name: `Bench ${id}` }],
    erp_instance: { url, db: 'erp_a', user_id: ADMIN.uid, api_key: ADMIN.apiKey },
  });
}

export async function measureIdempotency(): Promise<string[]> {
  const speed = speedReference();
  progress(`idempotency bench: speed reference ${speed.toFixed(1)} ms; starting DynamoDB Local`);
  const dynamo = await startDynamoDbLocal();
  const double = await startErpDouble({ mode: '19', recordRequests: false });
  const rows: string[] = [];
  try {
    const table = await createStateTable(dynamo.endpoint, 'bench');
    const stateEnv = stateTableEnv(dynamo.endpoint, table);
    mkdirSync(BUNDLE_DIR, { recursive: true });
    const bundle = join(BUNDLE_DIR, 'execute-v1-idempotency', 'index.mjs');
    await build(esbuildOptions(resolve(ROOT, HANDLER_ENTRIES['execute-v1']), bundle));
    const env = { ...lambdaModeEnv(), ...stateEnv };
    const child = join(HERE, 'cold-start-child.mjs');

    // Cold: bare node, the first call without a key, the first call with one (one unmeasured round).
    const bare: number[] = [];
    const cold = { without: [] as number[], with: [] as number[] };
    const invoke = { without: [] as number[], with: [] as number[] };
    for (let run = -1; run < RUNS; run++) {
      const bareRun = await runNode(['--input-type=module', '-e', BARE_READY], env);
      for (const kind of ['without', 'with'] as const) {
        const id = `cold-${kind}-${run}-${Date.now()}`;
        const event = postEvent(
          '/api/erp/execute',
          createBody(double.url, id),
          id,
          kind === 'with' ? { 'idempotency-key': id } : {},
        );
        const result = await runNode([child, bundle, JSON.stringify(event), 'execute-v1'], env);
        const report = result.report as { statusCode: number; body: string; invokeMs: number };
        if (report.statusCode !== 200 || !report.body.includes('"error":null')) {
          throw new Error(`first call ${kind} a key: ${report.statusCode} ${report.body}`);
        }
        if (run >= 0) {
          cold[kind].push(result.readyMs);
          invoke[kind].push(report.invokeMs);
        }
      }
      if (run >= 0) bare.push(bareRun.readyMs);
    }
    const bareMs = median(bare);
    for (const kind of ['without', 'with'] as const) {
      rows.push(
        `| First call, execute-v1 bundle, a create ${kind} an Idempotency-Key (DynamoDB Local) | ${(median(cold[kind]) - bareMs).toFixed(1)} ms over bare node (first invocation ${median(invoke[kind]).toFixed(1)} ms) | ${kind === 'with' ? '≤ 130 ms' : ''} |`,
      );
    }

    // Warm: one runtime, as one execution environment serves its later calls.
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
            postEvent(
              '/api/erp/execute',
              createBody(double.url, id),
              id,
              idem ? { 'idempotency-key': idem } : {},
            ),
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
    const without = median(warm.without);
    rows.push(
      `| Warm create, execute-v1 handler over the ERP double, without a key | median ${without.toFixed(3)} ms (${WARM_CALLS} calls) | |`,
      `| Warm create with a fresh key (PutItem + UpdateItem on DynamoDB Local) | median ${median(warm.first).toFixed(3)} ms: +${(median(warm.first) - without).toFixed(3)} ms | |`,
      `| Warm replay of a key (one PutItem refused with the record; no ERP call) | median ${median(warm.replay).toFixed(3)} ms | |`,
    );
    await runtime.http.close?.();
  } finally {
    await double.close();
    await dynamo.stop();
  }
  progress(`speed reference at the end: ${speedReference().toFixed(1)} ms`);
  return rows;
}
