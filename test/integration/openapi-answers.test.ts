/**
 * Real answers of the local proxy, over loopback, against what `docs/openapi.json` says of them:
 * for each, the document lists the status under that operation, with that content type, and the
 * body validates (ajv, JSON Schema 2020-12) against the schema given there. Covers the answers a
 * caller meets besides success: the proxy's errors of each API, the operator endpoints (every
 * field of `/_/about` declared, the -32603 of a failing `/_/metrics` or `/_/license`), and the
 * gateway's own answers (408, 413, 431 and the 500 of a function that ran out of time).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_REQUEST_HEADER_BYTES } from '../../lambdas/local/server.ts';
import { USERS, useErpDouble, withProxy } from '../support/fixtures.ts';
import { deref, type Json, openApiDocument } from '../support/openapi-doc.ts';
import type { ProxyHarness } from '../support/proxy-harness.ts';
import { TEST_PROXY_KEY } from '../support/test-secrets.ts';

const doc = openApiDocument as { paths: Record<string, Record<string, Json>>; components: Json };
const DOC_ID = 'https://erp-proxy.invalid/openapi.json';

const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
ajv.addSchema({ $id: DOC_ID, components: doc.components });

/** A schema of the document with its local references made absolute, for ajv. */
function resolvable(schema: unknown): Json {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${DOC_ID}#/components/`)) as Json;
}

/** `schema` with every object that lists properties closed: no field the document does not name. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, closed(value)])) as Json;
  if ('properties' in copy && !('additionalProperties' in copy)) copy.additionalProperties = false;
  return copy;
}

interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

/** Checks that the document lists `answer` for the operation, and that the body fits its schema. */
function expectDocumented(method: string, path: string, answer: Answer, strict = false): void {
  const operation = doc.paths[path]?.[method.toLowerCase()] as { responses: Json } | undefined;
  const response = deref<Json>(operation?.responses[String(answer.status)] ?? {});
  const where = `${method} ${path} ${answer.status} ${answer.body.slice(0, 120)}`;
  expect(response.content, `${where}: status not documented`).toBeDefined();
  const mediaType = answer.contentType.split(';')[0]?.trim() ?? '';
  const media = (response.content as Record<string, { schema: Json }>)[mediaType];
  expect(media, `${where}: content type ${mediaType} not documented`).toBeDefined();
  if (mediaType !== 'application/json') return;
  const schema = resolvable(media?.schema);
  const validate = ajv.compile(strict ? (closed(schema) as Json) : schema);
  const valid = validate(JSON.parse(answer.body));
  expect(validate.errors ?? [], where).toEqual([]);
  expect(valid).toBe(true);
}

