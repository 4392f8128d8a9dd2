/**
 * @module erp-double/jsonrpc
 * Legacy JSON-RPC: `POST /jsonrpc` (services common, db up to 19, object), `/web/webclient/version_info`
 * and `/web/database/list` (Odoo's `odoo/http.py` `JsonRPCDispatcher` and `odoo/service/`).
 */
import type { Database } from './database.ts';
import {
  accessDenied,
  accessError,
  missingError,
  OdooError,
  pyError,
  serializeException,
  toOdooError,
  userError,
} from './errors.ts';
import { API_PRIVATE_METHODS } from './models.ts';
import { bindPositional, checkContext, type Env, methodOf, normalizeIds } from './orm.ts';
import { isPlainObject, type JsonObject, pyNameList, pyRepr } from './py.ts';
import {
  badRequestWrongType,
  type DoubleResponse,
  htmlResponse,
  jsonResponse,
  NOSNIFF_HEADER,
  unsupportedMediaType,
} from './responses.ts';
import { type DoubleState, dbFilter, keyServesRpc } from './state.ts';
import type { ErpMode } from './types.ts';
import {
  isModern,
  isTwentyOrLater,
  jsonRpcErrorCode,
  platformOf,
  releaseOf,
  rpcVersion,
} from './versions.ts';

/** The JSON-RPC routes of the double. */
export type JsonRpcRoute = '/jsonrpc' | '/web/webclient/version_info' | '/web/database/list';

/** The parts of the HTTP request a JSON-RPC route looks at. */
export interface JsonRpcRequest {
  contentType: string | undefined;
  host: string | undefined;
  body: string;
}

const JSON_MIMETYPES: ReadonlySet<string> = new Set(['application/json', 'application/json-rpc']);

/**
 * The `@api.private` methods of 18.0 among {@link API_PRIVATE_METHODS} (`odoo/models.py`):
 * `lock_for_update` does not exist before 19, and `browse` is not private in 18.
 */
const API_PRIVATE_METHODS_18: ReadonlySet<string> = new Set(
  [...API_PRIVATE_METHODS].filter((name) => name !== 'lock_for_update' && name !== 'browse'),
);

/**
 * Some private methods every 18.0 model has (`odoo/models.py`), which 18 reports as private
 * rather than missing. A sample: any other `_name` does not exist on the double's models.
 */
const BASEMODEL_PRIVATE_METHODS: ReadonlySet<string> = new Set([
  '_read_group',
  '_search',
  '_read',
  '_create',
  '_write',
  '_compute_display_name',
]);

