/**
 * What the operators' brakes cost a call (issue 58, item 3; BENCHMARKS.md, "Issue 58: brakes").
 *
 * Warm, in-process, as `limits-overhead.ts` measures: the execute-v1 handler (`search_count` to the
 * small loopback upstream of the other handler benches) over five runtimes side by side, blocks of
 * each taking turns over several rounds (ABBA), so a slow spell of the machine hits all alike:
 *
 * - no brakes at all (`brakes` undefined, as a function deployed without a state table): the
 *   reference, no brakes step and no key brake check;
 * - (a) no brake set, the instance's copy fresh: the normal case, which must do no store work (the
 *   runtime's own copy, `BRAKES_REFRESH` 60, over a table of DynamoDB Local; its reads counted);
 * - one brake in force (another key's, mode `all`), the copy fresh: the checks walk a list;
 * - (b) one call per `BRAKES_REFRESH`, i.e. every call finds the copy old and waits for its read:
 *   over the embedded store (the read's non-network part: the copy's promise, the checks after it)
 *   and over DynamoDB Local (one `GetItem` with `ConsistentRead`). The copy is made old before each
 *   call ({@link readingEveryCall}): a source whose refresh is 0 would read twice per call (the key
 *   check and the gate's step each find it old) and give each read a time limit of 1 ms (the limit
 *   is at most half the refresh), so every read against DynamoDB Local would fail open.
 *
 * (c) a cold instance's first call, twice. In this process, with the warm rows: a new runtime per
 * sample and its first call, with the state table (no brake set) and without (the embedded store),
 * alternating: the modules are loaded, so the difference is the DynamoDB client's making, its
 * connection and the first read. And, `--brakes` only, in fresh Node processes as `idempotency.ts`
 * runs them (the execute-v1 and version bundles as the stack builds them, in Lambda mode, on the
 * pinned Node 24 and this machine's Node): with the state table on DynamoDB Local (no brake set),
 * whose first call initialises the brakes' DynamoDB client module (bundled, run on first use) and
 * reads the brakes once, beside the same first call without a table (the store is then `none`: no
 * brakes). Before the rounds, one process of each bundle against a table holding a brake on every
 * call must be refused (-32012): the bundles read the table. Needs Java (DynamoDB Local).
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { ProxyContext } from '../lambdas/core/request-facts.ts';
import { createHandler as createV1 } from '../lambdas/handlers/execute-v1.ts';
import { createRuntime, type Runtime } from '../lambdas/handlers/runtime.ts';
import { buildContext } from '../lambdas/local/server.ts';
import type { Brake } from '../lambdas/platform/brakes/brakes.ts';
import {
  type BrakesReadFailure,
  type BrakesSource,
  type BrakesStore,
  createBrakesSource,
} from '../lambdas/platform/brakes/brakes-source.ts';
import { createBrakesStore, EmbeddedBrakesStore } from '../lambdas/platform/brakes/brakes-store.ts';
import { loadConfig } from '../lambdas/platform/config.ts';
import { HANDLER_ENTRIES } from '../lambdas/platform/routes.ts';
import { esbuildOptions } from '../lib/proxy-function.ts';
import { createStateTable, startDynamoDbLocal, stateTableEnv } from '../test/support/dynamodb-local.ts';
import {
  BARE_READY,
  type BenchNode,
  BUNDLE_DIR,
  benchNodes,
  CHILD,
  functionEvents,
  lambdaModeEnv,
  type ProcessCase,
  runNode,
  runRounds,
  type Sample,
  scriptCase,
} from './cold-start.ts';
import { BENCH_PROXY_KEY, benchBrake, isGoodAnswer, postEvent, ROUTE_OF, smallBody } from './fixtures.ts';
import type { OverheadRow } from './handler-overhead.ts';
import { median, p99, progress, speedReference } from './stats.ts';
import { sinkStdout } from './stdout-sink.ts';
import { startSmallUpstream } from './upstreams.ts';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');

type Invoke = (event: unknown, context: unknown) => Promise<{ statusCode: number; body: string }>;

const ROUNDS = 6;
/** Measured rounds of the first calls (`--runs N` changes it). */
export const BRAKES_FIRST_CALL_RUNS = 9;
/** The refresh of the copies that stay fresh through the measurement (the most `BRAKES_REFRESH` takes). */
const FRESH_REFRESH_SECONDS = 60;
/** New runtimes per side made before the measured ones (the first connections, the JIT). */
const NEW_RUNTIME_WARMUP = 5;

