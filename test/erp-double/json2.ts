/**
 * @module erp-double/json2
 * JSON-2: `POST /json/2/<model>/<method>` with bearer API keys (Odoo 19+, `addons/rpc/controllers/json2.py`).
 */
import type { Database } from './database.ts';
import { accessError, type OdooError, serializeException, toOdooError, werkzeugError } from './errors.ts';
import { API_PRIVATE_METHODS } from './models.ts';
import { bindNamed, checkContext, type Env, methodOf, normalizeIds } from './orm.ts';
import { isPlainObject, type JsonObject } from './py.ts';
import { type DoubleResponse, jsonResponse, unsupportedMediaType } from './responses.ts';
import { type DoubleState, userByKey } from './state.ts';
import type { ErpMode, ErpUser } from './types.ts';

/** The parts of the HTTP request JSON-2 looks at. */
export interface Json2Request {
  method: string;
  path: string;
  contentType: string | undefined;
  authorization: string | undefined;
  body: string;
}

const MAIN_ROUTE = /^\/json\/2\/([^/]+)\/([^/]+)$/;
const WWW_AUTHENTICATE = { 'WWW-Authenticate': 'Bearer ' };

/** The JSON-2 error answer: the serialized exception as the body, the status of its class. */
export function json2ErrorResponse(error: OdooError): DoubleResponse {
  // JSON-2 always uses the 19 key order: name, message, arguments, context, debug.
  return jsonResponse(error.json2Status, serializeException(error, '19'), error.headers);
}

function notFound(description: string): OdooError {
  return werkzeugError('NotFound', 404, description);
}

function unprocessable(description: string): OdooError {
  return werkzeugError('UnprocessableEntity', 422, description);
}

/** Python's `json.loads` error text for the common case of a body that is not JSON at all. */
function jsonDecodeReason(body: string, error: unknown): string {
  const firstNonSpace = body.search(/\S/);
  if (firstNonSpace >= 0 && !/[[{"\d\-tfn]/.test(body.charAt(firstNonSpace))) {
    const before = body.slice(0, firstNonSpace);
    const line = before.split('\n').length;
    const column = firstNonSpace - before.lastIndexOf('\n');
    return `Expecting value: line ${line} column ${column} (char ${firstNonSpace})`;
  }
  return error instanceof Error ? error.message : 'invalid JSON';
}

/**
 * `Json2Dispatcher.is_compatible_with`: a body must be `application/json`; otherwise the 415 page
 * naming the matched route `rule`. Undefined when the request is acceptable.
 */
export function json2MediaTypeRefusal(
  mode: ErpMode,
  request: Pick<Json2Request, 'contentType' | 'body'>,
  rule: string,
): DoubleResponse | undefined {
  const mimetype = (request.contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (mimetype === 'application/json' || request.body.length === 0) return undefined;
  return unsupportedMediaType(mode, ['http'], rule, 'json2', 'application/json');
}

/** `auth='bearer'`: the key's user on `db`, or the 401 answer (no header, or a wrong/expired/other-db key). */
export function json2BearerUser(
  state: DoubleState,
  db: Database,
  authorization: string | undefined,
): { user: ErpUser } | { response: DoubleResponse } {
  const bearer = /^bearer\s+(.+)$/i.exec(authorization ?? '');
  if (!bearer) {
    const description = 'User not authenticated, use an API Key with a Bearer Authorization header.';
    return {
      response: json2ErrorResponse(werkzeugError('Unauthorized', 401, description, WWW_AUTHENTICATE)),
    };
  }
  const user = userByKey(state, db.name, bearer[1]?.trim() ?? '');
  if (user) return { user };
  return {
    response: json2ErrorResponse(werkzeugError('Unauthorized', 401, 'Invalid apikey', WWW_AUTHENTICATE)),
  };
}

/**
 * `Json2Dispatcher.dispatch`: the body's parameters, `{}` without a body, or the 400 answer.
 * A body that is JSON but not an object is silently ignored (`jsonrequest | args`, `Json2Dispatcher` in Odoo 19's `odoo/http.py`).
 */
export function json2Params(body: string): { params: JsonObject } | { response: DoubleResponse } {
  if (body.length === 0) return { params: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    const description = `could not parse the body as json: ${jsonDecodeReason(body, error)}`;
    return { response: json2ErrorResponse(werkzeugError('BadRequest', 400, description)) };
  }
  return { params: isPlainObject(parsed) ? parsed : {} };
}

/**
 * Handles a `/json/2...` request once a database is selected (the caller answers the no-db 404).
 * Order as in Odoo: route match, content type (415 HTML), bearer auth (401), body (400), then the call.
 */
export function handleJson2(state: DoubleState, db: Database, request: Json2Request): DoubleResponse {
  const match = request.method === 'POST' ? MAIN_ROUTE.exec(request.path) : null;
  const refusal = json2MediaTypeRefusal(
    state.mode,
    request,
    match ? '/json/2/<__model__>/<__method__>' : '/json/2/<path:subpath>',
  );
  if (refusal) return refusal;
  if (!match) return json2ErrorResponse(notFound('Did you mean POST /json/2/<model>/<method>?'));
  const model = decodeURIComponent(match[1] ?? '');
  const method = decodeURIComponent(match[2] ?? '');

  const auth = json2BearerUser(state, db, request.authorization);
  if ('response' in auth) return auth.response;
  const { user } = auth;
  const body = json2Params(request.body);
  if ('response' in body) return body.response;
  const { params } = body;

  try {
    return jsonResponse(
      200,
      call(state, db, { uid: user.uid, limited: user.limited === true }, model, method, params) ?? null,
    );
  } catch (thrown) {
    return json2ErrorResponse(toOdooError(thrown));
  }
}

function call(
  state: DoubleState,
  db: Database,
  user: { uid: number; limited: boolean },
  model: string,
  method: string,
  params: JsonObject,
): unknown {
  const def = db.model(model);
  if (!def) throw notFound(`the model '${model}' does not exist`);
  if (method.startsWith('_') || API_PRIVATE_METHODS.has(method)) {
    throw accessError(`Private methods (such as '${model}.${method}') cannot be called remotely.`);
  }
  const spec = methodOf(method, state.mode);
  if (!spec) throw notFound(`The method '${model}.${method}' does not exist`);
  // Path parameters win over body keys; ids and context are route parameters, not method arguments.
  const { ids: rawIds, context, __model__: _model, __method__: _method, ...kwargs } = params;
  const ids = normalizeIds(rawIds);
  if (spec.model && ids.length > 0) throw unprocessable(`cannot call ${model}.${method} with ids`);
  const binding = bindNamed(spec, kwargs);
  if ('error' in binding) throw unprocessable(binding.error);
  const env: Env = {
    db,
    uid: user.uid,
    limited: user.limited,
    context: isPlainObject(context) ? context : {},
    mode: state.mode,
    protocol: 'json2',
    ...(state.binaries === undefined ? {} : { binaries: state.binaries }),
  };
  checkContext(env);
  const args = binding.args;
  // A recordset result becomes its ids: create answers a list even for a single dict (unlike
  // JSON-RPC). One transaction per call: an error undoes whatever the method wrote before it.
  return spec.readonly === true
    ? spec.run(env, def, ids, args)
    : db.transaction(() => spec.run(env, def, ids, args));
}
