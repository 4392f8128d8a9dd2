/**
 * The deployable artifacts work: each handler is bundled with the stack's own esbuild settings
 * (ESM, minified, `@aws-sdk/*` external, the `require` shim), imported from the bundle, and
 * invoked in Lambda mode with an API Gateway payload 2.0 event against the ERP double.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { isBuiltin } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BUNDLE_BUDGETS, renderSizes, SIZE_DOCUMENTS, withSizes } from '../../bin/bundle-sizes.ts';
import { buildFunctionBundles } from '../../bin/function-bundles.ts';
import { type FunctionName, HANDLER_ENTRIES, ROUTES } from '../../lambdas/platform/routes.ts';
import { LICENSE_CHECK_EVENT } from '../../lambdas/platform/scheduled-jobs.ts';
import {
  esbuildOptions,
  NODE_BUILTIN_SHIMS,
  VENDORED,
  type VendoredPackage,
  vendoredDir,
  vendoredOptions,
  vendoredPackageJson,
} from '../../lib/proxy-function.ts';
import { DOUBLE_USERS, type ErpDouble, startErpDouble } from '../erp-double/index.ts';
import { httpApiEvent, type InvokedHandler, lambdaContext } from '../support/http-api-event.ts';
import { READ_TOOLS } from '../support/mcp-client.ts';

const KEY = 'bundle-proxy-key-0123456789';
const admin = DOUBLE_USERS.find((u) => u.db === 'erp_a' && u.uid === 2 && !u.expired)!;

function event(path: string, body?: unknown) {
  const route = ROUTES.find((r) => r.path === path)!;
  return httpApiEvent(route, {
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const context = lambdaContext;

describe('bundled handlers, invoked as Lambda would', () => {
  let dir: string;
  let double: ErpDouble;
  const handlers = {} as Record<FunctionName, InvokedHandler>;
  const metafiles = {} as Record<FunctionName, Metafile>;
  let built: Awaited<ReturnType<typeof buildFunctionBundles>>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'erp-proxy-bundle-'));
    double = await startErpDouble({ mode: '19' });
    const license = join(dir, 'license.json');
    writeFileSync(license, JSON.stringify({ licensee: 'Bundle test', valid_until: '2999-12-31' }));
    // Lambda mode: the runtime reads these at import (cold start).
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'erp-proxy-bundle-test');
    vi.stubEnv('PROXY_API_KEY', KEY);
    vi.stubEnv('LICENSE_FILE', license);
    vi.stubEnv('ERP_ALLOWED_TARGETS', '127.0.0.0/8');
    vi.stubEnv('LOG_LEVEL', 'ERROR');
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'true');
    built = await buildFunctionBundles(dir);
    for (const fn of Object.keys(HANDLER_ENTRIES) as FunctionName[]) {
      metafiles[fn] = built[fn].metafile;
      handlers[fn] = (
        (await import(pathToFileURL(built[fn].file).href)) as { handler: InvokedHandler }
      ).handler;
    }
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await double.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('docs/reference/performance.md and BENCHMARKS.md state these sizes (npm run docs:sizes writes them)', () => {
    const block = renderSizes(built);
    for (const name of SIZE_DOCUMENTS) {
      const text = readFileSync(name, 'utf8');
      expect(
        withSizes(text, block, name) === text,
        `${name}: bundle sizes out of date, run npm run docs:sizes`,
      ).toBe(true);
    }
  });

  it.each(Object.keys(HANDLER_ENTRIES) as FunctionName[])(
    'keeps the %s bundle within its size budget (bin/bundle-sizes.ts: the cold start grows with it)',
    (fn) => {
      const code = readFileSync(join(dir, fn, 'index.mjs'), 'utf8');
      expect(BUNDLE_BUDGETS[fn]).toBeGreaterThan(0);
      expect(Buffer.byteLength(code), fn).toBeLessThanOrEqual(BUNDLE_BUDGETS[fn]);
    },
  );

  it('keeps the execute bundles within the 294 KB budget (bench/README.md), with no AWS SDK inside or loaded at import', () => {
    for (const fn of ['execute-v1', 'execute-v2'] as const) {
      const code = readFileSync(join(dir, fn, 'index.mjs'), 'utf8');
      expect(BUNDLE_BUDGETS[fn]).toBe(294 * 1024);
      expect(Buffer.byteLength(code), fn).toBeLessThanOrEqual(BUNDLE_BUDGETS[fn]);
      // No SDK at module load (cold start); none inlined either (the extension reads secrets).
      expect(code).not.toMatch(/import[^;(]*from\s*"@aws-sdk\//);
      expect(code).not.toContain('aws-sdk-js');
    }
  });

  it('no bundle loads node:stream/web at import (Middy only needs it for streaming, ~7 ms of cold start)', () => {
    for (const fn of Object.keys(HANDLER_ENTRIES)) {
      const code = readFileSync(join(dir, fn, 'index.mjs'), 'utf8');
      expect(code, fn).not.toContain('node:stream/web');
      expect(code, fn).not.toMatch(/from\s*"stream\/web"/);
    }
  });

  it('no bundle imports node:http, node:https or a built-in of NODE_BUILTIN_SHIMS as an ES module (Node 24 builds its whole namespace: platform/node-http.ts)', () => {
    const avoided = ['node:http', 'node:https', ...Object.keys(NODE_BUILTIN_SHIMS)];
    expect(avoided).toEqual(expect.arrayContaining(['node:crypto', 'node:fs', 'node:fs/promises']));
    for (const fn of Object.keys(HANDLER_ENTRIES)) {
      const code = readFileSync(join(dir, fn, 'index.mjs'), 'utf8');
      // `from "x"`, `import("x")` and a bare `import "x"`, with or without the `node:` prefix.
      const imported = [...code.matchAll(/\b(?:from\s*|import\s*\(\s*|import\s*)["']([^"']+)["']/g)].map(
        (match) => (match[1]?.startsWith('node:') ? match[1] : `node:${match[1]}`),
      );
      expect(
        imported.filter((name) => avoided.includes(name)),
        fn,
      ).toEqual([]);
      // The shims are in: each reads Node's module object.
      expect(code, fn).toContain('process.getBuiltinModule("node:crypto")');
    }
  });

  it("each built-in shim (lambdas/platform/shims/node/) gives Node's own functions and constants, from a real built-in", async () => {
    expect(Object.keys(NODE_BUILTIN_SHIMS).length).toBeGreaterThan(0);
    for (const [name, file] of Object.entries(NODE_BUILTIN_SHIMS)) {
      expect(isBuiltin(name), name).toBe(true);
      const shim = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      const node = process.getBuiltinModule(name) as Record<string, unknown>;
      expect(Object.keys(shim).length, name).toBeGreaterThan(0);
      for (const [key, value] of Object.entries(shim)) {
        expect(['function', 'number'], `${name} ${key}`).toContain(typeof value);
        expect(value, `${name} ${key}`).toBe(node[key]);
      }
    }
  });

  it('a name a shim does not have fails the build, imported by name or read from the namespace; no require() reaches a shim', async () => {
    const source = join(dir, 'shim-miss');
    mkdirSync(source, { recursive: true });
    const cases = {
      named: "import { getHashes } from 'node:crypto'; export const handler = () => getHashes();",
      namespace: "import * as c from 'node:crypto'; export const handler = () => c.getHashes();",
    };
    for (const [kind, code] of Object.entries(cases)) {
      writeFileSync(join(source, `${kind}.ts`), code);
      await expect(
        build(esbuildOptions(join(source, `${kind}.ts`), join(source, `${kind}.mjs`))),
        kind,
      ).rejects.toThrow(/getHashes/);
    }
    // A bundled CommonJS require() of a shimmed built-in would get only the shim's names, unchecked.
    for (const fn of Object.keys(HANDLER_ENTRIES) as FunctionName[]) {
      const required = Object.entries(metafiles[fn].inputs).flatMap(([input, { imports }]) =>
        imports
          .filter((entry) => entry.kind === 'require-call' && entry.path.includes('shims/node/'))
          .map((entry) => `${input} requires ${entry.path}`),
      );
      expect(required, fn).toEqual([]);
    }
  });

  it('no bundle loads node:zlib at import (compression loads it on the first compressed answer)', () => {
    for (const fn of Object.keys(HANDLER_ENTRIES)) {
      const code = readFileSync(join(dir, fn, 'index.mjs'), 'utf8');
      const imported = [...code.matchAll(/\bfrom\s*"([^"]+)"/g)].map((match) => match[1]);
      expect(imported, fn).not.toContain('node:zlib');
      expect(imported, fn).not.toContain('zlib');
    }
  });

  /**
   * The bytes a source file contributes to a function's bundle. A file esbuild dropped by tree
   * shaking can leave a few: the calls that initialise what it imports, when those modules are
   * wrapped for the lazy method-docs import (`init_x()`, a handful of bytes each).
   */
  const bytesOf = (fn: FunctionName, source: string): number => {
    const output = Object.values(metafiles[fn].outputs).find((out) => out.entryPoint !== undefined);
    return output?.inputs[source]?.bytesInOutput ?? 0;
  };
  const CARRIED_BYTES = 64;
  /** The files that import `source` into a function's bundle, with how (`import-statement`, `dynamic-import`). */
  const importsOf = (fn: FunctionName, source: string): string[] =>
    Object.entries(metafiles[fn].inputs).flatMap(([file, input]) =>
      input.imports
        .filter((imported) => imported.path === source)
        .map((imported) => `${file}: ${imported.kind}`),
    );

  it.each<[FunctionName, readonly string[]]>([
    ['execute-v1', ['lambdas/operator/metrics-source.ts', 'lambdas/upstream/v2-over-jsonrpc.ts']],
    [
      'execute-v2',
      [
        'lambdas/operator/metrics-source.ts',
        'lambdas/upstream/v1-over-json2.ts',
        'lambdas/upstream/method-docs.ts',
      ],
    ],
    [
      'version',
      [
        'lambdas/operator/metrics-source.ts',
        'lambdas/upstream/transport-routing.ts',
        'lambdas/upstream/json2-transport.ts',
        'lambdas/upstream/v1-over-json2.ts',
        'lambdas/upstream/v2-over-jsonrpc.ts',
        'lambdas/upstream/method-docs.ts',
      ],
    ],
    [
      'aux',
      [
        'lambdas/upstream/http-client.ts',
        'lambdas/upstream/target-policy.ts',
        'lambdas/upstream/transport-routing.ts',
        'lambdas/upstream/version-client.ts',
        'lambdas/core/forward.ts',
        'lambdas/core/schemas.ts',
      ],
    ],
  ])('the %s bundle carries only what its handler uses: none of %j', (fn, absent) => {
    for (const source of absent) {
      expect(bytesOf(fn, source), `${fn} carries ${source}`).toBeLessThan(CARRIED_BYTES);
    }
  });

  it.each<FunctionName>(['execute-v1', 'execute-v2', 'version', 'aux'])(
    'the %s bundle carries zod/mini only: no zod classic and no zod locale (platform/zod.ts says why)',
    (fn) => {
      const output = Object.values(metafiles[fn].outputs).find((out) => out.entryPoint !== undefined);
      const carried = Object.entries(output?.inputs ?? {})
        .filter(([source, input]) => input.bytesInOutput > 0 && /node_modules\/zod\//.test(source))
        .map(([source]) => source);
      expect(carried.length, fn).toBeGreaterThan(0);
      expect(
        carried.filter((source) => !/node_modules\/zod\/v4\/(core|mini)\//.test(source)),
        fn,
      ).toEqual([]);
    },
  );

  it('execute-v1 loads the method-docs client only on its first use (a dynamic import)', () => {
    expect(bytesOf('execute-v1', 'lambdas/upstream/method-docs.ts')).toBeGreaterThan(CARRIED_BYTES);
    expect(importsOf('execute-v1', 'lambdas/upstream/method-docs.ts')).toEqual([
      'lambdas/handlers/runtime-upstream.ts: dynamic-import',
    ]);
  });

  it('only aux carries the CloudWatch metrics source', () => {
    expect(bytesOf('aux', 'lambdas/operator/metrics-source.ts')).toBeGreaterThan(CARRIED_BYTES);
  });

  it('execute-v1 answers a search_count', async () => {
    const response = await handlers['execute-v1'](
      event('/api/erp/execute', {
        id: 'b1',
        action: 'search_count',
        model_id: 'res.partner',
        params: [[]],
        erp_instance: { url: double.url, db: 'erp_a', user_id: 2, api_key: admin.apiKey },
      }),
      context('execute-v1'),
    );
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({
      jsonrpc: '2.0',
      id: 'b1',
      result: expect.any(Number),
      error: null,
    });
    expect(double.requests.at(-1)?.headers['x-forwarded-for']).toBe('203.0.113.7');
  });

  it('execute-v1, in a fresh process, serves a call to an http: ERP without loading node:https, undici, node:fs/promises, perf_hooks or web crypto', async () => {
    const invocation = JSON.stringify({
      event: event('/api/erp/execute', {
        id: 'b-fresh',
        action: 'search_count',
        model_id: 'res.partner',
        params: [[]],
        erp_instance: { url: double.url, db: 'erp_a', user_id: 2, api_key: admin.apiKey },
      }),
      context: { ...context('execute-v1'), getRemainingTimeInMillis: undefined },
    });
    const script = `
      const { event, context } = JSON.parse(process.argv[2]);
      const { handler } = await import(process.argv[1]);
      const response = await handler(event, { ...context, getRemainingTimeInMillis: () => 20000 });
      const loaded = process.moduleLoadList;
      process.stdout.write(JSON.stringify({
        status: response.statusCode,
        https: loaded.includes('NativeModule https'),
        undici: loaded.some((name) => name.includes('undici')),
        fsPromises: loaded.includes('NativeModule fs/promises'),
        perfHooks: loaded.includes('NativeModule perf_hooks'),
        webCrypto: loaded.includes('NativeModule internal/crypto/webcrypto'),
      }));
      process.exit(0);`;
    const output = await new Promise<string>((done, fail) => {
      execFile(
        process.execPath,
        ['--input-type=module', '-e', script, pathToFileURL(built['execute-v1'].file).href, invocation],
        { env: { ...process.env, NODE_OPTIONS: '' }, timeout: 30_000 },
        (error, stdout) => (error ? fail(error) : done(stdout)),
      );
    });
    // Nor what only an ES module import of a built-in (NODE_BUILTIN_SHIMS), `node:fs/promises`
    // (platform/secrets.ts reads LICENSE_FILE with node:fs) or `performance` (platform/clock.ts) loads.
    expect(JSON.parse(output)).toEqual({
      status: 200,
      https: false,
      undici: false,
      fsPromises: false,
      perfHooks: false,
      webCrypto: false,
    });
  });

  it('execute-v2 answers a search_count', async () => {
    const response = await handlers['execute-v2'](
      event('/v2/erp/execute', {
        id: 'b2',
        model_id: 'res.partner',
        method: 'search_count',
        kwargs: { domain: [] },
        erp_instance: { url: double.url, db: 'erp_a', api_key: admin.apiKey },
      }),
      context('execute-v2'),
    );
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body).result).toEqual(expect.any(Number));
  });

  it('version answers the ERP version', async () => {
    const response = await handlers.version(
      event('/v2/erp/version', { id: 'b3', url: double.url }),
      context('version'),
    );
    expect(JSON.parse(response.body).result).toEqual({
      version_info: [19, 0, 0, 'final', 0, ''],
      version: '19.0',
    });
  });

  it('aux answers /_/about, with the Lambda function name', async () => {
    const response = await handlers.aux(event('/_/about'), context('aux'));
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body).runtime).toEqual(
      expect.objectContaining({ function_name: 'erp-proxy-bundle-test' }),
    );
  });

  it('keeps the mcp bundle within its 388 KB budget, without the MCP SDK server or its schemas (protocol/mcp/ serves MCP)', () => {
    const code = readFileSync(join(dir, 'mcp', 'index.mjs'), 'utf8');
    expect(BUNDLE_BUDGETS.mcp).toBe(388 * 1024);
    expect(Buffer.byteLength(code)).toBeLessThanOrEqual(BUNDLE_BUDGETS.mcp);
    // The SDK's Server (server/index.js) and its zod message schemas (types.js), Ajv, zod 3.
    expect(code).not.toContain('Schema is missing a method literal');
    expect(code).not.toContain('notifications/roots/list_changed');
    expect(code).not.toContain('ajv-validator/ajv');
    expect(code).not.toContain('$refStrategy');
    expect(code).not.toMatch(/import[^;(]*from\s*"@aws-sdk\//);
    // jose ships beside the bundle (lib/proxy-function.ts, VENDORED), imported on the first token.
    expect(/import\(\s*"jose"\s*\)/.test(code)).toBe(true);
    expect(
      Object.keys(metafiles.mcp.inputs).filter((source) => source.includes('node_modules/jose/')),
    ).toEqual([]);
    expect(built.mcp.vendored.map((shipped) => shipped.pkg)).toEqual(['jose']);
  });

  it('mcp lists its tools and answers a tool call against the ERP, and GET with 405', async () => {
    const mcp = (message: unknown, headers: Record<string, string> = {}) => {
      const base = event('/mcp', message);
      return handlers.mcp(
        {
          ...base,
          headers: {
            ...base.headers,
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-11-25',
            ...headers,
          },
        },
        context('mcp'),
      );
    };
    const listed = await mcp({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(listed.statusCode).toBe(200);
    const tools = (JSON.parse(listed.body) as { result: { tools: { name: string; inputSchema: unknown }[] } })
      .result.tools;
    expect(tools.map((tool) => tool.name)).toEqual(READ_TOOLS);
    expect(tools[0]?.inputSchema).toMatchObject({ type: 'object', required: ['model'] });
    const called = await mcp(
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'search_read', arguments: { model: 'res.partner', fields: ['name'], limit: 1 } },
      },
      { 'x-erp-url': double.url, 'x-erp-db': 'erp_a', 'x-erp-api-key': admin.apiKey },
    );
    const result = (JSON.parse(called.body) as { result: { isError?: boolean; content: { text: string }[] } })
      .result;
    expect(result.isError).toBeUndefined();
    expect(JSON.parse(result.content[0]?.text ?? '')).toEqual([
      { id: expect.any(Number), name: expect.any(String) },
    ]);
    const refused = await handlers.mcp(
      {
        ...event('/mcp'),
        routeKey: 'GET /mcp',
        requestContext: {
          ...event('/mcp').requestContext,
          http: { ...event('/mcp').requestContext.http, method: 'GET' },
        },
      },
      context('mcp'),
    );
    expect(refused.statusCode).toBe(405);
  });

  it('refuses a wrong x-api-key with 401', async () => {
    const response = await handlers['execute-v1'](
      { ...event('/api/erp/execute', { id: 'b4' }), headers: { 'x-api-key': 'wrong' } },
      context('execute-v1'),
    );
    expect(response.statusCode).toBe(401);
  });

  it('aux runs the hourly license check for the scheduled event, and refuses an event it does not know', async () => {
    const check = (await handlers.aux({ ...LICENSE_CHECK_EVENT }, context('aux'))) as unknown;
    expect(check).toEqual({
      job: 'license-days-left',
      is_valid: true,
      license_days_left: expect.any(Number),
    });
    await expect(handlers.aux({ source: 'aws.events', detail: {} }, context('aux'))).rejects.toThrow(
      /neither an API Gateway HTTP API/,
    );
  });
});

