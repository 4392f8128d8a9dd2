/**
 * @module platform/routes
 * The one route table of the service. The CDK stack builds its API Gateway routes from it and
 * the local server dispatches with it, so the two cannot drift apart.
 */

import type { FunctionName } from './names.ts';

// Re-exported for the modules that take it together with the route table (the local server).
export type { FunctionName };

/** How a route is authenticated. `aux-configurable` routes are public when listed in `AUX_PUBLIC`. */
export type RouteAuth = 'api-key' | 'public' | 'aux-configurable';

export interface Route {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly fn: FunctionName;
  readonly auth: RouteAuth;
  /**
   * Short description: the route's `summary` in `GET /_/about` and in `docs/openapi.json` (written
   * once, here; `bin/openapi.ts` adds the longer description).
   */
  readonly summary: string;
  /**
   * Other methods on the same path that reach the same function, which answers them 405 Method
   * Not Allowed (`Allow` names `method`). Without them, API Gateway would answer 404: MCP clients
   * send `GET /mcp` (to open a server-sent event stream, which this proxy does not offer) and may
   * send `DELETE /mcp` (to end a session, which a stateless server has not), and the MCP
   * specification asks for 405 to both.
   */
  readonly refusedMethods?: readonly ('GET' | 'DELETE')[];
}

export const ROUTES: readonly Route[] = Object.freeze([
  {
    method: 'POST',
    path: '/api/erp/execute',
    fn: 'execute-v1',
    auth: 'api-key',
    summary: 'v1 execute (execute_kw over /jsonrpc)',
  },
  {
    method: 'POST',
    path: '/v1/erp/execute',
    fn: 'execute-v1',
    auth: 'api-key',
    summary: 'v1 execute (alias of /api/erp/execute)',
  },
  {
    method: 'POST',
    path: '/api/erp/version',
    fn: 'version',
    auth: 'api-key',
    summary: 'ERP version of a target',
  },
  {
    method: 'POST',
    path: '/v1/erp/version',
    fn: 'version',
    auth: 'api-key',
    summary: 'ERP version of a target (alias of /api/erp/version)',
  },
  {
    method: 'POST',
    path: '/v2/erp/execute',
    fn: 'execute-v2',
    auth: 'api-key',
    summary: 'v2 execute (JSON-2, ERP 19+)',
  },
  {
    method: 'POST',
    path: '/v2/erp/version',
    fn: 'version',
    auth: 'api-key',
    summary: 'ERP version of a target (same as v1)',
  },
  { method: 'GET', path: '/_/license', fn: 'aux', auth: 'aux-configurable', summary: 'License status' },
  { method: 'GET', path: '/_/about', fn: 'aux', auth: 'public', summary: 'Service description' },
  { method: 'GET', path: '/_/metrics', fn: 'aux', auth: 'aux-configurable', summary: 'Prometheus metrics' },
  {
    method: 'GET',
    path: '/_/audit',
    fn: 'aux',
    auth: 'api-key',
    summary: 'Audit records of the calls that can write (a key whose policy lists audit)',
  },
  {
    method: 'GET',
    path: '/_/brakes',
    fn: 'aux',
    auth: 'api-key',
    summary: "The operators' brakes in force (a key whose policy lists brakes)",
  },
  {
    method: 'POST',
    path: '/_/brakes',
    fn: 'aux',
    auth: 'api-key',
    summary: 'Set a brake: stop writes or every call, of every caller, a key, an identity or an ERP',
  },
  {
    method: 'POST',
    path: '/_/brakes/release',
    fn: 'aux',
    auth: 'api-key',
    summary: 'Release a brake',
  },
  {
    method: 'POST',
    path: '/mcp',
    fn: 'mcp',
    auth: 'api-key',
    summary: 'MCP endpoint for agents (Streamable HTTP, stateless, JSON responses)',
    refusedMethods: ['GET', 'DELETE'],
  },
  // OAuth protected resource metadata of /mcp (RFC 9728; README, "Remote agents with OAuth"): the
  // path form for the resource /mcp, and the root form clients try next. 404 while OAuth is off.
  {
    method: 'GET',
    path: '/.well-known/oauth-protected-resource/mcp',
    fn: 'mcp',
    auth: 'public',
    summary: 'OAuth protected resource metadata of /mcp (when OAuth is on)',
  },
  {
    method: 'GET',
    path: '/.well-known/oauth-protected-resource',
    fn: 'mcp',
    auth: 'public',
    summary: 'OAuth protected resource metadata (root form)',
  },
] satisfies Route[]);

/** API Gateway route key, e.g. `POST /v2/erp/execute`. */
export function routeKey(route: { readonly method: string; readonly path: string }): string {
  return `${route.method} ${route.path}`;
}

/** Finds the route for a method and path, or `undefined` (API Gateway then answers 404). */
export function findRoute(method: string, path: string): Route | undefined {
  return ROUTES.find((r) => r.method === method && r.path === path);
}

/** Every API Gateway route key of a route: its own, then one per refused method. */
export function routeKeys(route: Route): string[] {
  return [
    routeKey(route),
    ...(route.refusedMethods ?? []).map((method) => routeKey({ method, path: route.path })),
  ];
}

/**
 * The route API Gateway sends a request to, with the route key it puts in the event: the route of
 * that method and path, or the route that refuses that method on that path (its function answers
 * 405); `undefined` when there is none (404).
 */
export function matchRoute(method: string, path: string): { route: Route; key: string } | undefined {
  const route = findRoute(method, path);
  if (route) return { route, key: routeKey(route) };
  const refusing = ROUTES.find(
    (r) => r.path === path && (r.refusedMethods as readonly string[] | undefined)?.includes(method),
  );
  return refusing ? { route: refusing, key: `${method} ${path}` } : undefined;
}

/** Source file (relative to the project root) of each function's handler module. */
export const HANDLER_ENTRIES: Readonly<Record<FunctionName, string>> = Object.freeze({
  'execute-v1': 'lambdas/handlers/execute-v1.ts',
  'execute-v2': 'lambdas/handlers/execute-v2.ts',
  version: 'lambdas/handlers/version.ts',
  aux: 'lambdas/handlers/operator.ts',
  mcp: 'lambdas/handlers/mcp.ts',
});
