/**
 * @module erp-double/doc-bearer
 * Odoo 19's method documentation over bearer keys: `/doc-bearer/<model>.json` and
 * `/doc-bearer/index.json` (`addons/api_doc/controllers/api_doc.py`; captures `doc-bearer-*`).
 * Both are `type='json2', auth='bearer'` routes with no method restriction: the JSON-2 content
 * type, key and body checks, then the "Technical Documentation" group, then the document with an
 * HMAC ETag (not per model) that `If-None-Match` revalidates into a 304.
 */
import { createHash, createHmac } from 'node:crypto';
import { indexDocument, modelDocument } from './api-doc.ts';
import type { Database, Row } from './database.ts';
import { accessError, toOdooError, werkzeugError } from './errors.ts';
import { json2BearerUser, json2ErrorResponse, json2MediaTypeRefusal, json2Params } from './json2.ts';
import type { ModelDef } from './models.ts';
import { checkModelAccess } from './orm.ts';
import { pyJsonDumps, pyRepr, utcNow } from './py.ts';
import {
  type DoubleResponse,
  jsonResponse,
  NOSNIFF_HEADER,
  notModified,
  rawResponse,
  werkzeugNotFound,
} from './responses.ts';
import type { DoubleState } from './state.ts';
import type { ErpMode, ErpUser } from './types.ts';

/** The parts of the HTTP request the documentation routes look at. */
export interface DocBearerRequest {
  method: string;
  path: string;
  contentType: string | undefined;
  authorization: string | undefined;
  ifNoneMatch: string | undefined;
  ifMatch: string | undefined;
  ifModifiedSince: string | undefined;
  cacheControl: string | undefined;
  body: string;
}

const INDEX_PATH = '/doc-bearer/index.json';
/** werkzeug's `<model_name>` converter takes anything but a slash, then the literal `.json`. */
const MODEL_ROUTE = /^\/doc-bearer\/([^/]+)\.json$/;

/** `get_sequences()[0]` of the registry: it only changes when modules are installed (never, here). */
const REGISTRY_SEQUENCE = 2;
/** The users' language, the only one the double knows (`Content-Language` is its JS form). */
const LANG = 'en_US';
const CONTENT_LANGUAGE = 'en-US';
const JSON_MIMETYPE = 'application/json; charset=utf-8';

/**
 * `all_group_ids` of the double's users: a limited user has base.group_user only; an admin also
 * has base.group_system, which implies api_doc.group_allow_doc ("Technical Documentation").
 */
const LIMITED_GROUP_IDS: readonly number[] = [1];
const ADMIN_GROUP_IDS: readonly number[] = [1, 2, 3, 4];

/** werkzeug's generic `NotFound()` description (capture doc-bearer-unknown-model-404). */
const NOT_FOUND_TEXT =
  'The requested URL was not found on the server. If you entered the URL manually please check your spelling and try again.';

function groupIds(user: ErpUser): readonly number[] {
  return user.limited === true ? LIMITED_GROUP_IDS : ADMIN_GROUP_IDS;
}

/** The group check both routes make before anything else (so it wins over an unreadable model). */
function requireDocGroup(user: ErpUser): void {
  if (user.limited === true) {
    throw accessError('This page is only accessible to Technical Documentation users.');
  }
}

/**
 * `odoo.tools.hmac(env, scope, message)`: HMAC-SHA256 under the `database.secret` parameter of
 * `repr((scope, message))`, the message being (registry sequence, lang, sorted group ids). The
 * scope is the route pattern, not the model: one ETag is valid for every model document.
 */
function docEtag(db: Database, user: ErpUser, scope: string): string {
  const secret = db.rows('ir.config_parameter').find((row) => row.key === 'database.secret')?.value;
  const groups = groupIds(user);
  const message = `(${pyRepr(scope)}, (${REGISTRY_SEQUENCE}, ${pyRepr(LANG)}, ${pyRepr([...groups])}))`;
  return createHmac('sha256', String(secret ?? ''))
    .update(message)
    .digest('hex');
}

/** werkzeug's `ETags` as `parse_etags` builds it from an `If-None-Match` / `If-Match` value. */
interface ETags {
  star: boolean;
  strong: string[];
  weak: string[];
}