/** The caller's key (`bench`) and another (`agent`), whose name the measured brake names. */
export const BRAKES_BENCH_KEYS = JSON.stringify({
  keys: [
    { name: 'bench', key: BENCH_PROXY_KEY },
    { name: 'agent', key: 'bench-agent-key-0123456789abcdef' },
  ],
});

/**
 * The brake of the measured calls: another key's, in mode `all`, so that both checks (the key
 * check's `keyStopped` and the gate's `brakeFor`) compare its scope with the call and pass it.
 */
export const ANOTHER_KEYS_BRAKE = benchBrake('brk-bench-other', { key: 'agent' }, 'all');

/** A store whose reads are counted: how many a call made. */
export class CountingBrakesStore implements BrakesStore {
  reads = 0;
  constructor(private readonly inner: BrakesStore) {}
  read() {
    this.reads += 1;
    return this.inner.read();
  }
  write(brakes: readonly Brake[], expected: number) {
    return this.inner.write(brakes, expected);
  }
}

/** A copy of the brakes that {@link ReadingEveryCall.expire} makes old: the next check reads it. */
export interface ReadingEveryCall extends BrakesSource {
  /** Makes the copy old, as `BRAKES_REFRESH` seconds after its last read. */
  expire(): void;
}

/**
 * The instance's copy as a call finds it once per `BRAKES_REFRESH`, on demand: after
 * {@link ReadingEveryCall.expire}, the first check of the next call (the key check) finds it old and
 * waits for one read (with the read's usual time limit); the gate's step then finds it fresh. A new
 * copy (`createBrakesSource`) stands for the old one: the same read, whose age counts from -∞.
 */
export function readingEveryCall(
  store: BrakesStore,
  onReadFailure: (failure: BrakesReadFailure) => void,
): ReadingEveryCall {
  const make = () => createBrakesSource({ store, refreshMs: FRESH_REFRESH_SECONDS * 1000, onReadFailure });
  let copy = make();
  return {
    expire: () => {
      copy = make();
    },
    fresh: (now) => copy.fresh(now),
    read: (now) => copy.read(now),
    current: (now) => copy.current(now),
  };
}

/** The warm cases, in the order of the rows. */
export const BRAKES_CASES = Object.freeze({
  none: 'no brakes (no state table, as deployed without one: no brakes step)',
  fresh: 'no brake set, the copy fresh (no store work)',
  freshBraked: "one brake in force (another key's), the copy fresh (no store work)",
  embedded: "every call reads the copy (one brake, another key's): embedded store",
  dynamodb: "every call reads the copy (one brake, another key's): GetItem ConsistentRead, DynamoDB Local",
  newNone: "a new runtime's first call, no state table (the embedded store's first read)",
  newDynamodb:
    "a new runtime's first call, no brake set, the state table on DynamoDB Local (modules loaded; the client made, its connection opened, one GetItem)",
} as const);
export type BrakesCase = keyof typeof BRAKES_CASES;

/** One warm row: the handler overhead, and the store reads of its measured calls. */
export interface BrakesRow extends OverheadRow {
  readonly case: BrakesCase;
  /** Store reads during the measured calls (each call of a "reads" case makes one). */
  readonly reads: number;
  /** Reads that failed (the call went on with the copy it had: fail open). */
  readonly failedReads: number;
}

interface Variant {
  readonly case: BrakesCase;
  readonly runtime: Runtime;
  readonly handler: Invoke;
  readonly store?: CountingBrakesStore;
  readonly source?: ReadingEveryCall;
  readonly failures: BrakesReadFailure[];
}