/** Handles one request on a JSON-RPC route. */
export function handleJsonRpc(
  state: DoubleState,
  route: JsonRpcRoute,
  request: JsonRpcRequest,
): DoubleResponse {
  const mimetype = (request.contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (!JSON_MIMETYPES.has(mimetype)) {
    const inferred = request.body.length > 0 ? ['http'] : ['http', 'json2'];
    return isModern(state.mode)
      ? unsupportedMediaType(state.mode, inferred, route, 'jsonrpc', 'application/json, application/json-rpc')
      : badRequestWrongType(state.mode, inferred, route, 'json');
  }
  let payload: unknown;
  try {
    payload = JSON.parse(request.body);
  } catch {
    return htmlResponse(400, 'Invalid JSON data', { ...NOSNIFF_HEADER });
  }
  if (!isPlainObject(payload)) return htmlResponse(400, 'Invalid JSON-RPC data', { ...NOSNIFF_HEADER });
  const id = payload.id ?? null;
  const params = payload.params ?? {};
  if (!isPlainObject(params)) return htmlResponse(400, 'Invalid JSON-RPC data', { ...NOSNIFF_HEADER });
  try {
    const result = runRoute(state, route, params, request.host);
    // A None result leaves the envelope with neither result nor error (capture v1-action_archive-ok).
    return jsonResponse(200, result === undefined ? { jsonrpc: '2.0', id } : { jsonrpc: '2.0', id, result });
  } catch (thrown) {
    const error = toOdooError(thrown);
    return jsonResponse(
      200,
      {
        jsonrpc: '2.0',
        id,
        error: {
          code: jsonRpcErrorCode(state.mode),
          message: 'Odoo Server Error',
          data: serializeException(error, state.mode),
        },
      },
      {},
      { nosniff: false },
    );
  }
}

function runRoute(
  state: DoubleState,
  route: JsonRpcRoute,
  params: JsonObject,
  host: string | undefined,
): unknown {
  if (route === '/web/webclient/version_info') return rpcVersion(state.mode);
  if (route === '/web/database/list') return dbFilter(state, [...state.databases.keys()], host);
  const missing = ['service', 'method', 'args'].filter((name) => !(name in params));
  if (missing.length > 0) {
    const owner = isModern(state.mode) ? 'JSONRPC' : 'RPC';
    const s = missing.length === 1 ? '' : 's';
    throw pyError(
      'TypeError',
      `${owner}.jsonrpc() missing ${missing.length} required positional argument${s}: ${pyNameList(missing)}`,
    );
  }
  const args = params.args;
  if (!Array.isArray(args))
    throw pyError('TypeError', `dispatch() argument after * must be an iterable, not ${pyTypeName(args)}`);
  const method = String(params.method);
  switch (params.service) {
    case 'common':
      return dispatchCommon(state, method, args);
    case 'db':
      // Unexposed from RPC in 19.1 (odoo/odoo#238399): an unknown service from then on.
      if (isTwentyOrLater(state.mode)) throw pyError('KeyError', String(params.service));
      return dispatchDb(state, method, args);
    case 'object':
      return dispatchObject(state, method, args);
    default:
      throw pyError('KeyError', String(params.service));
  }
}

function pyTypeName(value: unknown): string {
  if (value === null || value === undefined) return 'NoneType';
  if (typeof value === 'string') return 'str';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  return Array.isArray(value) ? 'list' : 'dict';
}

function requireDatabase(state: DoubleState, name: unknown): Database {
  const db = typeof name === 'string' ? state.databases.get(name) : undefined;
  if (!db) {
    // libpq 13 (the real 16's) gives the server's message alone (capture o16-v1-err-nonexistent-db).
    const prefix = platformOf(state.mode).libpqConnectionPrefix
      ? 'connection to server at "127.0.0.1", port 5432 failed: '
      : '';
    const message = `${prefix}FATAL:  database "${String(name)}" does not exist\n`;
    throw new OdooError('psycopg2.OperationalError', message, { json2Status: 500 });
  }
  return db;
}

function authenticate(
  state: DoubleState,
  dbName: unknown,
  login: unknown,
  password: unknown,
): number | false {
  const db = requireDatabase(state, dbName);
  const user = state.users.find(
    (candidate) =>
      candidate.db === db.name &&
      candidate.login === login &&
      ((candidate.apiKey === password && candidate.expired !== true && keyServesRpc(state.mode, candidate)) ||
        (candidate.password !== undefined && candidate.password === password)),
  );
  return user ? user.uid : false;
}

function arity(name: string, args: unknown[], params: readonly string[]): void {
  if (args.length < params.length) {
    const missing = params.slice(args.length);
    const s = missing.length === 1 ? '' : 's';
    throw pyError(
      'TypeError',
      `${name}() missing ${missing.length} required positional argument${s}: ${pyNameList(missing)}`,
    );
  }
  if (args.length > params.length) {
    throw pyError(
      'TypeError',
      `${name}() takes ${params.length} positional arguments but ${args.length} were given`,
    );
  }
}

function dispatchCommon(state: DoubleState, method: string, args: unknown[]): unknown {
  switch (method) {
    case 'version':
      return rpcVersion(state.mode);
    case 'login':
      arity('exp_login', args, ['db', 'login', 'password']);
      return authenticate(state, args[0], args[1], args[2]);
    case 'authenticate':
      arity('exp_authenticate', args, ['db', 'login', 'password', 'user_agent_env']);
      return authenticate(state, args[0], args[1], args[2]);
    default:
      throw new OdooError('builtins.Exception', `Method not found: ${method}`);
  }
}

const DB_ADMIN_METHODS: ReadonlySet<string> = new Set([
  'create_database',
  'duplicate_database',
  'drop',
  'dump',
  'restore',
  'rename',
  'change_admin_password',
  'migrate_databases',
]);

function dispatchDb(state: DoubleState, method: string, args: unknown[]): unknown {
  switch (method) {
    case 'list':
      // exp_list does not apply the dbfilter (capture dbfilter-v1-db_list).
      return [...state.databases.keys()];
    case 'server_version':
      return releaseOf(state.mode).version;
    case 'db_exist':
      return typeof args[0] === 'string' && state.databases.has(args[0]);
    case 'list_lang':
      return [['en_US', 'English (US)']];
    default:
      if (DB_ADMIN_METHODS.has(method)) throw accessDenied(state.mode);
      throw pyError('KeyError', `Method not found: ${method}`);
  }
}

/** Python `int(value)`. */
function pyInt(value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)) return Number.parseInt(value, 10);
  if (typeof value === 'string')
    throw pyError('ValueError', `invalid literal for int() with base 10: ${pyRepr(value)}`);
  throw pyError(
    'TypeError',
    `int() argument must be a string, a bytes-like object or a real number, not '${pyTypeName(value)}'`,
  );
}