async function fetched(proxy: ProxyHarness, method: string, path: string, body?: unknown, headers = {}) {
  const response = await fetch(`${proxy.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    body: await response.text(),
  };
}

/** Writes `bytes` on a new connection and reads the answer until the server closes it. */
function raw(proxy: ProxyHarness, bytes: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(proxy.url).port), '127.0.0.1', () => socket.write(bytes));
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = received.split('\r\n\r\n');
      resolve({
        status: Number(head.split(' ')[1]),
        contentType: /content-type: ([^\r\n]+)/i.exec(head)?.[1] ?? '',
        body,
      });
    });
  });
}

const KEY = { 'x-api-key': TEST_PROXY_KEY };

describe('every answer of the local proxy is one docs/openapi.json documents', () => {
  const double = useErpDouble();
  const v1 = (instance: Json = {}) => ({
    id: 'doc',
    action: 'search_read',
    model_id: 'res.partner',
    params: [[]],
    keyword: { fields: ['name'], limit: 1 },
    erp_instance: {
      url: double.url,
      db: 'erp_a',
      user_id: USERS.adminA.uid,
      api_key: USERS.adminA.apiKey,
      ...instance,
    },
  });
  const v2 = (kwargs: unknown = { domain: [], fields: ['name'], limit: 1 }, instance: Json = {}) => ({
    id: 'doc',
    model_id: 'res.partner',
    method: 'search_read',
    kwargs,
    erp_instance: { url: double.url, db: 'erp_a', api_key: USERS.adminA.apiKey, ...instance },
  });
  const dir = mkdtempSync(join(tmpdir(), 'erp-proxy-openapi-answers-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the execute and version endpoints: success, ERP errors and proxy errors', async () => {
    await withProxy({}, async (proxy) => {
      const cases: [string, string, unknown, Record<string, string>][] = [
        ['POST', '/api/erp/execute', v1(), KEY],
        ['POST', '/v1/erp/execute', v1({ api_key: 'wrong-key' }), KEY], // ERP error, 200
        ['POST', '/api/erp/execute', '{"id":', KEY], // -32700
        ['POST', '/api/erp/execute', { ...v1(), action: 'nope' }, KEY], // -32600
        ['POST', '/api/erp/execute', { ...v1(), action: 'call_method' }, KEY], // -32002
        ['POST', '/api/erp/execute', v1(), {}], // -32000
        ['POST', '/api/erp/execute', v1({ url: 'http://169.254.169.254' }), KEY], // -32008
        ['POST', '/api/erp/execute', v1({ url: 'http://127.0.0.1:1' }), KEY], // -32004
        ['POST', '/v2/erp/execute', v2(), KEY],
        ['POST', '/v2/erp/execute', v2({ domain: [], nope: 1 }), KEY], // ERP 422, 200
        ['POST', '/v2/erp/execute', v2([]), KEY], // plain-text 400
        ['POST', '/v2/erp/execute', { ...v2(), model_id: 'bad model' }, KEY], // -32007
        ['POST', '/api/erp/version', { id: 'v', url: double.url }, KEY],
        ['POST', '/v2/erp/version', { id: 'v' }, KEY], // -32600
      ];
      for (const [method, path, body, headers] of cases) {
        expectDocumented(method, path, await fetched(proxy, method, path, body, headers));
      }
    });
  });

  it("a key policy's refusals: 403 -32008 on every API, /mcp and the operator endpoints", async () => {
    const reading = 'read-only-key-0123456789abcdef';
    const nothing = 'operator-less-key-0123456789abcdef';
    const env = {
      PROXY_API_KEY: '',
      PROXY_API_KEYS: JSON.stringify({
        keys: [
          { name: 'reading', key: reading, policy: { access: 'read', models: ['res.partner'] } },
          { name: 'v1-only', key: nothing, policy: { apis: ['v1'] } },
        ],
      }),
    };
    await withProxy({ env }, async (proxy) => {
      const read = { 'x-api-key': reading };
      const v1Only = { 'x-api-key': nothing };
      const cases: [string, string, unknown, Record<string, string>][] = [
        ['POST', '/api/erp/execute', { ...v1(), action: 'unlink' }, read],
        ['POST', '/api/erp/execute', { ...v1(), model_id: 'res.users' }, read],
        ['POST', '/v2/erp/execute', { ...v2(), method: 'write' }, read],
        ['POST', '/api/erp/version', { id: 'v', url: double.url }, v1Only],
        ['POST', '/v2/erp/execute', v2(), v1Only],
        ['POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, v1Only],
        ['GET', '/_/license', undefined, v1Only],
        ['GET', '/_/metrics', undefined, v1Only],
      ];
      for (const [method, path, body, headers] of cases) {
        const answer = await fetched(proxy, method, path, body, {
          accept: 'application/json, text/event-stream',
          ...headers,
        });
        expect(answer.status, `${method} ${path}`).toBe(403);
        expect(JSON.parse(answer.body).error.code).toBe(-32008);
        expectDocumented(method, path, answer);
      }
    });
  });

  it("the operators' brakes: their answers, their refusals, and a braked key's -32012 on every route", async () => {
    const operator = { 'x-api-key': 'brakes-operator-key-0123456789' };
    const spare = { 'x-api-key': 'brakes-spare-key-0123456789ab' };
    const plain = { 'x-api-key': 'brakes-plain-key-0123456789ab' };
    const env = {
      PROXY_API_KEY: '',
      BRAKES_REFRESH: '1',
      PROXY_API_KEYS: JSON.stringify({
        keys: [
          { name: 'operator', key: operator['x-api-key'], policy: { apis: ['brakes', 'operator'] } },
          { name: 'spare', key: spare['x-api-key'], policy: { apis: ['brakes', 'v2'] } },
          { name: 'plain', key: plain['x-api-key'] },
        ],
      }),
    };
    await withProxy({ env }, async (proxy) => {
      const documented = async (
        method: string,
        path: string,
        body: unknown,
        headers: object,
        status: number,
      ) => {
        const answer = await fetched(proxy, method, path, body, {
          accept: 'application/json, text/event-stream',
          ...headers,
        });
        expect(answer.status, `${method} ${path} ${answer.body}`).toBe(status);
        expectDocumented(method, path, answer, status === 200);
        return JSON.parse(answer.body) as Json;
      };
      const set = await documented(
        'POST',
        '/_/brakes',
        { scope: { key: 'plain' }, mode: 'all', reason: 'Documented.', expires: '2099-01-01T00:00:00Z' },
        operator,
        200,
      );
      const { id } = set.brake as { id: string };
      await documented(
        'POST',
        '/_/brakes',
        { scope: 'all', mode: 'writes', reason: 'Writes paused.' },
        operator,
        200,
      );
      await documented('GET', '/_/brakes', undefined, operator, 200);
      await documented('POST', '/_/brakes', { scope: 'all', mode: 'sometimes', reason: 'x' }, operator, 400);
      await documented('POST', '/_/brakes/release', { id: 'brk_unknown' }, operator, 400);
      await documented('GET', '/_/brakes', undefined, plain, 403);
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      // The key braked `all` (with an expiry: Retry-After) on every keyed route it may call.
      for (const [method, path, body] of [
        ['POST', '/api/erp/execute', v1()],
        ['POST', '/v2/erp/execute', v2()],
        ['POST', '/api/erp/version', { id: 'v', url: double.url }],
        ['POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }],
        ['GET', '/_/license', undefined],
        ['GET', '/_/metrics', undefined],
      ] as const) {
        const refused = await documented(method, path, body, plain, 503);
        expect((refused.error as Json).code, `${method} ${path}`).toBe(-32012);
      }
      // The `writes` brake on every caller: a write is refused at the gate, a read goes on.
      const write = await documented(
        'POST',
        '/v2/erp/execute',
        { ...v2(), method: 'create', kwargs: { vals_list: [{}] } },
        spare,
        503,
      );
      expect((write.error as Json).code).toBe(-32012);
      await documented('POST', '/_/brakes/release', { id }, spare, 200);
    });
  });

  it('an invalid license: 403 code 0, and /_/license says why', async () => {
    const file = join(dir, 'expired.json');
    writeFileSync(file, JSON.stringify({ licensee: 'ACME', valid_until: '2020-01-31' }));
    await withProxy({ env: { LICENSE_FILE: file } }, async (proxy) => {
      expectDocumented(
        'POST',
        '/api/erp/execute',
        await fetched(proxy, 'POST', '/api/erp/execute', v1(), KEY),
      );
      expectDocumented('GET', '/_/license', await fetched(proxy, 'GET', '/_/license', undefined, KEY));
    });
  });

  it('the operator endpoints, /_/about with every field declared', async () => {
    const envs: Record<string, string>[] = [
      {},
      { AUX_PUBLIC: 'license,metrics', ERP_V1_TRANSPORT: 'json2', BUILD_COMMIT: 'abc1234' },
    ];
    for (const env of envs) {
      await withProxy({ env }, async (proxy) => {
        expectDocumented('GET', '/_/about', await fetched(proxy, 'GET', '/_/about'), true);
        expectDocumented(
          'GET',
          '/_/license',
          await fetched(proxy, 'GET', '/_/license', undefined, KEY),
          true,
        );
        expectDocumented('GET', '/_/metrics', await fetched(proxy, 'GET', '/_/metrics', undefined, KEY));
      });
    }
    await withProxy({}, async (proxy) => {
      expectDocumented('GET', '/_/license', await fetched(proxy, 'GET', '/_/license'));
      expectDocumented('GET', '/_/metrics', await fetched(proxy, 'GET', '/_/metrics'));
    });
  });

  it('a failing /_/metrics (CloudWatch) and /_/license (the secret): the -32603 envelope', async () => {
    const failing = {
      metricsSource: {
        snapshot: () => Promise.reject(new Error('CloudWatch GetMetricData failed (ThrottlingException)')),
      },
      license: { getLicense: () => Promise.reject(new Error('license secret could not be read')) },
    };
    await withProxy({ overrides: failing }, async (proxy) => {
      for (const path of ['/_/metrics', '/_/license']) {
        const answer = await fetched(proxy, 'GET', path, undefined, KEY);
        expect(answer.status).toBe(500);
        expect(JSON.parse(answer.body).error.code).toBe(-32603);
        expectDocumented('GET', path, answer);
      }
    });
  });

  it("the gateway's own answers: 408, 413, 431, and 500 for a function that ran out of time", async () => {
    await withProxy({ server: { requestReceiveTimeoutMs: 1_000 } }, async (proxy) => {
      const pad = (size: number) => `X-Pad: ${'p'.repeat(size)}\r\n`;
      for (const [method, path] of [
        ['GET', '/_/about'],
        ['POST', '/v2/erp/execute'],
      ] as const) {
        const line = `${method} ${path} HTTP/1.1\r\nHost: proxy\r\n`;
        expectDocumented(method, path, await raw(proxy, `${line}Content-Length: 10\r\n\r\n{`)); // 408
        expectDocumented(method, path, await raw(proxy, `${line}Content-Length: 7000000\r\n\r\n`)); // 413
        expectDocumented(method, path, await raw(proxy, `${line}${pad(MAX_REQUEST_HEADER_BYTES)}\r\n`)); // 431
      }
    });
    // A function that never answers (its key source hangs), stopped at the emulated timeout.
    const hanging = { keys: { getKeys: () => new Promise<never>(() => undefined) } };
    await withProxy(
      { overrides: hanging, server: { functionTimeoutMs: 200, onCrash: () => undefined } },
      async (proxy) => {
        const answer = await fetched(proxy, 'POST', '/api/erp/execute', v1(), KEY);
        expect(answer.status).toBe(500);
        expect(JSON.parse(answer.body)).toEqual({ message: 'Internal Server Error' });
        expectDocumented('POST', '/api/erp/execute', answer);
      },
    );
  });
});
