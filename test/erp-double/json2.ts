/**
 * @module erp-double/json2
 * JSON-2: `POST /json/2/<model>/<method>` with bearer API keys (Odoo 19+, wire-reference section 2).
 */
import type { Database } from './database.ts';
import { accessError, type OdooError, serializeException, toOdooError, werkzeugError } from './errors.ts';
import { API_PRIVATE_METHODS } from './models.ts';
import { bindNamed, checkContext, type Env, METHODS, normalizeIds } from './orm.ts';
import { isPlainObject, type JsonObject } from './py.ts';
import { type DoubleResponse, jsonResponse, unsupportedMediaType } from './responses.ts';
import { type DoubleState, userByKey } from './state.ts';

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

function errorResponse(error: OdooError): DoubleResponse {
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
 * Handles a `/json/2...` request once a database is selected (the caller answers the no-db 404).
 * Order as in Odoo: route match, content type (415 HTML), bearer auth (401), body (400), then the call.
 */
export function handleJson2(state: DoubleState, db: Database, request: Json2Request): DoubleResponse {
  const match = request.method === 'POST' ? MAIN_ROUTE.exec(request.path) : null;
  const mimetype = (request.contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (mimetype !== 'application/json' && request.body.length > 0) {
    const rule = match ? '/json/2/<__model__>/<__method__>' : '/json/2/<path:subpath>';
    return unsupportedMediaType(['http'], rule, 'json2', 'application/json');
  }
  if (!match) return errorResponse(notFound('Did you mean POST /json/2/<model>/<method>?'));
  const model = decodeURIComponent(match[1] ?? '');
  const method = decodeURIComponent(match[2] ?? '');

  const bearer = /^bearer\s+(.+)$/i.exec(request.authorization ?? '');
  if (!bearer) {
    return errorResponse(
      werkzeugError(
        'Unauthorized',
        401,
        'User not authenticated, use an API Key with a Bearer Authorization header.',
        WWW_AUTHENTICATE,
      ),
    );
  }
  const user = userByKey(state, db.name, bearer[1]?.trim() ?? '');
  if (!user) return errorResponse(werkzeugError('Unauthorized', 401, 'Invalid apikey', WWW_AUTHENTICATE));

  let params: JsonObject = {};
  if (request.body.length > 0) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(request.body);
    } catch (error) {
      return errorResponse(
        werkzeugError(
          'BadRequest',
          400,
          `could not parse the body as json: ${jsonDecodeReason(request.body, error)}`,
        ),
      );
    }
    // `jsonrequest | args` fails for a non-object body, which is then silently ignored (wire-reference 2.6).
    if (isPlainObject(parsed)) params = parsed;
  }

  try {
    return jsonResponse(
      200,
      call(state, db, { uid: user.uid, limited: user.limited === true }, model, method, params) ?? null,
    );
  } catch (thrown) {
    return errorResponse(toOdooError(thrown));
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
  const spec = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
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
  };
  checkContext(env);
  const result = spec.run(env, def, ids, binding.args);
  // A recordset result becomes its ids: create always answers a list on JSON-2.
  if (method === 'create' && typeof result === 'number') return [result];
  return result;
}
