/**
 * `npm run bench -- --brakes` (bench/brakes-overhead.ts, issue 58): the copy the bench makes old
 * before each call costs that call exactly one read of the store, through the real execute-v1
 * handler (the key check finds the copy old and reads it; the gate's step finds it fresh), and the
 * handler takes its brakes from that copy; a fresh copy reads nothing. And the rows it prints
 * (bench/report.ts `brakesRows`, `brakesFirstCallRows`), from synthetic results. The embedded
 * store: no DynamoDB Local here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANOTHER_KEYS_BRAKE,
  BRAKES_BENCH_KEYS,
  type BrakesFirstCalls,
  type BrakesRow,
  CountingBrakesStore,
  readingEveryCall,
} from '../../bench/brakes-overhead.ts';
import type { BenchNode } from '../../bench/cold-start.ts';
import { benchBrake, postEvent, ROUTE_OF, smallBody } from '../../bench/fixtures.ts';
import { brakesFirstCallRows, brakesRows, renderTable } from '../../bench/report.ts';
import { type RunningServer, startSmallUpstream } from '../../bench/upstreams.ts';
import type { ProxyContext } from '../../lambdas/core/request-facts.ts';
import { createHandler } from '../../lambdas/handlers/execute-v1.ts';
import { createRuntime, type Runtime } from '../../lambdas/handlers/runtime.ts';
import { buildContext } from '../../lambdas/local/server.ts';
import type { Brake } from '../../lambdas/platform/brakes/brakes.ts';
import type { BrakesReadFailure } from '../../lambdas/platform/brakes/brakes-source.ts';
import { EmbeddedBrakesStore } from '../../lambdas/platform/brakes/brakes-store.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';

type Invoke = (event: unknown, context: unknown) => Promise<{ statusCode: number; body: string }>;

let upstream: RunningServer;
const runtimes: Runtime[] = [];

beforeAll(async () => {
  upstream = await startSmallUpstream();
});

afterAll(async () => {
  for (const runtime of runtimes) await runtime.http.close();
  await upstream.close();
});

/** The bench's runtime over an embedded store holding `brakes`, its handler reading every call's copy. */
async function readingRuntime(brakes: readonly Brake[]) {
  const embedded = new EmbeddedBrakesStore();
  await embedded.write(brakes, 0);
  const store = new CountingBrakesStore(embedded);
  const failures: BrakesReadFailure[] = [];
  const built = createRuntime(loadConfig({ LOG_LEVEL: 'SILENT', PROXY_API_KEYS: BRAKES_BENCH_KEYS }), {
    brakesStore: store,
  });
  runtimes.push(built);
  const source = readingEveryCall(store, (failure) => failures.push(failure));
  const handler = createHandler({ ...built, brakes: source }) as unknown as Invoke;
  let requestNo = 0;
  const call = () => {
    const requestId = `bench-brakes-test-${++requestNo}`;
    const { path, fn } = ROUTE_OF.v1;
    const body = JSON.stringify(smallBody('v1', upstream.url));
    return handler(postEvent(path, body, requestId), buildContext(fn, requestId) as ProxyContext);
  };
  return { store, source, failures, call };
}

describe('the copy the bench makes old before each call', () => {
  it('costs each call one read, and a fresh copy none', async () => {
    const { store, source, failures, call } = await readingRuntime([ANOTHER_KEYS_BRAKE]);
    for (let i = 0; i < 3; i++) {
      source.expire();
      const before = store.reads;
      const answer = await call();
      expect(answer.statusCode).toBe(200);
      expect(answer.body.endsWith('"error":null}')).toBe(true);
      expect(store.reads - before).toBe(1);
    }
    const before = store.reads;
    await call();
    await call();
    expect(store.reads).toBe(before);
    expect(failures).toEqual([]);
  });

  it("is the handler's brakes: a brake on the caller's key, read through it, refuses the call", async () => {
    const { source, call } = await readingRuntime([benchBrake('brk-bench-self', { key: 'bench' }, 'all')]);
    source.expire();
    const answer = await call();
    expect(answer.body).toContain('-32012');
  });
});

function row(which: BrakesRow['case'], medianMs: number, reads: number, failedReads = 0): BrakesRow {
  return {
    case: which,
    label: `execute-v1 (search_count), ${which}`,
    iterations: 1200,
    medianMs,
    p99Ms: 1,
    upstreamMedianMs: 0.1,
    handlerMedianMs: medianMs + 0.1,
    reads,
    failedReads,
  };
}

describe('brakesRows', () => {
  const rows = brakesRows([
    row('none', 0.12, 0),
    row('fresh', 0.125, 0),
    row('freshBraked', 0.13, 0),
    row('embedded', 0.15, 1200),
    row('dynamodb', 2.13, 1200, 2),
    row('newNone', 1.5, 100),
    row('newDynamodb', 4.5, 100),
  ]);

  it('holds the calls with a fresh copy to the handler overhead budget, with their reads and the difference', () => {
    expect(rows.slice(0, 3).map((r) => r.met)).toEqual([true, true, true]);
    expect(rows[1]?.result).toContain('0 store reads in 1200 calls; +0.005 ms over no brakes');
    expect(rows[0]?.result).not.toContain('store reads');
  });

  it('gives the calls that read their time over the fresh copy of the same brake, and any failed read', () => {
    expect(rows[3]?.budget).toBe('(none: the added time)');
    expect(rows[3]?.met).toBeUndefined();
    expect(rows[3]?.note).toBe('adds 0.020 ms at the median over the fresh copy of the same brake');
    expect(rows[4]?.note).toBe('adds 2.000 ms at the median over the fresh copy of the same brake');
    expect(rows[4]?.result).toContain('1200 store reads in 1200 calls, 2 failed (fail open)');
    expect(renderTable(rows)).toContain('Handler overhead, brakes');
  });

  it("gives a new runtime's first call with the table its time over one without, without a budget", () => {
    expect(rows[5]?.note).toBe('—');
    expect(rows[6]?.note).toBe('adds 3.000 ms at the median over a new runtime without the table');
    expect(rows.slice(5).every((r) => r.met === undefined && r.budget === '—')).toBe(true);
  });
});

describe('brakesFirstCallRows', () => {
  const node: BenchNode = { role: 'lambda', path: '/pinned/node', version: 'v24.21.0', arch: 'x64' };
  const result: BrakesFirstCalls = {
    runs: 9,
    speedReferenceMs: [95, 100],
    nodes: [
      {
        node,
        bareNodeMs: 40,
        calls: [
          {
            fn: 'version',
            without: { firstCallMs: 30, invokeMs: 10 },
            with: { firstCallMs: 36, invokeMs: 16 },
            addedMs: 5.5,
            addedInvokeMs: 6,
          },
        ],
      },
    ],
  };

  it("shows each function's first call without and with the table, and what the table adds per round", () => {
    const rows = brakesFirstCallRows(result);
    expect(rows.map((r) => r.area)).toEqual([
      'Brakes, first call',
      'First call (Node v24.21.0)',
      'First call (Node v24.21.0)',
    ]);
    expect(rows[1]?.measurement).toBe('version bundle, a read without a state table (no brakes)');
    expect(rows[2]?.result).toBe('36.0 ms over bare node (first invocation 16.0 ms)');
    expect(rows[2]?.note).toBe(
      'adds 6.000 ms to the first invocation, 5.500 ms to the whole first call (medians over the rounds of with − without)',
    );
    expect(rows.every((r) => r.met === undefined)).toBe(true);
  });
});
