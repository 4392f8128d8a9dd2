/**
 * `npm run bench -- --audit` (issue 56; BENCHMARKS.md, "The audit"): what the audit of a write
 * costs, side by side in one run, in one process (the execute-v2 handler over the ERP double, on
 * this machine's Node), medians:
 *
 * - a `create` of 1 KB, 100 KB and 5 MB of values with `AUDIT=off`, with the embedded ring, and
 *   with the audit table on Amazon's DynamoDB Local on loopback (which is not AWS: its round trips
 *   are this machine's, not a region's);
 * - the store operations and round trips one audited write makes (counted, not assumed);
 * - the values' digest alone (the canonical JSON and its HMAC) at each size.
 *
 * Prints its rows; BENCHMARKS.md is written by hand from them. Needs Java (DynamoDB Local).
 */
import { callContent } from '../lambdas/core/audit/call-content.ts';
import { createExecuteV2Runtime, createHandler } from '../lambdas/handlers/execute-v2.ts';
import type { AuditStore, AuditWriter } from '../lambdas/platform/audit/audit-store.ts';
import { createAuditWriter } from '../lambdas/platform/audit/audit-store-choice.ts';
import { digestKeyOf, hmacOf } from '../lambdas/platform/audit/digest-key.ts';
import { loadConfig } from '../lambdas/platform/config.ts';
import { startErpDouble } from '../test/erp-double/index.ts';
import { auditTableEnv, createAuditTable, startDynamoDbLocal } from '../test/support/dynamodb-local.ts';
import { ADMIN, BENCH_PROXY_KEY, postEvent } from './fixtures.ts';
import type { Row } from './report.ts';
import { median, progress } from './stats.ts';

const CALLS = { small: 200, medium: 60, large: 8 } as const;
const SIZES = [
  { label: '1 KB', bytes: 1024, calls: CALLS.small },
  { label: '100 KB', bytes: 100 * 1024, calls: CALLS.medium },
  { label: '5 MB', bytes: 5 * 1024 * 1024, calls: CALLS.large },
] as const;

/** A store that counts what the audit asks of it: operations, and the round trips they take. */
function counted(store: AuditWriter): { store: AuditStore; operations: number; roundTrips: number } {
  const tally = { store: store as AuditStore, operations: 0, roundTrips: 0 };
  tally.store = {
    kind: store.kind,
    create: (record, expiresAt) => {
      tally.operations += 1;
      return store.create(record, expiresAt);
    },
    finish: (record, expiresAt, options) => {
      tally.operations += 1;
      return store.finish(record, expiresAt, options);
    },
    point: (record, pointers, expiresAt) => {
      tally.operations += pointers.length;
      return store.point(record, pointers, expiresAt);
    },
    list: async () => ({ records: [] }),
    readWindow: async () => [],
  };
  return tally;
}

function createBody(url: string, id: string, bytes: number): string {
  return JSON.stringify({
    id,
    model_id: 'res.partner',
    method: 'create',
    kwargs: { vals_list: [{ name: `Bench ${id}`, comment: 'x'.repeat(bytes) }] },
    erp_instance: { url, db: 'erp_a', api_key: ADMIN.apiKey },
  });
}

type Mode = 'off' | 'ring' | 'dynamodb';

export interface AuditBenchResult {
  readonly rows: Record<string, Record<Mode, number>>;
  readonly digestMs: Record<string, number>;
  readonly perWrite: { readonly operations: number; readonly roundTrips: number };
}