/** Python `dict(value)` for the `kwargs` member of execute_kw. */
function pyDict(value: unknown): JsonObject {
  if (value === undefined || value === null) return {};
  if (isPlainObject(value)) return value;
  if (!Array.isArray(value)) throw pyError('TypeError', `'${pyTypeName(value)}' object is not iterable`);
  const result: JsonObject = {};
  value.forEach((element, index) => {
    if (!Array.isArray(element) && typeof element !== 'string') {
      throw pyError('TypeError', `cannot convert dictionary update sequence element #${index} to a sequence`);
    }
    const length = element.length;
    if (length !== 2) {
      throw pyError(
        'ValueError',
        `dictionary update sequence element #${index} has length ${length}; 2 is required`,
      );
    }
    result[String(element[0])] = element[1];
  });
  return result;
}

function dispatchObject(state: DoubleState, method: string, params: unknown[]): unknown {
  if (params.length < 5) {
    throw pyError('ValueError', `not enough values to unpack (expected at least 5, got ${params.length})`);
  }
  const [dbName, rawUid, password, model, modelMethod, ...rest] = params;
  const uid = pyInt(rawUid);
  if (method !== 'execute' && method !== 'execute_kw')
    throw new OdooError('builtins.NameError', `Method not available ${method}`);
  if (password === '' || password === null || password === undefined || password === false) {
    throw accessDenied(state.mode);
  }
  const db = requireDatabase(state, dbName);
  if (!db.row('res.users', uid)) throw missingError('res.users', [uid], uid);
  const user = state.users.find(
    (candidate) =>
      candidate.db === db.name &&
      candidate.uid === uid &&
      ((candidate.apiKey === password && candidate.expired !== true && keyServesRpc(state.mode, candidate)) ||
        (candidate.password !== undefined && candidate.password === password)),
  );
  if (!user) throw accessDenied(state.mode);
  let args: unknown[];
  let kwargs: JsonObject;
  if (method === 'execute_kw') {
    if (rest.length === 0)
      throw pyError('TypeError', "execute_kw() missing 1 required positional argument: 'args'");
    const [positional, named] = rest;
    if (!Array.isArray(positional)) {
      throw pyError(
        'TypeError',
        `BaseModel.${String(modelMethod)}() argument after * must be an iterable, not ${pyTypeName(positional)}`,
      );
    }
    args = positional;
    kwargs = { ...pyDict(named) };
  } else {
    args = rest;
    kwargs = {};
  }
  return callModel(
    state.mode,
    db,
    { uid, limited: user.limited === true },
    String(model),
    String(modelMethod),
    args,
    kwargs,
  );
}

