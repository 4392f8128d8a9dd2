/**
 * What the benchmarks send: API Gateway payload 2.0 events shaped like the local server's
 * `buildEvent` output, Lambda-like contexts, and the small request bodies of each API.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { Brake, BrakeMode, BrakeScope } from '../lambdas/platform/brakes/brakes.ts';
import { DOUBLE_USERS } from '../test/erp-double/index.ts';

/** The proxy key every benchmark configures (a benchmark value, not a secret). */
export const BENCH_PROXY_KEY = 'bench-proxy-key-0123456789abcdef';

/** The ERP double's administrator of `erp_a` (valid key, full rights). */
export const ADMIN = DOUBLE_USERS.find((u) => u.db === 'erp_a' && u.uid === 2 && !u.expired && !u.limited)!;

export type CallKind = 'v1' | 'v2' | 'version';

/** Route path and handler of each call kind. */
export const ROUTE_OF: Readonly<
  Record<CallKind, { path: string; fn: 'execute-v1' | 'execute-v2' | 'version' }>
> = {
  v1: { path: '/api/erp/execute', fn: 'execute-v1' },
  v2: { path: '/v2/erp/execute', fn: 'execute-v2' },
  version: { path: '/v2/erp/version', fn: 'version' },
};

/** The small call of each API: `search_count` on `res.partner`, or the target's version. */
export function smallBody(kind: CallKind, url: string): Record<string, unknown> {
  switch (kind) {
    case 'v1':
      return {
        id: 'bench-v1',
        action: 'search_count',
        model_id: 'res.partner',
        params: [[]],
        erp_instance: { url, db: 'erp_a', user_id: ADMIN.uid, api_key: ADMIN.apiKey },
      };
    case 'v2':
      return {
        id: 'bench-v2',
        model_id: 'res.partner',
        method: 'search_count',
        kwargs: { domain: [] },
        erp_instance: { url, db: 'erp_a', api_key: ADMIN.apiKey },
      };
    case 'version':
      return { id: 'bench-version', url };
  }
}

/** A `search_read` of partners (the large-answer case). */
export function searchReadBody(kind: 'v1' | 'v2', url: string): Record<string, unknown> {
  const fields = ['name', 'email', 'phone', 'street', 'city', 'zip', 'country_id', 'active', 'write_date'];
  return kind === 'v1'
    ? {
        id: 'bench-large-v1',
        action: 'search_read',
        model_id: 'res.partner',
        params: [[]],
        keyword: { fields },
        erp_instance: { url, db: 'erp_a', user_id: ADMIN.uid, api_key: ADMIN.apiKey },
      }
    : {
        id: 'bench-large-v2',
        model_id: 'res.partner',
        method: 'search_read',
        kwargs: { domain: [], fields },
        erp_instance: { url, db: 'erp_a', api_key: ADMIN.apiKey },
      };
}

/** `execute_kw search_count` as a client would send it straight to an ERP's `/jsonrpc`. */
export function directJsonRpcBody(): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    method: 'call',
    params: {
      service: 'object',
      method: 'execute_kw',
      args: ['erp_a', ADMIN.uid, ADMIN.apiKey, 'res.partner', 'search_count', [[]], {}],
    },
    id: 1,
  });
}

/**
 * A payload 2.0 event for `POST path` with a JSON body, with the headers a small HTTP client
 * sends (lower-cased, as API Gateway and the local server pass them).
 */
export function postEvent(
  path: string,
  body: string,
  requestId: string,
  extraHeaders: Record<string, string> = {},
): APIGatewayProxyEventV2 {
  const route = `POST ${path}`;
  const now = new Date();
  return {
    version: '2.0',
    routeKey: route,
    rawPath: path,
    rawQueryString: '',
    headers: {
      host: '127.0.0.1:8787',
      'user-agent': 'erp-proxy-bench',
      accept: 'application/json',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'x-api-key': BENCH_PROXY_KEY,
      ...extraHeaders,
    },
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: '127.0.0.1:8787',
      domainPrefix: '127',
      http: {
        method: 'POST',
        path,
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: 'erp-proxy-bench',
      },
      requestId,
      routeKey: route,
      stage: '$default',
      time: '01/Jan/2026:00:00:00 +0000',
      timeEpoch: now.getTime(),
    },
    body,
    isBase64Encoded: false,
  };
}

/**
 * `POST /mcp`: a `tools/call` of `search_count` on `res.partner`, with the connection headers an
 * MCP client's configuration sets (the first call of a new execution environment may be any MCP
 * message; this one also reaches the ERP).
 */
export function mcpToolCallEvent(url: string, requestId: string): APIGatewayProxyEventV2 {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'search_count', arguments: { model: 'res.partner', domain: [] } },
  });
  return postEvent('/mcp', body, requestId, {
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
    'x-erp-url': url,
    'x-erp-db': 'erp_a',
    'x-erp-api-key': ADMIN.apiKey,
  });
}

/**
 * The same `tools/call` from a connector signed in with OAuth: `Authorization: Bearer <token>`, no
 * proxy key and no `x-erp-*` headers (the identity map names the connection).
 */
export function mcpTokenToolCallEvent(url: string, requestId: string, token: string): APIGatewayProxyEventV2 {
  const event = mcpToolCallEvent(url, requestId);
  const {
    'x-api-key': _key,
    'x-erp-url': _url,
    'x-erp-db': _db,
    'x-erp-api-key': _erpKey,
    ...headers
  } = event.headers;
  return { ...event, headers: { ...headers, authorization: `Bearer ${token}` } };
}

/** Whether an answer of the cold-start child is a good one for its function. */
export function isGoodAnswer(fn: string, statusCode: number, body: string): boolean {
  if (statusCode !== 200) return false;
  if (fn === 'aux') return true;
  if (fn === 'mcp') return body.includes('"result"') && !body.includes('"isError":true');
  return body.endsWith('"error":null}');
}

/** An operator's brake as `POST /_/brakes` writes it into the store (bench/brakes-overhead.ts, `--instructions --state-table`). */
export function benchBrake(id: string, scope: BrakeScope, mode: BrakeMode): Brake {
  return { id, scope, mode, reason: 'Benchmark brake.', set_by: 'bench', set_at: new Date().toISOString() };
}
