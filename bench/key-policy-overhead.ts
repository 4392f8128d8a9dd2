/**
 * Key policies' cost (README, "Key policies"): the execute-v1, execute-v2 and version handlers, as in
 * `handler-overhead.ts`, over two runtimes side by side in one run: 50 named proxy keys without a
 * policy, the same 50 keys of which 25 carry a policy (apis, read access, 12 models with globs,
 * a target and a database), and those 25 again with all but the caller's carrying the rules that
 * read a call too (`methods`, `fields`, `companies`: a key without them pays nothing for them,
 * issue 48). The caller's key is one of the 25, so every measured call is checked
 * against its policy (the API at the chain's step, the model, method, target and database in the
 * forwarding code). Blocks of both runtimes and every case take turns over several rounds, so a
 * slow spell of the machine hits both alike.
 */

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ProxyContext } from '../lambdas/core/request-facts.ts';
import { createHandler as createV1 } from '../lambdas/handlers/execute-v1.ts';
import { createHandler as createV2 } from '../lambdas/handlers/execute-v2.ts';
import { createRuntime, type Runtime } from '../lambdas/handlers/runtime.ts';
import { createHandler as createVersion } from '../lambdas/handlers/version.ts';
import { buildContext } from '../lambdas/local/server.ts';
import { loadConfig } from '../lambdas/platform/config.ts';
import { BENCH_PROXY_KEY, type CallKind, postEvent, ROUTE_OF, smallBody } from './fixtures.ts';
import type { OverheadRow } from './handler-overhead.ts';
import { median, p99, progress } from './stats.ts';
import { sinkStdout } from './stdout-sink.ts';
import { startSmallUpstream } from './upstreams.ts';

type Invoke = (event: unknown, context: unknown) => Promise<{ statusCode: number; body: string }>;

/** How many keys each runtime has, and how many of them carry a policy in the second one. */
export const KEY_COUNT = 50;
export const KEYS_WITH_POLICIES = 25;
/** Rounds of the measurement: each case's calls are spread over this many blocks per runtime. */
const ROUNDS = 6;

/** A policy as a reporting key would have it; the caller's lets the measured calls through. */
function policy(index: number): Record<string, unknown> {
  return {
    apis: ['v1', 'v2', 'version'],
    access: 'read',
    models: [
      'res.partner',
      'res.partner.category',
      'res.country',
      'res.currency',
      'account.move',
      'account.move.line',
      'sale.*',
      'purchase.*',
      'stock.*',
      'product.*',
      'crm.lead',
      `x_custom_${index}.*`,
    ],
    targets: ['127.0.0.1', 'erp.example.com', '*.erp.internal'],
    databases: ['erp_a', 'erp_b'],
  };
}

/**
 * The rules that read a call (README, "Key policies": `methods`, `fields`, `companies`), as a
 * support agent's or a subsidiary's key would carry them.
 */
function callRules(index: number): Record<string, unknown> {
  return {
    methods: {
      'helpdesk.ticket': ['search_read', 'read', 'write', 'message_post'],
      'sale.*': ['search_read', 'read', 'search_count'],
      '*': ['search_read', 'read', 'search_count', 'fields_get'],
    },
    fields: {
      'res.partner': { deny: ['bank_ids', 'vat', `x_note_${index}`] },
      'hr.employee': { deny: ['wage', 'bank_account_id'] },
    },
    companies: { erp_a: [1, 2], erp_b: [3] },
  };
}

/** Which keys carry what: none a policy; 25 a policy; or those 25, all but the caller with the rules that read a call. */
export type KeysMode = 'none' | 'policies' | 'rules';

/** The `PROXY_API_KEYS` document: the bench key last of 50; the last 25 with a policy unless `none`. */
function keysDocument(mode: KeysMode): string {
  const keys = Array.from({ length: KEY_COUNT }, (_, index) => {
    const last = index === KEY_COUNT - 1;
    const key = last ? BENCH_PROXY_KEY : `bench-other-key-${String(index).padStart(4, '0')}-0123456789`;
    const policied = mode !== 'none' && index >= KEY_COUNT - KEYS_WITH_POLICIES;
    const ruled = mode === 'rules' && !last;
    const keyPolicy = { ...policy(index), ...(ruled ? callRules(index) : {}) };
    return { name: last ? 'bench' : `caller-${index}`, key, ...(policied ? { policy: keyPolicy } : {}) };
  });
  return JSON.stringify({ keys });
}

/** The variants' labels (bench/overhead-trees.ts pairs the last with the second of an older tree). */
export const KEY_POLICY_VARIANTS = Object.freeze({
  none: `${KEY_COUNT} keys, no policies`,
  policies: `${KEY_COUNT} keys, ${KEYS_WITH_POLICIES} with policies (the caller's checked)`,
  rules: `${KEY_COUNT} keys, ${KEYS_WITH_POLICIES} with policies, ${KEYS_WITH_POLICIES - 1} of them with methods, fields and companies rules (the caller's checked, without them)`,
} satisfies Record<KeysMode, string>);

interface Variant {
  readonly label: string;
  readonly runtime: { readonly http: { close(): Promise<void> } };
  readonly handlers: Record<CallKind, Invoke>;
}

/** What a variant is built from: a tree's runtime, configuration and handlers. */
export interface TreeModules {
  createRuntime(config: never): Runtime;
  loadConfig(settings: Record<string, string>): unknown;
  createV1(runtime: never): unknown;
  createV2(runtime: never): unknown;
  createVersion(runtime: never): unknown;
}

/** This tree's modules. */
const OWN: TreeModules = {
  createRuntime: createRuntime as TreeModules['createRuntime'],
  loadConfig,
  createV1: createV1 as TreeModules['createV1'],
  createV2: createV2 as TreeModules['createV2'],
  createVersion: createVersion as TreeModules['createVersion'],
};

