/**
 * Cold start and bundle size: each handler is bundled with the stack's esbuild settings
 * (lib/proxy-function.ts: ESM, minified, `@aws-sdk/*` external, the `require` shim, source maps),
 * then each run spawns a fresh `node` that imports the bundle and completes one invocation in
 * Lambda mode against a loopback upstream of this (parent) process. Cold start = the time from
 * the spawn to the end of that invocation, minus the time from the spawn of a bare `node` to its
 * first line of (ES module) code; medians over the runs, bare and bundle runs interleaved so that
 * drift in the machine's load affects both alike. Both ends are read on one clock: the parent
 * notes the spawn, the child reports `performance.timeOrigin + performance.now()`. Process exit
 * is not part of a cold start (Lambda keeps the process), so it is not counted.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { type FunctionName, HANDLER_ENTRIES } from '../lambdas/platform/routes.ts';
import { esbuildOptions } from '../lib/proxy-function.ts';
import { BENCH_PROXY_KEY, postEvent, smallBody } from './fixtures.ts';
import { median, progress } from './stats.ts';
import { startSmallUpstream } from './upstreams.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..');
/**
 * Inside the project's node_modules, so the external `@aws-sdk/*` imports resolve as they do on
 * Lambda (where the runtime provides the SDK).
 */
export const BUNDLE_DIR = join(ROOT, 'node_modules', '.cache', 'erp-proxy-bench');

export const FUNCTIONS: readonly FunctionName[] = ['execute-v1', 'execute-v2', 'version', 'aux'];

export interface BundleRow {
  readonly fn: FunctionName;
  readonly bytes: number;
  readonly mapBytes: number;
  readonly coldStartMs: number;
  /** Median time from the spawn to the end of the first invocation. */
  readonly readyMs: number;
  /** Median time from the end of the first invocation to the exit of the process (not counted). */
  readonly exitMs: number;
  readonly importMs: number;
  readonly invokeMs: number;
}

export interface ColdStartResult {
  readonly runs: number;
  readonly bareNodeMs: number;
  readonly bundles: BundleRow[];
  /** A fresh process that only imports the two external `@aws-sdk/*` clients, minus bare node. */
  readonly sdkImportMs: number;
}

/** Reports on fd 3 when the code got there, on the clock the parent reads (epoch milliseconds). */
const REPORT_NOW =
  "(await import('node:fs')).writeSync(3, JSON.stringify({ at: performance.timeOrigin + performance.now() }));";
/** A bare node: ready as soon as its first line of ES module code runs. */
const BARE_READY = REPORT_NOW;
/** What the bundles import from outside themselves (the Lambda runtime provides these). */
const SDK_IMPORT = `await import('@aws-sdk/client-secrets-manager'); await import('@aws-sdk/client-cloudwatch'); ${REPORT_NOW}`;

/** Bundles the four handlers exactly as the stack does (see test/infra/bundle.test.ts). */
export async function buildBundles(): Promise<Record<FunctionName, string>> {
  rmSync(BUNDLE_DIR, { recursive: true, force: true });
  const out = {} as Record<FunctionName, string>;
  for (const fn of FUNCTIONS) {
    const outfile = join(BUNDLE_DIR, fn, 'index.mjs');
    await build(esbuildOptions(resolve(ROOT, HANDLER_ENTRIES[fn]), outfile));
    out[fn] = outfile;
  }
  return out;
}

interface ChildRun {
  /** Milliseconds from the spawn to the moment the child reported (`at`). */
  readonly readyMs: number;
  /** Milliseconds from that moment until the parent saw the child exit. */
  readonly exitMs: number;
  readonly report: Record<string, unknown>;
}

/** Runs a child that writes one JSON object with `at` (epoch ms) to fd 3 and exits 0. */
function runNode(args: string[], env: NodeJS.ProcessEnv): Promise<ChildRun> {
  return new Promise((resolvePromise, reject) => {
    const spawnedAt = performance.timeOrigin + performance.now();
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'ignore', 'inherit', 'pipe'],
    });
    let report = '';
    child.stdio[3]?.on('data', (chunk: Buffer) => {
      report += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const exitedAt = performance.timeOrigin + performance.now();
      if (code !== 0) return reject(new Error(`node ${args.join(' ').slice(0, 120)} exited with ${code}`));
      try {
        const parsed = JSON.parse(report) as Record<string, unknown>;
        if (typeof parsed.at !== 'number') throw new Error('no "at" in the report');
        resolvePromise({ readyMs: parsed.at - spawnedAt, exitMs: exitedAt - parsed.at, report: parsed });
      } catch (error) {
        reject(
          new Error(`node ${args.join(' ').slice(0, 120)}: bad report ${report.slice(0, 200)} (${error})`),
        );
      }
    });
  });
}

