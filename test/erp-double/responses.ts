/**
 * @module erp-double/responses
 * HTTP responses of the double: JSON (Python-style separators) and Odoo/werkzeug HTML pages.
 */
import { pyJsonDumps } from './py.ts';
import type { ErpMode } from './types.ts';
import { platformOf } from './versions.ts';

/** A complete response, written at once. */
export interface DoubleResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const SERVER_HEADER = 'Werkzeug/2.2.2 Python/3.11.2';
const HTML = 'text/html; charset=utf-8';

/**
 * Odoo 19 adds `X-Content-Type-Options: nosniff` to the answers of its `Response` class (JSON-RPC
 * and JSON-2 results, `/web/version`, redirects, werkzeug 400 pages of the JSON-RPC dispatcher),
 * but not to JSON-RPC errors nor to error statuses of JSON-2 (captures).
 */
export const NOSNIFF_HEADER: Readonly<Record<string, string>> = { 'X-Content-Type-Options': 'nosniff' };

/** `make_json_response(value)`: `application/json; charset=utf-8`. */
export function jsonResponse(
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
  options: { readonly nosniff?: boolean } = {},
): DoubleResponse {
  const extra: Record<string, string> = (options.nosniff ?? status === 200) ? { ...NOSNIFF_HEADER } : {};
  return {
    status,
    headers: {
      Server: SERVER_HEADER,
      ...headers,
      'Content-Type': 'application/json; charset=utf-8',
      ...extra,
    },
    body: pyJsonDumps(value),
  };
}

/** A werkzeug `Response(text)` with the default text/html mimetype. */
export function htmlResponse(
  status: number,
  body: string,
  headers: Record<string, string> = {},
): DoubleResponse {
  return { status, headers: { Server: SERVER_HEADER, ...headers, 'Content-Type': HTML }, body };
}

/** `odoo.http.NOT_FOUND_NODB`: no database could be selected (Odoo 19's `odoo/http.py`). */
export const NOT_FOUND_NODB =
  '<!DOCTYPE html>\n<title>404 Not Found</title>\n<h1>Not Found</h1>\n' +
  '<p>No database is selected and the requested URL was not found in the server-wide controllers.</p>\n' +
  '<p>Please verify the hostname, <a href=/web/login>login</a> and try again.</p>\n\n' +
  '<!-- Alternatively, use the X-Odoo-Database header. -->\n';

/**
 * werkzeug's `HTTPException.get_body()` for `mode`: 2.x's `<!doctype html>` page, or 1.0's
 * `<!DOCTYPE HTML PUBLIC ...>` one (capture o16-web-version-get). `description` is HTML already.
 */
function werkzeugPage(mode: ErpMode, status: number, title: string, description: string): string {
  const head = platformOf(mode).werkzeug1
    ? '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN">\n'
    : '<!doctype html>\n<html lang=en>\n';
  return `${head}<title>${status} ${title}</title>\n<h1>${title}</h1>\n<p>${description}</p>\n`;
}

/** werkzeug's `escape()`: 2.x (markupsafe) escapes `"` and `'` as `&#34;` and `&#39;`; 1.0 only `"`, as `&quot;`. */
function escapeHtml(mode: ErpMode, text: string): string {
  const escaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return platformOf(mode).werkzeug1
    ? escaped.replace(/"/g, '&quot;')
    : escaped.replace(/"/g, '&#34;').replace(/'/g, '&#39;');
}

/** werkzeug's default 404 page. */
export function werkzeugNotFound(mode: ErpMode): DoubleResponse {
  return htmlResponse(
    404,
    werkzeugPage(
      mode,
      404,
      'Not Found',
      'The requested URL was not found on the server. If you entered the URL manually please check your spelling and try again.',
    ),
  );
}

/** The 404 for a path without a route: the no-db page when no database is selected (19+). */
export function notFoundPage(mode: ErpMode, noDatabase: boolean): DoubleResponse {
  return noDatabase ? htmlResponse(404, NOT_FOUND_NODB) : werkzeugNotFound(mode);
}

function inferredTypeText(
  mode: ErpMode,
  inferred: readonly string[],
  rule: string,
  routeType: string,
): string {
  const list = `[${inferred.map((type) => `'${type}'`).join(', ')}]`;
  return escapeHtml(
    mode,
    `Request inferred type is compatible with ${list} but '${rule}' is type='${routeType}'.`,
  );
}

/** 19+: `UnsupportedMediaType` (415) for a request whose content type does not fit the route type. */
export function unsupportedMediaType(
  mode: ErpMode,
  inferred: readonly string[],
  rule: string,
  routeType: string,
  accept: string,
): DoubleResponse {
  const description = `${inferredTypeText(mode, inferred, rule, routeType)}<br><br>Please verify the Content-Type request header and try again.`;
  return htmlResponse(415, werkzeugPage(mode, 415, 'Unsupported Media Type', description), {
    Accept: accept,
  });
}

/**
 * 16-18: `BadRequest` (400) for a request whose content type does not fit the route type: the
 * bare sentence of `_set_request_dispatcher`, without 19's advice (captures o18-, o17-, o16-v1-wrong-content-type).
 */
export function badRequestWrongType(
  mode: ErpMode,
  inferred: readonly string[],
  rule: string,
  routeType: string,
): DoubleResponse {
  return htmlResponse(
    400,
    werkzeugPage(mode, 400, 'Bad Request', inferredTypeText(mode, inferred, rule, routeType)),
  );
}

/** werkzeug's `BadRequest` (400) page saying `description` (plain text, escaped here). */
export function badRequestPage(mode: ErpMode, description: string): DoubleResponse {
  return htmlResponse(400, werkzeugPage(mode, 400, 'Bad Request', escapeHtml(mode, description)));
}

/** werkzeug `redirect(location, 303)`. */
export function redirect(location: string): DoubleResponse {
  const page =
    '<!doctype html>\n<html lang=en>\n<title>Redirecting...</title>\n<h1>Redirecting...</h1>\n' +
    `<p>You should be redirected automatically to the target URL: <a href="${location}">${location}</a>. If not, click the link.\n`;
  return htmlResponse(303, page, { Location: location, ...NOSNIFF_HEADER });
}

/**
 * `make_response('', status=304)`: werkzeug strips the entity headers of a 304 (no Content-Type,
 * no Content-Length), Odoo's `Response` still adds nosniff (captures doc-bearer-*-304).
 */
export function notModified(): DoubleResponse {
  return { status: 304, headers: { Server: SERVER_HEADER, ...NOSNIFF_HEADER }, body: '' };
}

/** A body that is already serialized, e.g. an attachment streamed as stored. */
export function rawResponse(
  status: number,
  contentType: string,
  body: string,
  headers: Record<string, string> = {},
): DoubleResponse {
  return { status, headers: { Server: SERVER_HEADER, ...headers, 'Content-Type': contentType }, body };
}