/**
 * Another checkout's modules (`tree`, with its own node_modules), loaded into this process, so
 * that its handlers and this tree's take turns in one process (bench/overhead-trees.ts
 * `--one-process`): the machine's drift between processes is out of the comparison.
 */
export async function treeModules(tree: string): Promise<TreeModules> {
  const load = (file: string) => import(pathToFileURL(resolve(tree, file)).href);
  const [runtime, config, v1, v2, version] = await Promise.all([
    load('lambdas/handlers/runtime.ts'),
    load('lambdas/platform/config.ts'),
    load('lambdas/handlers/execute-v1.ts'),
    load('lambdas/handlers/execute-v2.ts'),
    load('lambdas/handlers/version.ts'),
  ]);
  return {
    createRuntime: runtime.createRuntime,
    loadConfig: config.loadConfig,
    createV1: v1.createHandler,
    createV2: v2.createHandler,
    createVersion: version.createHandler,
  };
}

/** One runtime of the measurement: `mode`'s keys on `modules`, its label prefixed by `tree`. */
export function variant(mode: KeysMode, modules: TreeModules = OWN, tree?: string): Variant {
  const runtime = modules.createRuntime(
    modules.loadConfig({ PROXY_API_KEYS: keysDocument(mode), LOG_LEVEL: 'INFO' }) as never,
  );
  return {
    label: tree === undefined ? KEY_POLICY_VARIANTS[mode] : `${tree}: ${KEY_POLICY_VARIANTS[mode]}`,
    runtime,
    handlers: {
      v1: modules.createV1(runtime as never) as Invoke,
      v2: modules.createV2(runtime as never) as Invoke,
      version: modules.createVersion(runtime as never) as Invoke,
    },
  };
}

/** The measured calls (bench/overhead-trees.ts pairs the rows by these labels). */
export const KEY_POLICY_CASES: readonly { readonly label: string; readonly kind: CallKind }[] = [
  { label: 'execute-v1 (search_count)', kind: 'v1' },
  { label: 'execute-v2 (search_count)', kind: 'v2' },
  { label: 'version (cached)', kind: 'version' },
];

/** The rows: each case without policies, then with, side by side. */
export async function measureKeyPolicyOverhead(
  options: { warmup: number; iterations: number; rounds?: number },
  build: () => Variant[] = () => [variant('none'), variant('policies'), variant('rules')],
): Promise<OverheadRow[]> {
  const upstream = await startSmallUpstream();
  const variants = build();
  const bodies = KEY_POLICY_CASES.map((c) => JSON.stringify(smallBody(c.kind, upstream.url)));
  const sink = sinkStdout();
  let requestNo = 0;
  const call = async (
    v: Variant,
    index: number,
  ): Promise<{ overhead: number; upstream: number; handler: number }> => {
    const c = KEY_POLICY_CASES[index] as (typeof KEY_POLICY_CASES)[number];
    const { path, fn } = ROUTE_OF[c.kind];
    const requestId = `bench-policy-${++requestNo}`;
    const context = buildContext(fn, requestId) as ProxyContext;
    const started = performance.now();
    const response = await v.handlers[c.kind](postEvent(path, bodies[index] as string, requestId), context);
    const elapsed = performance.now() - started;
    if (response.statusCode !== 200 || !response.body.endsWith('"error":null}')) {
      throw new Error(
        `${v.label}, ${c.label}: unexpected answer ${response.statusCode} ${response.body.slice(0, 300)}`,
      );
    }
    const upstreamMs = context.record?.facts.upstreamMs ?? 0;
    return { overhead: elapsed - upstreamMs, upstream: upstreamMs, handler: elapsed };
  };
  type Samples = { overhead: number[]; upstream: number[]; handler: number[] };
  const samples: Samples[][] = variants.map(() =>
    KEY_POLICY_CASES.map(() => ({ overhead: [], upstream: [], handler: [] })),
  );
  try {
    for (let i = 0; i < options.warmup; i++) {
      for (const v of variants) for (const index of KEY_POLICY_CASES.keys()) await call(v, index);
    }
    const rounds = options.rounds ?? ROUNDS;
    const perBlock = Math.ceil(options.iterations / rounds);
    for (let round = 0; round < rounds; round++) {
      for (const index of KEY_POLICY_CASES.keys()) {
        // ABBA within a round: neither runtime always goes first.
        const order = round % 2 === 0 ? variants.keys() : [...variants.keys()].reverse();
        for (const which of order) {
          const v = variants[which] as Variant;
          const sample = (samples[which] as Samples[])[index] as Samples;
          for (let k = 0; k < perBlock; k++) {
            const { overhead, upstream: waited, handler } = await call(v, index);
            sample.overhead.push(overhead);
            sample.upstream.push(waited);
            sample.handler.push(handler);
          }
        }
      }
    }
  } finally {
    sink.restore();
    for (const v of variants) await v.runtime.http.close();
    await upstream.close();
  }
  const rows: OverheadRow[] = [];
  for (const [index, c] of KEY_POLICY_CASES.entries()) {
    for (const [which, v] of variants.entries()) {
      const { overhead, upstream: waited, handler } = (samples[which] as Samples[])[index] as Samples;
      const row = {
        label: `${c.label}, ${v.label}`,
        iterations: overhead.length,
        medianMs: median(overhead),
        p99Ms: p99(overhead),
        upstreamMedianMs: median(waited),
        handlerMedianMs: median(handler),
      };
      rows.push(row);
      progress(`  ${row.label}: median ${row.medianMs.toFixed(3)} ms, p99 ${row.p99Ms.toFixed(3)} ms`);
    }
  }
  return rows;
}