/** A runtime of `env` whose handler finds its brakes in `brakes` (`'own'`: the runtime's own copy). */
function variant(
  which: BrakesCase,
  env: Record<string, string>,
  options: { store?: BrakesStore; brakes?: 'own' | 'none' | 'every-call' },
): Variant {
  const failures: BrakesReadFailure[] = [];
  const store = options.store === undefined ? undefined : new CountingBrakesStore(options.store);
  const built = createRuntime(
    loadConfig({ LOG_LEVEL: 'INFO', PROXY_API_KEYS: BRAKES_BENCH_KEYS, ...env }),
    store === undefined ? {} : { brakesStore: store },
  );
  const source =
    options.brakes === 'every-call' && store !== undefined
      ? readingEveryCall(store, (failure) => failures.push(failure))
      : undefined;
  // The handler takes the brakes from its runtime (handlers/execute.ts `createHandler`, the chain's key check).
  const runtime: Runtime =
    options.brakes === 'none'
      ? { ...built, brakes: undefined }
      : source === undefined
        ? built
        : { ...built, brakes: source };
  return {
    case: which,
    runtime,
    handler: createV1(runtime) as unknown as Invoke,
    ...(store === undefined ? {} : { store }),
    ...(source === undefined ? {} : { source }),
    failures,
  };
}

/** The in-process rows: execute-v1 over the five runtimes of the module header side by side, then new runtimes' first calls. */
export async function measureBrakesOverhead(options: {
  warmup: number;
  iterations: number;
  /** New runtimes per side for the first calls in this process. */
  newRuntimes: number;
}): Promise<BrakesRow[]> {
  const upstream = await startSmallUpstream();
  const dynamo = await startDynamoDbLocal();
  const sink = sinkStdout();
  const variants: Variant[] = [];
  try {
    const emptyTable = stateTableEnv(
      dynamo.endpoint,
      await createStateTable(dynamo.endpoint, 'bench-brakes'),
    );
    const brakedTable = stateTableEnv(
      dynamo.endpoint,
      await createStateTable(dynamo.endpoint, 'bench-brakes'),
    );
    const fresh = { BRAKES_REFRESH: String(FRESH_REFRESH_SECONDS) };
    const brakedStore = createBrakesStore(loadConfig(brakedTable)) as BrakesStore;
    if (!(await brakedStore.write([ANOTHER_KEYS_BRAKE], 0))) throw new Error('the brake was not written');
    const embedded = new EmbeddedBrakesStore();
    await embedded.write([ANOTHER_KEYS_BRAKE], 0);
    const storeOf = (env: Record<string, string>) => createBrakesStore(loadConfig(env)) as BrakesStore;
    variants.push(
      variant('none', {}, { brakes: 'none' }),
      variant('fresh', { ...emptyTable, ...fresh }, { store: storeOf(emptyTable), brakes: 'own' }),
      variant('freshBraked', { ...brakedTable, ...fresh }, { store: storeOf(brakedTable), brakes: 'own' }),
      variant('embedded', {}, { store: embedded, brakes: 'every-call' }),
      variant('dynamodb', brakedTable, { store: storeOf(brakedTable), brakes: 'every-call' }),
    );
    const warm = await measureVariants(variants, upstream.url, options);
    return [...warm, ...(await measureNewRuntimes(emptyTable, upstream.url, options.newRuntimes))];
  } finally {
    sink.restore();
    for (const v of variants) await v.runtime.http.close();
    await upstream.close();
    await dynamo.stop();
  }
}