describe('the AWS SDK client shipped with the aux function', () => {
  const ROOT = resolve('.');
  const PKG: VendoredPackage = '@aws-sdk/client-cloudwatch';
  const lockedVersion = (
    JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version: string }>;
    }
  ).packages[`node_modules/${PKG}`]?.version;
  let dir: string;

  beforeAll(async () => {
    // Outside the project: the bare import can only find the shipped copy, as on Lambda it finds
    // it before the runtime's SDK.
    dir = mkdtempSync(join(tmpdir(), 'erp-proxy-vendored-'));
    await build(vendoredOptions(ROOT, PKG, dir));
    writeFileSync(join(dir, vendoredDir(PKG), 'package.json'), vendoredPackageJson(PKG));
    mkdirSync(join(dir, 'handler'), { recursive: true });
    writeFileSync(join(dir, 'handler', 'probe.mjs'), `export * as sdk from '${PKG}';\n`);
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('is one ES module file, tree-shaken to what metrics-source.ts uses', async () => {
    expect(Object.keys(VENDORED)).toEqual([PKG, 'jose']);
    const { sdk } = (await import(pathToFileURL(join(dir, 'handler', 'probe.mjs')).href)) as {
      sdk: Record<string, unknown>;
    };
    expect(Object.keys(sdk).sort()).toEqual(['CloudWatchClient', 'GetMetricDataCommand']);
  });

  it('is the version of package-lock.json, and it talks to CloudWatch', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const server = createServer((request, response) => {
      seen.push(request.headers);
      request.resume();
      response.writeHead(500).end();
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const { sdk } = (await import(pathToFileURL(join(dir, 'handler', 'probe.mjs')).href)) as {
        sdk: typeof import('@aws-sdk/client-cloudwatch');
      };
      const client = new sdk.CloudWatchClient({
        region: 'eu-west-1',
        endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-real-secret' },
        maxAttempts: 1,
      });
      await expect(
        client.send(
          new sdk.GetMetricDataCommand({
            MetricDataQueries: [],
            StartTime: new Date(0),
            EndTime: new Date(60_000),
          }),
        ),
      ).rejects.toThrow();
      expect(lockedVersion).toMatch(/^3\./);
      expect(String(seen[0]?.['user-agent'] ?? seen[0]?.['x-amz-user-agent'])).toContain(
        `aws-sdk-js/${lockedVersion}`,
      );
    } finally {
      await new Promise<void>((done) => server.close(() => done()));
    }
  });
});