export async function measureAudit(): Promise<AuditBenchResult> {
  progress('audit bench: starting DynamoDB Local');
  const dynamo = await startDynamoDbLocal();
  const double = await startErpDouble({ mode: '19', recordRequests: false });
  try {
    const table = await createAuditTable(dynamo.endpoint, 'bench');
    const base = { PROXY_API_KEY: BENCH_PROXY_KEY, LOG_LEVEL: 'SILENT', AUDIT_DIGEST_KEY: 'b'.repeat(40) };
    const envs: Record<Mode, Record<string, string>> = {
      off: { ...base, AUDIT: 'off' },
      ring: { ...base, AUDIT: 'on' },
      dynamodb: { ...base, AUDIT: 'on', ...auditTableEnv(dynamo.endpoint, table) },
    };
    const rows: Record<string, Record<Mode, number>> = {};
    let perWrite = { operations: 0, roundTrips: 2 };
    const handlers = (Object.keys(envs) as Mode[]).map((mode) => {
      const config = loadConfig(envs[mode]);
      const writer = createAuditWriter(config);
      const tally = writer === undefined ? undefined : counted(writer);
      const runtime = createExecuteV2Runtime(config, tally === undefined ? {} : { auditStore: tally.store });
      return { mode, runtime, tally, handler: createHandler(runtime) };
    });
    const context = { getRemainingTimeInMillis: () => 28_000, awsRequestId: 'audit', functionName: 'bench' };
    for (const size of SIZES) {
      progress(`  ${size.label}: ${size.calls} creates per mode, interleaved`);
      const times: Record<Mode, number[]> = { off: [], ring: [], dynamodb: [] };
      for (let i = -3; i < size.calls; i++) {
        for (const { mode, handler, tally } of handlers) {
          const id = `${mode}-${size.label}-${i}-${Date.now()}`;
          const before = tally?.operations ?? 0;
          const started = performance.now();
          const answer = await handler(
            postEvent('/v2/erp/execute', createBody(double.url, id, size.bytes), id),
            context as never,
          );
          const took = performance.now() - started;
          if (answer.statusCode !== 200)
            throw new Error(`audit bench ${mode}: ${answer.statusCode} ${answer.body.slice(0, 300)}`);
          if (i >= 0) times[mode].push(took);
          if (mode === 'dynamodb')
            perWrite = { operations: (tally?.operations ?? 0) - before, roundTrips: 2 };
        }
      }
      rows[size.label] = {
        off: median(times.off),
        ring: median(times.ring),
        dynamodb: median(times.dynamodb),
      };
    }
    for (const { runtime } of handlers) await runtime.http.close?.();
    const key = digestKeyOf('d'.repeat(40));
    const digestMs: Record<string, number> = {};
    for (const size of SIZES) {
      const body = JSON.parse(createBody('http://erp', 'd', size.bytes)) as { kwargs: unknown };
      const call = {
        baseUrl: new URL('http://erp'),
        db: 'erp_a',
        apiKey: 'k',
        model: 'res.partner',
        method: 'create',
        kwargsJson: JSON.stringify(body.kwargs),
      };
      const samples: number[] = [];
      for (let i = -2; i < Math.min(size.calls, 50); i++) {
        const started = performance.now();
        hmacOf(key, `values\n${callContent(call).valuesText}`);
        if (i >= 0) samples.push(performance.now() - started);
      }
      digestMs[size.label] = median(samples);
    }
    return { rows, digestMs, perWrite };
  } finally {
    await double.close();
    await dynamo.stop();
  }
}

const ms = (value: number): string => `${value.toFixed(2)} ms`;

/** The bench's rows, for the table on stdout. */
export function auditRows(result: AuditBenchResult): Row[] {
  const area = `Audited writes (Node ${process.version}, in-process)`;
  const rows: Row[] = [];
  for (const [size, medians] of Object.entries(result.rows)) {
    rows.push({
      area,
      measurement: `create of ${size} of values, execute-v2 handler over the ERP double: AUDIT=off / embedded ring / DynamoDB Local`,
      result: `median ${ms(medians.off)} / ${ms(medians.ring)} (+${ms(medians.ring - medians.off)}) / ${ms(medians.dynamodb)} (+${ms(medians.dynamodb - medians.off)})`,
      budget: '—',
    });
  }
  rows.push({
    area,
    measurement:
      'store writes of one audited create naming no ids (pending PutItem; end UpdateItem and one pointer PutItem for the created id)',
    result: `${result.perWrite.operations} writes in ${result.perWrite.roundTrips} round trips (DynamoDB Local, not AWS)`,
    budget: '—',
  });
  for (const [size, value] of Object.entries(result.digestMs)) {
    rows.push({
      area,
      measurement: `values digest alone (canonical JSON + HMAC-SHA-256), ${size}`,
      result: `median ${ms(value)}`,
      budget: '—',
    });
  }
  return rows;
}