async function measureVariants(
  variants: readonly Variant[],
  upstreamUrl: string,
  options: { warmup: number; iterations: number },
): Promise<BrakesRow[]> {
  const body = JSON.stringify(smallBody('v1', upstreamUrl));
  const { path, fn } = ROUTE_OF.v1;
  let requestNo = 0;
  const call = async (v: Variant): Promise<{ overhead: number; upstream: number; handler: number }> => {
    const requestId = `bench-brakes-${++requestNo}`;
    const context = buildContext(fn, requestId) as ProxyContext;
    const event = postEvent(path, body, requestId);
    v.source?.expire();
    const readsBefore = v.store?.reads ?? 0;
    const started = performance.now();
    const response = await v.handler(event, context);
    const elapsed = performance.now() - started;
    if (response.statusCode !== 200 || !response.body.endsWith('"error":null}')) {
      throw new Error(
        `${BRAKES_CASES[v.case]}: unexpected answer ${response.statusCode} ${response.body.slice(0, 300)}`,
      );
    }
    if (v.source !== undefined && (v.store?.reads ?? 0) - readsBefore !== 1) {
      throw new Error(
        `${BRAKES_CASES[v.case]}: ${(v.store?.reads ?? 0) - readsBefore} reads in one call, not 1`,
      );
    }
    const upstreamMs = context.record?.facts.upstreamMs ?? 0;
    return { overhead: elapsed - upstreamMs, upstream: upstreamMs, handler: elapsed };
  };
  type Samples = { overhead: number[]; upstream: number[]; handler: number[] };
  const samples: Samples[] = variants.map(() => ({ overhead: [], upstream: [], handler: [] }));
  for (let i = 0; i < options.warmup; i++) for (const v of variants) await call(v);
  // The fresh copies were read in the warm-up: the braked one must hold the brake (not a failed read).
  const braked = variants.find((v) => v.case === 'freshBraked');
  if (braked !== undefined && braked.runtime.brakes?.fresh(Date.now())?.length !== 1) {
    throw new Error(`${BRAKES_CASES.freshBraked}: the copy does not hold the brake`);
  }
  const readsAtStart = variants.map((v) => v.store?.reads ?? 0);
  const failuresAtStart = variants.map((v) => v.failures.length);
  const perBlock = Math.ceil(options.iterations / ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [...variants.keys()] : [...variants.keys()].reverse();
    for (const which of order) {
      const sample = samples[which] as Samples;
      for (let k = 0; k < perBlock; k++) {
        const { overhead, upstream, handler } = await call(variants[which] as Variant);
        sample.overhead.push(overhead);
        sample.upstream.push(upstream);
        sample.handler.push(handler);
      }
    }
  }
  return variants.map((v, which) => {
    const { overhead, upstream, handler } = samples[which] as Samples;
    const row: BrakesRow = {
      case: v.case,
      label: `execute-v1 (search_count), ${BRAKES_CASES[v.case]}`,
      iterations: overhead.length,
      medianMs: median(overhead),
      p99Ms: p99(overhead),
      upstreamMedianMs: median(upstream),
      handlerMedianMs: median(handler),
      reads: (v.store?.reads ?? 0) - (readsAtStart[which] as number),
      failedReads: v.failures.length - (failuresAtStart[which] as number),
    };
    progress(
      `  ${row.label}: median ${row.medianMs.toFixed(3)} ms, p99 ${row.p99Ms.toFixed(3)} ms, ${row.reads} store reads`,
    );
    return row;
  });
}

/**
 * (c) in this process: a new runtime per sample, as a new instance builds it, and its first call,
 * with the state table and without (the embedded store), the two alternating. The modules are
 * loaded already (a fresh process's part is in {@link measureBrakesFirstCalls}): the difference is
 * the DynamoDB client's making, its connection to DynamoDB Local and the first `GetItem`.
 */
