/**
 * Proxy overhead: the same `search_count` on `res.partner` sent straight to the ERP double's
 * `/jsonrpc`, then through the local proxy (v1 execute_kw and v2 JSON-2). The difference between
 * a direct call and its proxied twin is what the proxy adds per call (validation, auth, license,
 * target policy, logging, metrics, one extra loopback hop). Run with `npx vitest bench --run bench/`.
 */
import { afterAll, beforeAll, bench, describe } from 'vitest';
import { DOUBLE_USERS, type ErpDouble, startErpDouble } from '../test/erp-double/index.ts';
import { type ProxyHarness, startProxy } from '../test/support/proxy-harness.ts';

const admin = DOUBLE_USERS.find(
  (user) => user.db === 'erp_a' && user.uid === 2 && !user.expired && !user.limited,
)!;

let double: ErpDouble;
let proxy: ProxyHarness;

beforeAll(async () => {
  double = await startErpDouble({ mode: '19' });
  // The harness logs at DEBUG for the leak guard; a benchmark measures the production level.
  proxy = await startProxy({ LOG_LEVEL: 'WARN' });
});

afterAll(async () => {
  await proxy?.close();
  await double?.close();
});

/** The double records every request; keep that from growing over thousands of iterations. */
function forgetRequests(): void {
  double.requests.length = 0;
}

function expectCount(value: unknown, via: string): void {
  if (typeof value !== 'number') {
    throw new Error(`${via}: search_count did not return a number: ${JSON.stringify(value)}`);
  }
}

interface Envelope {
  readonly result: unknown;
  readonly error: { readonly code: number; readonly message: string } | null;
}

function resultOf(answer: { status: number; json: unknown }, via: string): unknown {
  const envelope = answer.json as Envelope | undefined;
  if (answer.status !== 200 || !envelope || envelope.error) {
    throw new Error(`${via}: HTTP ${answer.status} ${JSON.stringify(envelope?.error ?? null)}`);
  }
  return envelope.result;
}

let rpcId = 0;

/** Loopback round trips vary with the machine's load: sample for a second after a warm-up. */
const BENCH_OPTIONS = { time: 1_000, warmupTime: 250 } as const;

describe('search_count on res.partner', () => {
  bench(
    'direct: ERP double /jsonrpc execute_kw',
    async () => {
      rpcId += 1;
      const response = await fetch(`${double.url}/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          method: 'call',
          params: {
            service: 'object',
            method: 'execute_kw',
            args: ['erp_a', admin.uid, admin.apiKey, 'res.partner', 'search_count', [[]], {}],
          },
          id: rpcId,
        }),
      });
      const answer = (await response.json()) as { result?: unknown; error?: unknown };
      expectCount(answer.result, 'direct');
      forgetRequests();
    },
    BENCH_OPTIONS,
  );

  bench(
    'direct: ERP double /json/2/res.partner/search_count',
    async () => {
      const response = await fetch(`${double.url}/json/2/res.partner/search_count`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          authorization: `bearer ${admin.apiKey}`,
          'x-odoo-database': 'erp_a',
        },
        body: JSON.stringify({ domain: [] }),
      });
      expectCount(await response.json(), 'direct JSON-2');
      forgetRequests();
    },
    BENCH_OPTIONS,
  );

  bench(
    'proxy v1: POST /api/erp/execute',
    async () => {
      const answer = await proxy.post('/api/erp/execute', {
        id: 'bench-v1',
        action: 'search_count',
        model_id: 'res.partner',
        params: [[]],
        erp_instance: { url: double.url, db: 'erp_a', user_id: admin.uid, api_key: admin.apiKey },
      });
      expectCount(resultOf(answer, 'proxy v1'), 'proxy v1');
      forgetRequests();
    },
    BENCH_OPTIONS,
  );

  bench(
    'proxy v2: POST /v2/erp/execute',
    async () => {
      const answer = await proxy.post('/v2/erp/execute', {
        id: 'bench-v2',
        model_id: 'res.partner',
        method: 'search_count',
        kwargs: { domain: [] },
        erp_instance: { url: double.url, db: 'erp_a', api_key: admin.apiKey },
      });
      expectCount(resultOf(answer, 'proxy v2'), 'proxy v2');
      forgetRequests();
    },
    BENCH_OPTIONS,
  );
});
