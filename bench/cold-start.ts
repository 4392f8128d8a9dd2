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
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { FUNCTION_NAMES } from '../lambdas/platform/names.ts';
import { type FunctionName, HANDLER_ENTRIES } from '../lambdas/platform/routes.ts';
import {
  BUNDLE,
  esbuildOptions,
  vendoredSdkDir,
  vendoredSdkOptions,
  vendoredSdkPackageJson,
} from '../lib/proxy-function.ts';
import { EXAMPLE_KEYS_SECRET_ARN, EXAMPLE_LICENSE_SECRET_ARN } from '../test/support/test-secrets.ts';
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
import { startSmallUpstream } from './upstreams.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..');
/**
 * Inside the project's node_modules, so the external `@aws-sdk/*` imports resolve as they do on
 * Lambda (where the runtime provides the SDK).
 */
export const BUNDLE_DIR = join(ROOT, 'node_modules', '.cache', 'erp-proxy-bench');

/** Every function of the stack (HANDLER_ENTRIES has one entry per function). */
export const FUNCTIONS: readonly FunctionName[] = FUNCTION_NAMES;

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

export interface ColdStartResult {
  readonly runs: number;
  readonly bareNodeMs: number;
  readonly bundles: BundleRow[];
  /** A fresh process that only imports the aux function's vendored CloudWatch client, minus bare node. */
  readonly sdkImportMs: number;
  /** First calls with secrets, execute bundles (extension: as deployed; sdk: the alternative). */
  readonly firstCalls: FirstCallRow[];
  /** {@link speedReference} taken just before the rounds (the first-call rows are read against it). */
  readonly speedReferenceMs: number;
  /** The mcp bundle with OAuth configured (README, "Remote agents with OAuth"), beside the row without. */
  readonly oauth: readonly OAuthColdStartRow[];
}

/** A cold start of the mcp bundle with OAuth on: called with the proxy key, or with an access token. */
export interface OAuthColdStartRow {
  readonly caller: 'proxy key' | 'access token';
  /** Import + first invocation, over bare node. */
  readonly coldStartMs: number;
  readonly importMs: number;
  readonly invokeMs: number;
}

/** The audience of the bench's access tokens. */
const OAUTH_AUDIENCE = 'http://127.0.0.1:8787/mcp';

/** Secret ids the first-call runs use; the loopback servers answer them. */
const KEYS_SECRET_ID = EXAMPLE_KEYS_SECRET_ARN;
const LICENSE_SECRET_ID = EXAMPLE_LICENSE_SECRET_ARN;
const SESSION_TOKEN = 'bench-session-token';
/** The Secrets Manager client the SDK alternative would ship (bench only, as VENDORED_SDK does). */
const SECRETS_SDK_PACKAGE = '@aws-sdk/client-secrets-manager';