export async function measureColdStart(options: { runs: number }): Promise<ColdStartResult> {
  progress('  bundling the 4 handlers with the stack esbuild settings');
  const bundles = await buildBundles();
  const upstream = await startSmallUpstream();
  const license = join(BUNDLE_DIR, 'license.json');
  mkdirSync(BUNDLE_DIR, { recursive: true });
  writeFileSync(license, JSON.stringify({ licensee: 'Benchmark', valid_until: '2999-12-31' }));
  // Lambda mode, as deployed (NODE_OPTIONS as the stack sets it); nothing of this shell's env.
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '',
    NODE_OPTIONS: '--enable-source-maps',
    AWS_LAMBDA_FUNCTION_NAME: 'erp-proxy-bench',
    AWS_REGION: 'eu-west-1',
    AWS_EC2_METADATA_DISABLED: 'true',
    PROXY_API_KEY: BENCH_PROXY_KEY,
    LICENSE_FILE: license,
    ERP_ALLOWED_TARGETS: '127.0.0.0/8',
    LOG_LEVEL: 'INFO',
  };
  const events: Record<FunctionName, string> = {
    'execute-v1': JSON.stringify(
      postEvent('/api/erp/execute', JSON.stringify(smallBody('v1', upstream.url)), 'cs-1'),
    ),
    'execute-v2': JSON.stringify(
      postEvent('/v2/erp/execute', JSON.stringify(smallBody('v2', upstream.url)), 'cs-2'),
    ),
    version: JSON.stringify(
      postEvent('/v2/erp/version', JSON.stringify(smallBody('version', upstream.url)), 'cs-3'),
    ),
    aux: JSON.stringify(aboutEvent()),
  };
  const child = join(HERE, 'cold-start-child.mjs');
  const bare: number[] = [];
  const sdk: number[] = [];
  const readies = new Map<FunctionName, number[]>(FUNCTIONS.map((fn) => [fn, []]));
  const exits = new Map<FunctionName, number[]>(FUNCTIONS.map((fn) => [fn, []]));
  const imports = new Map<FunctionName, number[]>(FUNCTIONS.map((fn) => [fn, []]));
  const invokes = new Map<FunctionName, number[]>(FUNCTIONS.map((fn) => [fn, []]));
  try {
    // One unmeasured round first: the OS file cache, not Node, is what differs on a first run.
    for (let run = -1; run < options.runs; run++) {
      const bareRun = await runNode(['--input-type=module', '-e', BARE_READY], env);
      if (run >= 0) bare.push(bareRun.readyMs);
      const sdkRun = await runNode(['--input-type=module', '-e', SDK_IMPORT], env);
      if (run >= 0) sdk.push(sdkRun.readyMs);
      for (const fn of FUNCTIONS) {
        const result = await runNode([child, bundles[fn], events[fn], fn], env);
        const report = result.report as {
          importMs: number;
          invokeMs: number;
          statusCode: number;
          body: string;
        };
        if (report.statusCode !== 200 || (fn !== 'aux' && !report.body.endsWith('"error":null}'))) {
          throw new Error(`cold start ${fn}: unexpected answer ${report.statusCode} ${report.body}`);
        }
        if (run >= 0) {
          readies.get(fn)?.push(result.readyMs);
          exits.get(fn)?.push(result.exitMs);
          imports.get(fn)?.push(report.importMs);
          invokes.get(fn)?.push(report.invokeMs);
        }
      }
      if (run >= 0 && (run + 1) % 5 === 0) progress(`  cold start: ${run + 1}/${options.runs} rounds`);
    }
  } finally {
    await upstream.close();
  }
  const bareNodeMs = median(bare);
  return {
    runs: options.runs,
    bareNodeMs,
    sdkImportMs: median(sdk) - bareNodeMs,
    bundles: FUNCTIONS.map((fn) => {
      const readyMs = median(readies.get(fn) ?? []);
      return {
        fn,
        bytes: statSync(bundles[fn]).size,
        mapBytes: statSync(`${bundles[fn]}.map`).size,
        readyMs,
        exitMs: median(exits.get(fn) ?? []),
        coldStartMs: readyMs - bareNodeMs,
        importMs: median(imports.get(fn) ?? []),
        invokeMs: median(invokes.get(fn) ?? []),
      };
    }),
  };
}

/** `GET /_/about`, the aux function's public route. */
function aboutEvent() {
  const event = postEvent('/_/about', '', 'cs-4');
  const { body: _body, ...rest } = event;
  return {
    ...rest,
    routeKey: 'GET /_/about',
    headers: { host: '127.0.0.1:8787', 'user-agent': 'erp-proxy-bench', accept: 'application/json' },
    requestContext: {
      ...rest.requestContext,
      routeKey: 'GET /_/about',
      http: { ...rest.requestContext.http, method: 'GET' },
    },
  };
}