/** werkzeug `parse_etags`: quoted, unquoted, `W/` weak and `*` forms, comma separated. */
function parseEtags(value: string | undefined): ETags {
  const etags: ETags = { star: false, strong: [], weak: [] };
  if (!value) return etags;
  const pattern = /([Ww]\/)?(?:"(.*?)"|(.*?))(?:\s*,\s*|$)/y;
  while (pattern.lastIndex < value.length) {
    const start = pattern.lastIndex;
    const match = pattern.exec(value);
    if (!match || pattern.lastIndex === start) break;
    const [, weak, quoted, raw] = match;
    if (raw === '*') return { star: true, strong: [], weak: [] };
    (weak ? etags.weak : etags.strong).push(quoted ?? raw ?? '');
  }
  return etags;
}

function unquoteEtag(etag: string): string {
  const bare = etag.startsWith('W/') ? etag.slice(2) : etag;
  return bare.length >= 2 && bare.startsWith('"') && bare.endsWith('"') ? bare.slice(1, -1) : bare;
}

/**
 * werkzeug 2.2 `is_resource_modified(environ, etag, last_modified=...)` without ranges:
 * `If-Modified-Since`, then `If-None-Match` (weak comparison, RFC 7232 3.2), then `If-Match`.
 * It looks at the headers only, whatever the method.
 */
function isResourceModified(request: DocBearerRequest, etag: string, lastModified?: number): boolean {
  let unmodified = false;
  const since = request.ifModifiedSince === undefined ? Number.NaN : Date.parse(request.ifModifiedSince);
  if (lastModified !== undefined && !Number.isNaN(since) && lastModified <= since) unmodified = true;
  const bare = unquoteEtag(etag);
  const noneMatch = parseEtags(request.ifNoneMatch);
  if (noneMatch.star || noneMatch.strong.length > 0 || noneMatch.weak.length > 0) {
    unmodified = noneMatch.star || noneMatch.strong.includes(bare) || noneMatch.weak.includes(bare);
  }
  // As werkzeug does: `unmodified = not if_match.is_strong(etag)` (is_strong ignores `*`).
  const match = parseEtags(request.ifMatch);
  if (match.star || match.strong.length > 0 || match.weak.length > 0)
    unmodified = !match.strong.includes(bare);
  return !unmodified;
}

/** `parse_cache_control_header(...).no_cache`: the client asks for a fresh document. */
function wantsNoCache(request: DocBearerRequest): boolean {
  return (request.cacheControl ?? '')
    .split(',')
    .some((directive) => directive.split('=')[0]?.trim().toLowerCase() === 'no-cache');
}

/** Routes one `/doc-bearer/...` request once a database is selected (the caller answers the no-db 404). */
export function handleDocBearer(state: DoubleState, db: Database, request: DocBearerRequest): DoubleResponse {
  const isIndex = request.path === INDEX_PATH;
  const match = isIndex ? null : MODEL_ROUTE.exec(request.path);
  if (!isIndex && !match) return werkzeugNotFound(state.mode);
  // Same order as /json/2: content type (415), bearer key (401), body (400). The body's values are
  // then dropped: the endpoints take no parameter but the path's (Odoo's route_wrapper ignores extras).
  const refusal = json2MediaTypeRefusal(
    state.mode,
    request,
    isIndex ? INDEX_PATH : '/doc-bearer/<model_name>.json',
  );
  if (refusal) return refusal;
  const auth = json2BearerUser(state, db, request.authorization);
  if ('response' in auth) return auth.response;
  const body = json2Params(request.body);
  if ('response' in body) return body.response;

  try {
    requireDocGroup(auth.user);
    if (isIndex) return indexResponse(db, auth.user, request, state.mode);
    let model: string;
    try {
      model = decodeURIComponent(match?.[1] ?? '');
    } catch {
      model = match?.[1] ?? '';
    }
    return modelResponse(db, auth.user, model, request, state.mode);
  } catch (thrown) {
    return json2ErrorResponse(toOdooError(thrown));
  }
}

