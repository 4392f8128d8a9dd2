/**
 * What `@middy/http-json-body-parser` costs the body step (issue 34: the design card names it),
 * side by side with the scanner alone, in one process, interleaved:
 *
 * - **scanner alone**: `readJsonDocument` (`JSON.parse` for the value, one scan of
 *   `platform/json.ts` for the depth and each top-level member's text), what the step did before;
 * - **with the parser**: `inboundBodyOf`, what the step does now: the package's `before` on a copy
 *   of the event (its `JSON.parse`), then the same scan.
 *
 * Bodies: the README's v1 `search_read` envelope (about 300 bytes), and v1 `create` calls whose
 * `params` carry 100 KB, 1 MB and 5 MB of records. Each round times a batch of one kind, then a
 * batch of the other (the order alternating), so both meet the same drift of the machine.
 */
import { performance } from 'node:perf_hooks';
import { inboundBodyOf } from '../lambdas/middleware/json-body.ts';
import { readJsonDocument } from '../lambdas/platform/json.ts';
import { median } from './stats.ts';

export interface BodyParseRow {
  readonly label: string;
  readonly bytes: number;
  /** Median per body, ms: scanner alone. */
  readonly scannerMs: number;
  /** Median per body, ms: the package's parser and the scan. */
  readonly parserMs: number;
  readonly rounds: number;
}

const INSTANCE = {
  url: 'http://127.0.0.1:8788',
  db: 'erp_a',
  user_id: 2,
  api_key: '3f1c9a2b7d4e6f8091a2b3c4d5e6f708192a3b4c',
};

function createBody(bytes: number): string {
  const record = {
    name: 'Acme Corporation',
    email: 'acme_corp@example.com',
    street: 'Rue de la Paix 1',
    score: 1.0,
  };
  const one = JSON.stringify(record).length + 1;
  const records = Array.from({ length: Math.max(1, Math.floor(bytes / one)) }, (_, i) => ({
    ...record,
    ref: i,
  }));
  return JSON.stringify({
    id: '01J9Z3',
    action: 'create',
    model_id: 'res.partner',
    params: [records],
    erp_instance: INSTANCE,
  });
}

const BODIES: readonly { label: string; text: string; batch: number; rounds: number }[] = [
  {
    label: 'v1 search_read envelope',
    text: JSON.stringify({
      id: '01J9Z3',
      action: 'search_read',
      model_id: 'res.partner',
      params: [[['is_company', '=', true]]],
      keyword: { fields: ['name', 'email'], limit: 2, order: 'name asc' },
      erp_instance: INSTANCE,
    }),
    batch: 2000,
    rounds: 30,
  },
  { label: 'v1 create, 100 KB of records', text: createBody(100 * 1024), batch: 40, rounds: 30 },
  { label: 'v1 create, 1 MB of records', text: createBody(1024 * 1024), batch: 4, rounds: 30 },
  { label: 'v1 create, 5 MB of records', text: createBody(5 * 1024 * 1024), batch: 1, rounds: 30 },
];

async function timeBatch(run: () => unknown, batch: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < batch; i += 1) await run();
  return (performance.now() - started) / batch;
}

/** Both ways for each body; medians of the per-body time of each round. */
export async function measureBodyParse(): Promise<BodyParseRow[]> {
  const rows: BodyParseRow[] = [];
  for (const { label, text, batch, rounds } of BODIES) {
    const scanner = () => {
      const document = readJsonDocument(text);
      if (!document.ok) throw new Error('bench body is not JSON');
    };
    const parser = async () => {
      const body = await inboundBodyOf(text);
      if (!body.ok) throw new Error('bench body is not JSON');
    };
    // Warm both paths up (the JIT, and the parser's module).
    await timeBatch(scanner, batch);
    await timeBatch(parser, batch);
    const scannerTimes: number[] = [];
    const parserTimes: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      if (round % 2 === 0) {
        scannerTimes.push(await timeBatch(scanner, batch));
        parserTimes.push(await timeBatch(parser, batch));
      } else {
        parserTimes.push(await timeBatch(parser, batch));
        scannerTimes.push(await timeBatch(scanner, batch));
      }
    }
    rows.push({
      label,
      bytes: Buffer.byteLength(text),
      scannerMs: median(scannerTimes),
      parserMs: median(parserTimes),
      rounds,
    });
  }
  return rows;
}
