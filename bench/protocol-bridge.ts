/**
 * v1 over `/jsonrpc` against v1 over JSON-2 (README, "One envelope for every ERP version"): the
 * same v1 `search_count`, sequential calls interleaved round by round so that the VM's drifts hit
 * every variant alike. Against the ERP double always; against the real ERP too when `ERP_LIVE_*`
 * is set, next to the same call sent straight to the ERP (`/jsonrpc` without `X-Odoo-Database`,
 * as a client would send it, and JSON-2).
 */
import { startErpDouble } from '../test/erp-double/index.ts';
import { startProxy } from '../test/support/proxy-harness.ts';
import { smallBody } from './fixtures.ts';
import { median } from './stats.ts';

export interface BridgeRow {
  /** `double` or `live`. */
  readonly erp: 'double' | 'live';
  readonly variant: BridgeVariant;
  readonly medianMs: number;
  readonly calls: number;
}

export type BridgeVariant =
  | 'direct /jsonrpc without X-Odoo-Database'
  | 'direct JSON-2'
  | 'proxy, default settings (/jsonrpc)'
  | 'proxy, ERP_V1_TRANSPORT=json2';

interface LiveTarget {
  readonly url: string;
  readonly db: string;
  readonly uid: number;
  readonly key: string;
}

/** The live ERP from `ERP_LIVE_*`, or `undefined` when it is not set. */
export function liveTarget(env: NodeJS.ProcessEnv = process.env): LiveTarget | undefined {
  const { ERP_LIVE_URL: url, ERP_LIVE_DB: db, ERP_LIVE_UID: uid, ERP_LIVE_KEY: key } = env;
  if (!url || !db || !uid || !key || !Number.isInteger(Number(uid))) return undefined;
  return { url, db, uid: Number(uid), key };
}

async function post(url: string, body: string, headers: Record<string, string>): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await response.text();
  if (response.status !== 200 || text.includes('"error":{')) {
    throw new Error(`bridge bench: ${url} answered ${response.status} ${text.slice(0, 200)}`);
  }
}

/** Measures each variant `calls` times (after `warmup` each), interleaved; medians. */
async function interleave(
  erp: BridgeRow['erp'],
  variants: ReadonlyArray<readonly [BridgeVariant, () => Promise<void>]>,
  warmup: number,
  calls: number,
): Promise<BridgeRow[]> {
  for (let i = 0; i < warmup; i += 1) for (const [, run] of variants) await run();
  const times = variants.map(() => [] as number[]);
  for (let i = 0; i < calls; i += 1) {
    for (const [index, [, run]] of variants.entries()) {
      const started = performance.now();
      await run();
      times[index]?.push(performance.now() - started);
    }
  }
  return variants.map(([variant], index) => ({ erp, variant, medianMs: median(times[index] ?? []), calls }));
}

export async function measureProtocolBridge(options: {
  warmup: number;
  calls: number;
}): Promise<BridgeRow[]> {
  const quiet = {
    LOG_LEVEL: 'SILENT',
    ERP_ALLOWED_TARGETS: process.env.ERP_ALLOWED_TARGETS || '127.0.0.0/8',
  };
  const byDefault = await startProxy({ env: quiet });
  const json2 = await startProxy({ env: { ...quiet, ERP_V1_TRANSPORT: 'json2' } });
  const rows: BridgeRow[] = [];
  try {
    const double = await startErpDouble({ mode: '19', recordRequests: false });
    try {
      const body = smallBody('v1', double.url);
      rows.push(
        ...(await interleave(
          'double',
          [
            ['proxy, default settings (/jsonrpc)', () => byDefault.post('/api/erp/execute', body).then(ok)],
            ['proxy, ERP_V1_TRANSPORT=json2', () => json2.post('/api/erp/execute', body).then(ok)],
          ],
          options.warmup,
          options.calls,
        )),
      );
    } finally {
      await double.close();
    }

    const live = liveTarget();
    if (live) {
      const v1 = {
        id: 'bench-live',
        action: 'search_count',
        model_id: 'res.partner',
        params: [[]],
        erp_instance: { url: live.url, db: live.db, user_id: live.uid, api_key: live.key },
      };
      const rpc = JSON.stringify({
        jsonrpc: '2.0',
        method: 'call',
        params: {
          service: 'object',
          method: 'execute_kw',
          args: [live.db, live.uid, live.key, 'res.partner', 'search_count', [[]]],
        },
        id: 1,
      });
      const base = live.url.replace(/\/+$/, '');
      rows.push(
        ...(await interleave(
          'live',
          [
            ['direct /jsonrpc without X-Odoo-Database', () => post(`${base}/jsonrpc`, rpc, {})],
            [
              'direct JSON-2',
              () =>
                post(`${base}/json/2/res.partner/search_count`, '{"domain":[]}', {
                  authorization: `bearer ${live.key}`,
                  'x-odoo-database': live.db,
                }),
            ],
            ['proxy, default settings (/jsonrpc)', () => byDefault.post('/api/erp/execute', v1).then(ok)],
            ['proxy, ERP_V1_TRANSPORT=json2', () => json2.post('/api/erp/execute', v1).then(ok)],
          ],
          options.warmup,
          options.calls,
        )),
      );
    }
  } finally {
    await byDefault.close();
    await json2.close();
  }
  return rows;
}

function ok(answer: { status: number; text: string }): void {
  if (answer.status !== 200 || !answer.text.includes('"error":null')) {
    throw new Error(`bridge bench: the proxy answered ${answer.status} ${answer.text.slice(0, 200)}`);
  }
}
