/**
 * `erp_instance.url` pointing at something that is not an ERP (another internal service, an API
 * Gateway base URL, a portal): over real HTTP, v1 (every `ERP_V1_TRANSPORT`), v2 (both
 * `ERP_V2_TRANSPORT` values) and the three version endpoints answer -32005 naming the status and
 * the content type, never an ERP error, and remember nothing: once the same URL answers like an
 * ERP (the front forwards to the double), calls go the right way at once.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { type ErpFront, type FrontAction, startErpFront } from '../support/erp-front.ts';
import { type Envelope, searchCountBody, useErpDouble, useProxy } from '../support/fixtures.ts';
import type { ProxyHarness } from '../support/proxy-harness.ts';

/** `res.partner` search_count([]) on the double's erp_a. */
const PARTNERS = 18;

/** A wrong target: what it answers to every request, and the content type a message names. */
interface WrongTarget {
  readonly status: number;
  readonly type: string;
  readonly body: string;
  /** v2 reads a 200 as JSON-2's bare result, and a 404 that is not a JSON object as -32006. */
  readonly v2: 'not_erp' | 'result' | 'json2_unavailable';
}

const WRONG_TARGETS: ReadonlyArray<readonly [string, WrongTarget]> = [
  [
    'another service: JSON 404 to everything',
    { status: 404, type: 'application/json', body: '{"message":"Not Found"}', v2: 'not_erp' },
  ],
  [
    "a gateway's JSON 401",
    { status: 401, type: 'application/json', body: '{"message":"Unauthorized"}', v2: 'not_erp' },
  ],
  [
    "a gateway's JSON 403",
    {
      status: 403,
      type: 'application/json',
      body: '{"message":"Missing Authentication Token"}',
      v2: 'not_erp',
    },
  ],
  ['a bare JSON 500', { status: 500, type: 'application/json', body: '{"error":"boom"}', v2: 'not_erp' }],
  [
    'a JSON 500 with an object that names no exception',
    { status: 500, type: 'application/json', body: '{"name":42,"message":"boom"}', v2: 'not_erp' },
  ],
  [
    'a JSON 200 that is not JSON-RPC',
    { status: 200, type: 'application/json', body: '{"status":"ok"}', v2: 'result' },
  ],
  [
    'a JSON-RPC 2.0 server that is not Odoo',
    {
      status: 200,
      type: 'application/json',
      body: '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}',
      v2: 'result',
    },
  ],
  [
    'an HTML 200 page (a portal)',
    { status: 200, type: 'text/html', body: '<!doctype html><title>Company portal</title>', v2: 'not_erp' },
  ],
  [
    'an HTML 404 page',
    {
      status: 404,
      type: 'text/html',
      body: '<html><title>404 Not Found</title></html>',
      v2: 'json2_unavailable',
    },
  ],
  [
    'an HTML 500 page',
    { status: 500, type: 'text/html', body: '<html><title>Server Error</title></html>', v2: 'not_erp' },
  ],
  ['a plain-text 400', { status: 400, type: 'text/plain', body: 'bad request', v2: 'not_erp' }],
];

function answering(target: WrongTarget): (call: unknown) => FrontAction {
  return () => ({ status: target.status, headers: { 'content-type': target.type }, body: target.body });
}

const v1Body = (url: string) => searchCountBody('v1', url, 'wrong-v1');
const v2Body = (url: string) => searchCountBody('v2', url, 'wrong-v2');

async function call(
  proxy: ProxyHarness,
  path: string,
  body: Record<string, unknown>,
): Promise<{ status: number; envelope: Envelope }> {
  const answer = await proxy.post(path, body);
  return { status: answer.status, envelope: answer.json as Envelope };
}

function expectNotErp(answer: { status: number; envelope: Envelope }, target: WrongTarget): void {
  expect(answer.status).toBe(502);
  expect(answer.envelope.result).toBeNull();
  expect(answer.envelope.error?.code).toBe(-32005);
  expect(answer.envelope.error?.message).toContain(`HTTP ${target.status} ${target.type}`);
  expect(answer.envelope.error?.message).toContain('erp_instance.url');
}

const double = useErpDouble({ mode: '19' });
const proxies = {
  auto: useProxy({ env: { ERP_V1_TRANSPORT: 'auto', ERP_V2_TRANSPORT: 'auto' } }),
  json2: useProxy({ env: { ERP_V1_TRANSPORT: 'json2', ERP_V2_TRANSPORT: 'json2' } }),
  jsonrpc: useProxy({ env: { ERP_V1_TRANSPORT: 'jsonrpc' } }),
} as const;