async function measureNewRuntimes(
  table: Record<string, string>,
  upstreamUrl: string,
  samples: number,
): Promise<BrakesRow[]> {
  const body = JSON.stringify(smallBody('v1', upstreamUrl));
  const { path, fn } = ROUTE_OF.v1;
  const times = { newNone: [] as number[], newDynamodb: [] as number[] };
  const upstreamTimes = { newNone: [] as number[], newDynamodb: [] as number[] };
  const handlerTimes = { newNone: [] as number[], newDynamodb: [] as number[] };
  const reads = { newNone: 0, newDynamodb: 0 };
  let requestNo = 0;
  const firstCall = async (which: 'newNone' | 'newDynamodb'): Promise<void> => {
    const env = {
      LOG_LEVEL: 'INFO',
      PROXY_API_KEYS: BRAKES_BENCH_KEYS,
      ...(which === 'newNone' ? {} : table),
    };
    const config = loadConfig(env);
    const store = new CountingBrakesStore(createBrakesStore(config) as BrakesStore);
    const runtime = createRuntime(config, { brakesStore: store });
    try {
      const handler = createV1(runtime) as unknown as Invoke;
      const requestId = `bench-brakes-new-${++requestNo}`;
      const context = buildContext(fn, requestId) as ProxyContext;
      const event = postEvent(path, body, requestId);
      const started = performance.now();
      const response = await handler(event, context);
      const elapsed = performance.now() - started;
      if (response.statusCode !== 200 || !response.body.endsWith('"error":null}')) {
        throw new Error(
          `${BRAKES_CASES[which]}: unexpected answer ${response.statusCode} ${response.body.slice(0, 300)}`,
        );
      }
      if (store.reads !== 1) throw new Error(`${BRAKES_CASES[which]}: ${store.reads} reads, not 1`);
      if (runtime.brakes?.fresh(Date.now()) === undefined) {
        throw new Error(`${BRAKES_CASES[which]}: the first read failed`);
      }
      if (requestNo > 2 * NEW_RUNTIME_WARMUP) {
        const upstreamMs = context.record?.facts.upstreamMs ?? 0;
        times[which].push(elapsed - upstreamMs);
        upstreamTimes[which].push(upstreamMs);
        handlerTimes[which].push(elapsed);
        reads[which] += store.reads;
      }
    } finally {
      await runtime.http.close();
    }
  };
  for (let i = 0; i < NEW_RUNTIME_WARMUP + samples; i++) {
    const order = i % 2 === 0 ? (['newNone', 'newDynamodb'] as const) : (['newDynamodb', 'newNone'] as const);
    for (const which of order) await firstCall(which);
  }
  return (['newNone', 'newDynamodb'] as const).map((which) => {
    const row: BrakesRow = {
      case: which,
      label: `execute-v1 (search_count), ${BRAKES_CASES[which]}`,
      iterations: times[which].length,
      medianMs: median(times[which]),
      p99Ms: p99(times[which]),
      upstreamMedianMs: median(upstreamTimes[which]),
      handlerMedianMs: median(handlerTimes[which]),
      reads: reads[which],
      failedReads: 0,
    };
    progress(`  ${row.label}: median ${row.medianMs.toFixed(3)} ms, p99 ${row.p99Ms.toFixed(3)} ms`);
    return row;
  });
}

/** The functions whose first call is measured: execute-v1, and version, which gained the store client. */
export const FIRST_CALL_FUNCTIONS = Object.freeze(['execute-v1', 'version'] as const);
type FirstCallFunction = (typeof FIRST_CALL_FUNCTIONS)[number];

/** One function's first call over bare node, without and with the state table. */
export interface BrakesFirstCall {
  readonly fn: FirstCallFunction;
  readonly without: { readonly firstCallMs: number; readonly invokeMs: number };
  readonly with: { readonly firstCallMs: number; readonly invokeMs: number };
  /** Median over the rounds of (with − without) within a round: the whole first call. */
  readonly addedMs: number;
  /** The same of the first invocation alone (the import is the same bundle's either way). */
  readonly addedInvokeMs: number;
}

export interface BrakesFirstCallsOfNode {
  readonly node: BenchNode;
  readonly bareNodeMs: number;
  readonly calls: readonly BrakesFirstCall[];
}

export interface BrakesFirstCalls {
  readonly runs: number;
  /** {@link speedReference} before the rounds and after. */
  readonly speedReferenceMs: readonly [number, number];
  /** Per Node, the pinned Node 24 (role `lambda`) first. */
  readonly nodes: readonly BrakesFirstCallsOfNode[];
}

