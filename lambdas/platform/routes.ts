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
  /** Short description, shown by `/_/about`. */
  readonly summary: string;
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
    summary: 'alias of /api/erp/execute',
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
    summary: 'alias of /api/erp/version',
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
  { method: 'GET', path: '/_/license', fn: 'aux', auth: 'aux-configurable', summary: 'license status' },
  { method: 'GET', path: '/_/about', fn: 'aux', auth: 'public', summary: 'service description' },
  { method: 'GET', path: '/_/metrics', fn: 'aux', auth: 'aux-configurable', summary: 'Prometheus metrics' },
] satisfies Route[]);

/** API Gateway route key, e.g. `POST /v2/erp/execute`. */
export function routeKey(route: Pick<Route, 'method' | 'path'>): string {
  return `${route.method} ${route.path}`;
}

/** Finds the route for a method and path, or `undefined` (API Gateway then answers 404). */
export function findRoute(method: string, path: string): Route | undefined {
  return ROUTES.find((r) => r.method === method && r.path === path);
}

/** Source file (relative to the project root) of each function's handler module. */
export const HANDLER_ENTRIES: Readonly<Record<FunctionName, string>> = Object.freeze({
  'execute-v1': 'lambdas/handlers/execute-v1.ts',
  'execute-v2': 'lambdas/handlers/execute-v2.ts',
  version: 'lambdas/handlers/version.ts',
  aux: 'lambdas/handlers/operator.ts',
});