function callModel(
  mode: ErpMode,
  db: Database,
  user: { uid: number; limited: boolean },
  model: string,
  method: string,
  args: unknown[],
  kwargs: JsonObject,
): unknown {
  const def = db.model(model);
  if (!def) throw userError(`Object ${model} doesn't exist`);
  const spec = methodOf(method, mode);
  // 18.0's `execute_cr` already calls `get_public_method` (odoo/service/model.py), worded as in
  // 19, but it looks the method up before it checks the name: an unknown `_foo` does not exist,
  // an existing `_read_group` or `@api.private` one is private (captures o18-v1-err-*method*).
  // 16 and 17 go straight to `call_kw` after `check_method_name`: `_foo` and `_read_group` are
  // private, `with_context` is called (captures o17-/o16-v1-err-private-method*, -with_context).
  const publicMethodCheck = Number(mode) >= 18;
  const notFound = (): OdooError => {
    if (publicMethodCheck) return pyError('AttributeError', `The method '${model}.${method}' does not exist`);
    if (mode === '16')
      return pyError('AttributeError', `type object '${model}' has no attribute '${method}'`);
    return pyError('AttributeError', `The method '${method}' does not exist on the model '${model}'`);
  };
  if (mode === '18' && !spec && !API_PRIVATE_METHODS_18.has(method) && !BASEMODEL_PRIVATE_METHODS.has(method))
    throw notFound();
  const apiPrivate = mode === '18' ? API_PRIVATE_METHODS_18 : API_PRIVATE_METHODS;
  if (method.startsWith('_') || (publicMethodCheck && apiPrivate.has(method))) {
    throw accessError(
      publicMethodCheck
        ? `Private methods (such as '${model}.${method}') cannot be called remotely.`
        : `Private methods (such as ${method}) cannot be called remotely.`,
    );
  }
  if (!spec) throw notFound();
  const { context, ...namedArgs } = kwargs;
  const env: Env = {
    db,
    uid: user.uid,
    limited: user.limited,
    context: isPlainObject(context) ? context : {},
    mode,
    protocol: 'jsonrpc',
  };
  checkContext(env);
  let ids: number[] = [];
  let positional = args;
  // 16-18's `execute_kw` passes `*args` on, so `call_kw` indexes a tuple; 19 passes the list
  // (captures o18-v1-record-method-no-ids, o18-v1-named-create-vals_list, bridge-named-*).
  const outOfRange = Number(mode) >= 19 ? 'list index out of range' : 'tuple index out of range';
  if (!spec.model) {
    // call_kw: `ids, args = args[0], args[1:]`, so ids can only come positionally (bridge-named-*).
    if (args.length === 0) throw pyError('IndexError', outOfRange);
    ids = normalizeIds(args[0]);
    positional = args.slice(1);
  }
  const bound = bindPositional(method, spec, positional, namedArgs, mode);
  const run = (): unknown => {
    const result = spec.run(env, def, ids, bound);
    if (method !== 'create') return result;
    // call_kw's special case, read after the call: `result.id if isinstance(args[0], Mapping)
    // else result.ids`. With vals_list passed by name there is no args[0]: the records are
    // created, then IndexError rolls them back (bridge-named-create-vals_list-*).
    if (args.length === 0) throw pyError('IndexError', outOfRange);
    return isPlainObject(args[0]) && Array.isArray(result) ? result[0] : result;
  };
  // One transaction per call: an error undoes whatever the method wrote before it.
  return spec.readonly === true ? run() : db.transaction(run);
}