/** (c): a cold instance's first call, fresh processes, with and without the state table. */
export async function measureBrakesFirstCalls(options: { runs: number }): Promise<BrakesFirstCalls> {
  const nodes = benchNodes();
  progress(`  first calls on ${nodes.map((node) => node.version).join(' and ')}; starting DynamoDB Local`);
  const dynamo = await startDynamoDbLocal();
  const upstream = await startSmallUpstream();
  try {
    // No brake set in the measured table (the normal case); one on every call in the check's.
    const table = await createStateTable(dynamo.endpoint, 'bench-brakes');
    const stopTable = await createStateTable(dynamo.endpoint, 'bench-brakes-stop');
    const stopStore = createBrakesStore(loadConfig(stateTableEnv(dynamo.endpoint, stopTable))) as BrakesStore;
    await stopStore.write([benchBrake('brk-bench-all', 'all', 'all')], 0);
    mkdirSync(BUNDLE_DIR, { recursive: true });
    const bundles = {} as Record<FirstCallFunction, string>;
    for (const fn of FIRST_CALL_FUNCTIONS) {
      bundles[fn] = join(BUNDLE_DIR, `brakes-${fn}`, 'index.mjs');
      await build(esbuildOptions(resolve(ROOT, HANDLER_ENTRIES[fn]), bundles[fn]));
    }
    const events = functionEvents(upstream.url);
    const bare = lambdaModeEnv();
    const withTable = (name: string) => ({ ...bare, ...stateTableEnv(dynamo.endpoint, name) });
    const machineNode = nodes.find((node) => node.role === 'machine') as BenchNode;
    for (const fn of FIRST_CALL_FUNCTIONS) {
      const run = await runNode([CHILD, bundles[fn], events[fn], fn], withTable(stopTable), machineNode.path);
      const answer = run.report as { statusCode: number; body: string };
      if (!answer.body.includes('-32012')) {
        throw new Error(
          `${fn} bundle with a brake on every call: not refused (${answer.statusCode} ${answer.body}); the brakes were not read`,
        );
      }
    }
    const firstCall = (fn: FirstCallFunction, table: boolean, env: NodeJS.ProcessEnv): ProcessCase => ({
      id: `${fn} ${table ? 'with' : 'without'}`,
      once: async (node) => {
        const run = await runNode([CHILD, bundles[fn], events[fn], fn], env, node.path);
        const answer = run.report as { statusCode: number; body: string; importMs: number; invokeMs: number };
        if (!isGoodAnswer(fn, answer.statusCode, answer.body)) {
          throw new Error(
            `first call of ${fn} ${table ? 'with' : 'without'} a state table on Node ${node.version}: ${answer.statusCode} ${answer.body}`,
          );
        }
        return {
          readyMs: run.readyMs,
          exitMs: run.exitMs,
          importMs: answer.importMs,
          invokeMs: answer.invokeMs,
        };
      },
    });
    const speedAtStart = speedReference();
    progress(`  speed reference ${speedAtStart.toFixed(1)} ms; ${options.runs} round(s) of first calls`);
    const samples = await runRounds(
      [
        scriptCase('bare', BARE_READY, bare),
        ...FIRST_CALL_FUNCTIONS.flatMap((fn) => [
          firstCall(fn, false, bare),
          firstCall(fn, true, withTable(table)),
        ]),
      ],
      nodes,
      options.runs,
      'first calls',
    );
    const speedAtEnd = speedReference();
    progress(`  speed reference at the end: ${speedAtEnd.toFixed(1)} ms`);
    return {
      runs: options.runs,
      speedReferenceMs: [speedAtStart, speedAtEnd],
      nodes: nodes.map((node) => firstCallsOfNode(node, samples)),
    };
  } finally {
    await upstream.close();
    await dynamo.stop();
  }
}

function firstCallsOfNode(
  node: BenchNode,
  samples: ReadonlyMap<string, readonly Sample[]>,
): BrakesFirstCallsOfNode {
  const of = (id: string): readonly Sample[] => samples.get(`${node.role} ${id}`) ?? [];
  const bareNodeMs = median(of('bare').map((s) => s.readyMs));
  const call = (fn: FirstCallFunction): BrakesFirstCall => {
    const without = of(`${fn} without`);
    const withTable = of(`${fn} with`);
    const summary = (list: readonly Sample[]) => ({
      firstCallMs: median(list.map((s) => s.readyMs)) - bareNodeMs,
      invokeMs: median(list.map((s) => s.invokeMs)),
    });
    return {
      fn,
      without: summary(without),
      with: summary(withTable),
      // The i-th samples of two cases come from the same round.
      addedMs: median(withTable.map((s, i) => s.readyMs - (without[i] as Sample).readyMs)),
      addedInvokeMs: median(withTable.map((s, i) => s.invokeMs - (without[i] as Sample).invokeMs)),
    };
  };
  return { node, bareNodeMs, calls: FIRST_CALL_FUNCTIONS.map(call) };
}