let front: ErpFront;
beforeEach(async () => {
  double.reset();
  front = await startErpFront(double.url);
  return () => front.close();
});

describe.each(WRONG_TARGETS)('a wrong target: %s', (_label, target) => {
  it.each(['auto', 'json2', 'jsonrpc'] as const)('v1 with ERP_V1_TRANSPORT=%s: -32005', async (transport) => {
    front.plan = answering(target);
    expectNotErp(await call(proxies[transport], '/api/erp/execute', v1Body(front.url)), target);
    // Nothing ran over JSON-2 on the strength of a non-ERP answer.
    expect(front.calls.filter((c) => c.path.startsWith('/json/2/'))).toEqual([]);
  });

  it.each(['json2', 'auto'] as const)('v2 with ERP_V2_TRANSPORT=%s', async (transport) => {
    front.plan = answering(target);
    const answer = await call(proxies[transport], '/v2/erp/execute', v2Body(front.url));
    if (target.v2 === 'not_erp') expectNotErp(answer, target);
    else if (target.v2 === 'json2_unavailable') expect(answer.envelope.error?.code).toBe(-32006);
    // JSON-2 has no envelope: a 200 is the result, whatever JSON it holds (README, -32005).
    else expect(answer.status).toBe(200);
    // Never an ERP error made of a non-ERP answer.
    if (answer.envelope.error) expect(answer.envelope.error.code).toBeLessThan(0);
  });

  it.each(['/api/erp/version', '/v1/erp/version', '/v2/erp/version'])('%s: -32005', async (path) => {
    front.plan = answering(target);
    expectNotErp(await call(proxies.auto, path, { id: 'wrong-version', url: front.url }), target);
  });
});

describe('nothing is remembered from a wrong answer', () => {
  const jsonNotFound = WRONG_TARGETS[0]?.[1] as WrongTarget;

  it('v1 auto: a JSON 404 moves nothing to JSON-2; once the URL answers like an ERP, the call goes over /jsonrpc', async () => {
    front.plan = answering(jsonNotFound);
    expectNotErp(await call(proxies.auto, '/api/erp/execute', v1Body(front.url)), jsonNotFound);
    front.plan = () => 'forward';
    front.calls.length = 0;
    const answer = await call(proxies.auto, '/api/erp/execute', v1Body(front.url));
    expect(answer.envelope.error).toBeNull();
    expect(answer.envelope.result).toBe(PARTNERS);
    expect(front.executeCalls().map((c) => c.path)).toEqual(['/jsonrpc']);
    expect(front.calls.some((c) => c.path.startsWith('/json/2/'))).toBe(false);
  });

  it('version: a wrong answer is not cached; the ERP version comes once the URL answers like one', async () => {
    front.plan = answering(jsonNotFound);
    expectNotErp(await call(proxies.auto, '/v2/erp/version', { id: 'v', url: front.url }), jsonNotFound);
    front.plan = () => 'forward';
    const answer = await call(proxies.auto, '/v2/erp/version', { id: 'v', url: front.url });
    expect(answer.envelope.result).toEqual({ version_info: [19, 0, 0, 'final', 0, ''], version: '19.0' });
  });

  it.each(['json2', 'auto'] as const)(
    'v2 %s: after a JSON 404, the same URL answering like an ERP serves the call over JSON-2',
    async (transport) => {
      front.plan = answering(jsonNotFound);
      expectNotErp(await call(proxies[transport], '/v2/erp/execute', v2Body(front.url)), jsonNotFound);
      front.plan = () => 'forward';
      front.calls.length = 0;
      const answer = await call(proxies[transport], '/v2/erp/execute', v2Body(front.url));
      expect(answer.envelope.result).toBe(PARTNERS);
      expect(front.executeCalls().map((c) => c.path)).toEqual(['/json/2/res.partner/search_count']);
    },
  );
});

describe('an ERP 21 without /jsonrpc (v1, ERP_V1_TRANSPORT=auto)', () => {
  const erp21 = useErpDouble({ mode: '21', jsonRpc: false });

  it('asks the version after the 404, serves the call over JSON-2, and goes straight there next time', async () => {
    const first = await call(proxies.auto, '/api/erp/execute', v1Body(erp21.url));
    expect(first.envelope.result).toBe(PARTNERS);
    expect(erp21.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /jsonrpc',
      'GET /web/version',
      'POST /json/2/res.partner/search_count',
    ]);
    erp21.requests.length = 0;
    const second = await call(proxies.auto, '/api/erp/execute', v1Body(erp21.url));
    expect(second.envelope.result).toBe(PARTNERS);
    expect(erp21.requests.map((r) => r.path)).toEqual(['/json/2/res.partner/search_count']);
  });
});