interface SecretServer {
  readonly url: string;
  readonly port: number;
  /** Secret reads answered so far. */
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
      reads++;
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

/** Reports on fd 3 when the code got there, on the clock the parent reads (epoch milliseconds). */
const REPORT_NOW =
  "(await import('node:fs')).writeSync(3, JSON.stringify({ at: performance.timeOrigin + performance.now() }));";
/** A bare node: ready as soon as its first line of ES module code runs. */
const BARE_READY = REPORT_NOW;
/** The aux function's vendored CloudWatch client, as its first `/_/metrics` imports it. */
const sdkImport = (auxBundle: string): string =>
  `await import(${JSON.stringify(join(dirname(auxBundle), vendoredSdkDir('@aws-sdk/client-cloudwatch'), 'index.mjs'))}); ${REPORT_NOW}`;

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
  const cloudWatch = '@aws-sdk/client-cloudwatch';
  await build(vendoredSdkOptions(ROOT, cloudWatch, dirname(out.aux)));
  writeFileSync(
    join(dirname(out.aux), vendoredSdkDir(cloudWatch), 'package.json'),
    vendoredSdkPackageJson(cloudWatch),
  );
  // The Secrets Manager client, tree-shaken to what platform/secrets.ts uses, packaged the same way.
  const sdkDir = join(dirname(out['execute-v1-sdk']), 'node_modules', SECRETS_SDK_PACKAGE);
  const entry = join(BUNDLE_DIR, 'client-secrets-manager-entry.mjs');
  writeFileSync(
    entry,
    `export { SecretsManagerClient, GetSecretValueCommand } from '${SECRETS_SDK_PACKAGE}';\n`,
  );
  await build({
    ...vendoredSdkOptions(ROOT, cloudWatch, BUNDLE_DIR),
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

/** Runs a child that writes one JSON object with `at` (epoch ms) to fd 3 and exits 0. */
export function runNode(args: string[], env: NodeJS.ProcessEnv): Promise<ChildRun> {
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

export async function measureColdStart(options: { runs: number }): Promise<ColdStartResult> {
  progress(`  bundling the ${FUNCTIONS.length} handlers with the stack esbuild settings`);
  const bundles = await buildBundles();
  const upstream = await startSmallUpstream();
  const env = lambdaModeEnv();
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
    mcp: JSON.stringify(mcpToolCallEvent(upstream.url, 'cs-5')),
  };
  // First calls with secrets: the keys and license come from loopback servers, the deployed way
  // (the extension's API) and the SDK way; nothing of PROXY_API_KEY / LICENSE_FILE.
  const secretValues = {
    [KEYS_SECRET_ID]: BENCH_PROXY_KEY,
    [LICENSE_SECRET_ID]: JSON.stringify({ licensee: 'Benchmark', valid_until: '2999-12-31' }),
  };
  const extension = await startSecretServer('extension', secretValues);
  const secretsManager = await startSecretServer('sdk', secretValues);
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
  // OAuth on: a loopback authorization server (metadata and JWKS), a token for the bench's person,
  // the identity map naming the small upstream. The token call fetches the metadata and the keys.
  const issuer = await startTokenIssuer(OAUTH_AUDIENCE);
  const token = await issuer.mint({ groups: ['bench'], scope: 'erp.read' }, { expiresIn: '6h' });
  const oauthEnv: NodeJS.ProcessEnv = {
    ...env,
    MCP_OAUTH_ISSUER: issuer.issuer,
    MCP_OAUTH_AUDIENCE: OAUTH_AUDIENCE,
    MCP_OAUTH_IDENTITIES: JSON.stringify({
      identities: [
        {
          name: 'bench',
          match: { claim: 'groups', value: 'bench' },
          erp: { url: upstream.url, db: 'erp_a', user_id: ADMIN.uid, api_key: ADMIN.apiKey },
        },
      ],
    }),
  };
  const oauthCases = [
    { caller: 'proxy key' as const, event: events.mcp },
    {
      caller: 'access token' as const,
      event: JSON.stringify(mcpTokenToolCallEvent(upstream.url, 'cs-6', token)),
    },
  ];
  const oauthRuns = oauthCases.map(() => ({
    ready: [] as number[],
    imports: [] as number[],
    invokes: [] as number[],
  }));
  const firstReadies = firstCallCases.map(() => [] as number[]);
  const firstImports = firstCallCases.map(() => [] as number[]);
  const firstInvokes = firstCallCases.map(() => [] as number[]);
  const speedReferenceMs = speedReference();

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
      const sdkRun = await runNode(['--input-type=module', '-e', sdkImport(bundles.aux)], env);
      if (run >= 0) sdk.push(sdkRun.readyMs);
      for (const fn of FUNCTIONS) {
        const result = await runNode([child, bundles[fn], events[fn], fn], env);
        const report = result.report as {
          importMs: number;
          invokeMs: number;
          statusCode: number;
          body: string;
        };
        if (!isGoodAnswer(fn, report.statusCode, report.body)) {
          throw new Error(`cold start ${fn}: unexpected answer ${report.statusCode} ${report.body}`);
        }
        if (run >= 0) {
          readies.get(fn)?.push(result.readyMs);
          exits.get(fn)?.push(result.exitMs);
          imports.get(fn)?.push(report.importMs);
          invokes.get(fn)?.push(report.invokeMs);
        }
      }
      for (const [index, testCase] of firstCallCases.entries()) {
        const server = testCase.secrets === 'extension' ? extension : secretsManager;
        const readsBefore = server.reads();
        const result = await runNode(
          [child, testCase.bundle, events[testCase.fn], testCase.fn],
          secretEnv[testCase.secrets],
        );
        const report = result.report as {
          importMs: number;
          invokeMs: number;
          statusCode: number;
          body: string;
        };
        // Keys and license, each read once from the loopback source, and a good answer.
        if (
          server.reads() - readsBefore !== 2 ||
          report.statusCode !== 200 ||
          !report.body.endsWith('"error":null}')
        ) {
          throw new Error(
            `first call ${testCase.fn} (${testCase.secrets}): ${server.reads() - readsBefore} secret reads, ` +
              `answer ${report.statusCode} ${report.body}`,
          );
        }
        if (run >= 0) {
          firstReadies[index]?.push(result.readyMs);
          firstImports[index]?.push(report.importMs);
          firstInvokes[index]?.push(report.invokeMs);
        }
      }
      for (const [index, testCase] of oauthCases.entries()) {
        const result = await runNode([child, bundles.mcp, testCase.event, 'mcp'], oauthEnv);
        const report = result.report as {
          importMs: number;
          invokeMs: number;
          statusCode: number;
          body: string;
        };
        if (!isGoodAnswer('mcp', report.statusCode, report.body)) {
          throw new Error(
            `cold start mcp with OAuth (${testCase.caller}): ${report.statusCode} ${report.body}`,
          );
        }
        if (run >= 0) {
          oauthRuns[index]?.ready.push(result.readyMs);
          oauthRuns[index]?.imports.push(report.importMs);
          oauthRuns[index]?.invokes.push(report.invokeMs);
        }
      }
      if (run >= 0 && (run + 1) % 5 === 0) progress(`  cold start: ${run + 1}/${options.runs} rounds`);
    }
  } finally {
    await upstream.close();
    await extension.close();
    await secretsManager.close();
    await issuer.close();
  }
  const bareNodeMs = median(bare);
  return {
    runs: options.runs,
    bareNodeMs,
    sdkImportMs: median(sdk) - bareNodeMs,
    speedReferenceMs,
    oauth: oauthCases.map((testCase, index) => ({
      caller: testCase.caller,
      coldStartMs: median(oauthRuns[index]?.ready ?? []) - bareNodeMs,
      importMs: median(oauthRuns[index]?.imports ?? []),
      invokeMs: median(oauthRuns[index]?.invokes ?? []),
    })),
    firstCalls: firstCallCases.map((testCase, index) => ({
      fn: testCase.fn,
      secrets: testCase.secrets,
      firstCallMs: median(firstReadies[index] ?? []) - bareNodeMs,
      importMs: median(firstImports[index] ?? []),
      invokeMs: median(firstInvokes[index] ?? []),
    })),
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