/** `doc_model(model_name)`: model check (404), read access (403), ETag, then the document. */
function modelResponse(
  db: Database,
  user: ErpUser,
  model: string,
  request: DocBearerRequest,
  mode: ErpMode,
): DoubleResponse {
  const def = db.model(model);
  if (!def) throw werkzeugError('NotFound', 404, NOT_FOUND_TEXT);
  checkModelAccess(user.limited === true, def, 'read');
  const etag = docEtag(db, user, '/doc/<model_name>.json');
  // The document is rebuilt on every call; a request's own `Cache-Control: no-cache` turns the 304 off.
  if (!wantsNoCache(request) && !isResourceModified(request, etag)) return notModified();
  return jsonResponse(200, modelDocument(def, mode), {
    ETag: etag,
    'Cache-Control': 'no-cache, private',
    'Content-Language': CONTENT_LANGUAGE,
  });
}

function httpDate(odooDatetime: unknown): string {
  const parsed = Date.parse(`${String(odooDatetime).replace(' ', 'T')}Z`);
  return new Date(Number.isNaN(parsed) ? Date.now() : parsed).toUTCString();
}

/**
 * `doc_index()`: with `Cache-Control: no-cache` a fresh document; otherwise the ETag check, then
 * the document kept in an ir.attachment named after the ETag (created by the first call, so that
 * call writes to the database) and streamed with the attachment's headers (quoted ETag,
 * Last-Modified, inline Content-Disposition, CSP), where `If-Modified-Since` counts too.
 */
function indexResponse(
  db: Database,
  user: ErpUser,
  request: DocBearerRequest,
  mode: ErpMode,
): DoubleResponse {
  const canRead = (def: ModelDef): boolean => {
    try {
      checkModelAccess(user.limited === true, def, 'read');
      return true;
    } catch {
      return false;
    }
  };
  if (wantsNoCache(request)) {
    return jsonResponse(200, indexDocument(canRead, mode), {
      'Cache-Control': 'no-store',
      'Content-Disposition': "attachment; filename*=UTF-8''odoo-doc-index.json",
      'Content-Language': CONTENT_LANGUAGE,
    });
  }
  const etag = docEtag(db, user, '/doc/index.json');
  if (!isResourceModified(request, etag)) return notModified();

  const filename = `odoo-doc-index-${REGISTRY_SEQUENCE}-${etag}.json`;
  const attachment =
    db.rows('ir.attachment').find((row) => row.name === filename) ??
    createIndex(db, filename, groupIds(user), canRead, mode);
  const lastModified = httpDate(attachment.write_date);
  const quoted = `"${etag}"`;
  // Stream.get_response -> send_file(conditional=True): make_conditional, for GET and HEAD only.
  if (
    (request.method === 'GET' || request.method === 'HEAD') &&
    !isResourceModified(request, quoted, Date.parse(lastModified))
  ) {
    return notModified();
  }
  const content = Buffer.from(String(attachment.datas), 'base64').toString('utf8');
  return rawResponse(200, JSON_MIMETYPE, content, {
    'Content-Disposition': `inline; filename=${filename}`,
    'Last-Modified': lastModified,
    'Cache-Control': 'no-cache, private',
    ETag: quoted,
    ...NOSNIFF_HEADER,
    'Content-Security-Policy': "default-src 'none'",
    'Content-Language': CONTENT_LANGUAGE,
  });
}

/** The index attachment (`ir.attachment` created with sudo, `json.dumps(..., ensure_ascii=False)`). */
function createIndex(
  db: Database,
  filename: string,
  groups: readonly number[],
  canRead: (def: ModelDef) => boolean,
  mode: ErpMode,
): Row {
  const raw = Buffer.from(pyJsonDumps(indexDocument(canRead, mode)), 'utf8');
  const now = utcNow();
  const id = db.insert('ir.attachment', {
    name: filename,
    description:
      'Generated /doc/index.json document.\n\n' +
      `Sequence: ${REGISTRY_SEQUENCE}\nLang: ${LANG}\nGroups: ${pyRepr([...groups])}`,
    datas: raw.toString('base64'),
    mimetype: JSON_MIMETYPE,
    file_size: raw.length,
    checksum: createHash('sha1').update(raw).digest('hex'),
    res_model: false,
    res_id: 0,
    create_date: now,
    write_date: now,
  });
  const row = db.row('ir.attachment', id);
  if (!row) throw new Error('erp-double: the index attachment vanished');
  return row;
}
