/**
 * @module upstream/path-hint
 * A target URL with a path that does not answer as an ERP: Odoo 17 and later show
 * `https://erp.example.com/odoo/...` in the browser's address bar, and that address pasted as the
 * ERP's URL makes the ERP answer a redirect or an HTML page. The -32005 that says so then names
 * the address without the path, and only that: a redirect's own advice (use the URL it leads to,
 * a page of the web client) is left out. An ERP served under a path prefix answers as an ERP
 * there, so its calls never reach this (they work as before).
 */

import { echoed } from '../platform/bounded-text.ts';
import { BadUpstreamResponseError } from '../platform/errors.ts';
import { RedirectAnswerError, TooDeepAnswerError } from './erp-transport.ts';

/** The URL's path without its trailing slashes: `''` for an address without a path. */
function pathOf(baseUrl: URL): string {
  return baseUrl.pathname.replace(/\/+$/, '');
}

/** Whether `baseUrl` has a path (`https://erp.example.com/odoo/action-12`; not `https://erp.example.com/`). */
export function hasPath(baseUrl: URL): boolean {
  return pathOf(baseUrl) !== '';
}

/** The sentence added to the message, for a URL whose path is `path` and whose origin is `origin`. */
function hint(path: string, origin: string): string {
  return (
    `The URL has a path (${echoed(path)}); an ERP answers at its address without one, unless it is served under a prefix: ` +
    `try ${echoed(origin)} (Odoo 17 and later show ${echoed(origin)}/odoo/... in the browser's address bar).`
  );
}

/**
 * `error` with the hint when it is a -32005 saying the target at `baseUrl` is not an ERP (a
 * redirect, an HTML page, an answer without an ERP's shape) and `baseUrl` has a path; `error`
 * itself otherwise (and when it has the hint already).
 *
 * @example
 * withPathHint(notAnErp, new URL('https://erp.example.com/odoo/action-12'))
 * // -32005 "... Check erp_instance.url. The URL has a path (/odoo/action-12); ... try https://erp.example.com ..."
 */
export function withPathHint(error: unknown, baseUrl: URL): unknown {
  if (!(error instanceof BadUpstreamResponseError) || error instanceof TooDeepAnswerError) return error;
  const path = pathOf(baseUrl);
  if (path === '' || error instanceof PathHintedError) return error;
  // A redirect's own advice (use the URL it leads to) would contradict the hint: the hint stands alone.
  const answered = error instanceof RedirectAnswerError ? error.answered : error.message;
  return new PathHintedError(`${answered} ${hint(path, baseUrl.origin)}`, {
    headers: { ...error.headers },
    ...(error.data === null ? {} : { data: error.data }),
    cause: error,
  });
}

/** -32005 whose message carries the path hint (so it is given once). */
export class PathHintedError extends BadUpstreamResponseError {}