describe('the jose shipped with the mcp function', () => {
  const ROOT = resolve('.');
  let dir: string;

  beforeAll(async () => {
    // Outside the project, as on Lambda: the bare import finds only the shipped copy.
    dir = mkdtempSync(join(tmpdir(), 'erp-proxy-vendored-jose-'));
    await build(vendoredOptions(ROOT, 'jose', dir));
    writeFileSync(join(dir, vendoredDir('jose'), 'package.json'), vendoredPackageJson('jose'));
    mkdirSync(join(dir, 'handler'), { recursive: true });
    writeFileSync(join(dir, 'handler', 'probe.mjs'), "export * as jose from 'jose';\n");
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("is what the token checks use of jose, and checks a token signed by the project's own jose", async () => {
    const { jose } = (await import(pathToFileURL(join(dir, 'handler', 'probe.mjs')).href)) as {
      jose: typeof import('jose');
    };
    expect(Object.keys(jose).sort()).toEqual([
      'createLocalJWKSet',
      'decodeJwt',
      'decodeProtectedHeader',
      'errors',
      'jwtVerify',
    ]);
    const signer = await import('jose');
    const { publicKey, privateKey } = await signer.generateKeyPair('ES256', { extractable: true });
    const jwk = { ...(await signer.exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
    const token = await new signer.SignJWT({ scope: 'erp.read' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer('https://issuer.example.com')
      .setAudience('https://proxy.example.com/mcp')
      .setExpirationTime('5m')
      .sign(privateKey);
    const keys = jose.createLocalJWKSet({ keys: [jwk] });
    const { payload } = await jose.jwtVerify(token, keys, {
      issuer: 'https://issuer.example.com',
      audience: 'https://proxy.example.com/mcp',
    });
    expect(payload.scope).toBe('erp.read');
    await expect(
      jose.jwtVerify(token, jose.createLocalJWKSet({ keys: [{ ...jwk, kid: 'other' }] })),
    ).rejects.toBeInstanceOf(jose.errors.JWKSNoMatchingKey);
  });
});
