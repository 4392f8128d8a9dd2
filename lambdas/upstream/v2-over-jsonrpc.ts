/**
 * @module upstream/v2-over-jsonrpc
 * A v2 call (named `kwargs`) run as `/jsonrpc` execute_kw on an ERP older than 19
 * (`ERP_V2_TRANSPORT=auto`), with JSON-2's answer shapes (README, "One envelope for every ERP
 * version"; odoo bridge notes, "Reverse bridge"). execute_kw takes most arguments by name, but
 * not all: a record method's ids must come first (`ids, args = args[0], args[1:]`), and
 * `create`'s `vals_list` must be positional (by name, the records are created, then IndexError
 * rolls them back). Arguments are moved as the bytes the caller wrote.
 */
import { Json2UnavailableError } from '../platform/errors.ts';
import { isJsonObject, topLevelTexts } from '../platform/json.ts';
import type { CallContext, ErpCall, ErpOutcome, ErpTransport } from './erp-transport.ts';
import type { JsonRpcTransport } from './jsonrpc-transport.ts';
import { BUILT_IN_SIGNATURES } from './method-signatures.ts';

export interface ExecuteKwTranslation {
  /** execute_kw's `args`: the JSON text of an array. */
  readonly argsJson: string;
  /** execute_kw's `kwargs`: the JSON text of an object. */
  readonly kwargsJson: string;
}

/**
 * JSON-2's named arguments as execute_kw's. A known method (the standard ones) is a model or
 * record method as the built-in table says; any other is a record method when `ids` is given.
 * A record method without `ids` runs on no records (`[[]]`), as JSON-2 runs it on an empty
 * recordset.
 */
export function translateV2ToExecuteKw(
  call: ErpCall,
  kwargs: ReadonlyMap<string, string> = topLevelTexts(call.kwargsJson).members,
): ExecuteKwTranslation {
  const raw = new Map(kwargs);

  const known = BUILT_IN_SIGNATURES.get(call.method);
  const ids = raw.get('ids');
  raw.delete('ids');
  const recordMethod = known ? !known.model : ids !== undefined;
  const args: string[] = [];
  if (recordMethod) args.push(ids ?? '[]');
  if (call.method === 'create' && !recordMethod) {
    const vals = raw.get('vals_list');
    if (vals !== undefined) {
      raw.delete('vals_list');
      // A list in, a list out: JSON-2's create always answers a list of ids.
      args.push(vals.trimStart().startsWith('{') ? `[${vals}]` : vals);
    }
  }
  const kwargsJson = `{${[...raw].map(([name, value]) => `${JSON.stringify(name)}:${value}`).join(',')}}`;
  return { argsJson: `[${args.join(',')}]`, kwargsJson };
}

/** JSON-2's HTTP status for an exception class (odoo bridge notes, section 2). */
const STATUS_BY_EXCEPTION: ReadonlyMap<string, number> = new Map([
  ['odoo.exceptions.AccessError', 403],
  ['odoo.exceptions.MissingError', 404],
  ['odoo.exceptions.UserError', 422],
  ['odoo.exceptions.ValidationError', 422],
  ['odoo.exceptions.LockError', 409],
  ['werkzeug.exceptions.BadRequest', 400],
  ['werkzeug.exceptions.Unauthorized', 401],
  ['werkzeug.exceptions.Forbidden', 403],
  ['werkzeug.exceptions.NotFound', 404],
  ['werkzeug.exceptions.Conflict', 409],
  ['werkzeug.exceptions.UnprocessableEntity', 422],
]);

/** What JSON-2 answers for a failure: its HTTP-style code and the exception name it gives. */
export interface Json2Failure {
  readonly code: number;
  /** JSON-2's exception name where it differs from execute_kw's, else `undefined`. */
  readonly name: string | undefined;
}

const NOT_FOUND = 'werkzeug.exceptions.NotFound';

/**
 * What JSON-2 answers the same failure of a call to `method`: the code by exception class, and,
 * where execute_kw and JSON-2 name the failure differently, JSON-2's name (checked side by side on
 * a real Odoo 18 and 19, test/live/v2-auto-compare.test.ts): a bad, expired or revoked key is 401
 * Unauthorized (AccessDenied on /jsonrpc), an unknown model or method 404 NotFound (UserError,
 * AttributeError), an argument that does not bind to `method` itself 422 UnprocessableEntity
 * (TypeError naming `method`; a TypeError raised further in, such as `_read_format()` for an
 * unknown `search_read` argument, is a 500 on JSON-2 too: capture bridge-err-unknown-kwarg-search_read).
 */
export function json2FailureOf(data: unknown, method: string): Json2Failure {
  if (!isJsonObject(data) || typeof data.name !== 'string') return { code: 500, name: undefined };
  const message = typeof data.message === 'string' ? data.message : '';
  if (data.name === 'odoo.exceptions.AccessDenied')
    return { code: 401, name: 'werkzeug.exceptions.Unauthorized' };
  if (data.name === 'odoo.exceptions.UserError' && /^Object \S+ doesn't exist$/.test(message))
    return { code: 404, name: NOT_FOUND };
  if (data.name === 'builtins.AttributeError' && isUnknownMethod(message, method))
    return { code: 404, name: NOT_FOUND };
  if (data.name === 'builtins.TypeError' && doesNotBind(message, method))
    return { code: 422, name: 'werkzeug.exceptions.UnprocessableEntity' };
  return { code: STATUS_BY_EXCEPTION.get(data.name) ?? 500, name: undefined };
}

/**
 * The AttributeError of a call to a method the model does not have, as each version words it
 * (odoo/service/model.py): "The method 'res.partner.x' does not exist" (18 and later), "The method
 * 'x' does not exist on the model 'res.partner'" (17), and Python's own "type object 'res.partner'
 * has no attribute 'x'" (16, whose `call_kw` looks the method up with `getattr`), the last only
 * when it names the called method.
 */
function isUnknownMethod(message: string, method: string): boolean {
  if (/^The method '[^']+' does not exist(?: on the model '[^']+')?$/.test(message)) return true;
  return /^type object '[^']+' has no attribute '([^']+)'$/.exec(message)?.[1] === method;
}

/** Python's TypeError for arguments that do not fit `method`'s own signature (`BaseModel.search_count() got ...`). */
function doesNotBind(message: string, method: string): boolean {
  const prefix = /^(?:[\w.]+\.)?(\w+)\(\) (.*)$/s.exec(message);
  return (
    prefix?.[1] === method &&
    /^(?:got an unexpected keyword argument|missing \d+ required (?:positional|keyword-only) argument|got multiple values for argument)/.test(
      prefix[2] ?? '',
    )
  );
}

/** v2 calls over `/jsonrpc` execute_kw: needs the key's user id, which JSON-2 does not. */
export class V2OverJsonRpc implements ErpTransport {
  constructor(private readonly jsonrpc: JsonRpcTransport) {}

  async call(call: ErpCall, context: CallContext): Promise<ErpOutcome> {
    if (call.uid === undefined) {
      throw new Json2UnavailableError(
        'v2 is unavailable on this target: it is older than ERP 19 (no JSON-2). The proxy can run this call over ' +
          "/jsonrpc instead, but that needs the key's user: add erp_instance.user_id (the ERP user's integer id), or use v1.",
      );
    }
    const kwargs = topLevelTexts(call.kwargsJson).members;
    if (BUILT_IN_SIGNATURES.get(call.method)?.model && kwargs.has('ids')) {
      // What JSON-2 answers (json2.py: "cannot call <model>.<method> with ids"), without a call.
      return unprocessable(`cannot call ${call.model}.${call.method} with ids`);
    }
    const ids = kwargs.get('ids');
    if (ids !== undefined && !isIdsText(ids)) {
      // JSON-2 browses `ids` (Sequence[int]); over execute_kw they go first, where a model method
      // would read them as its first argument (a domain): refused as JSON-2 would not run it.
      return unprocessable(`ids of ${call.model}.${call.method} must be record ids (integers)`);
    }
    const translation = translateV2ToExecuteKw(call, kwargs);
    const outcome = await this.jsonrpc.call({ ...call, ...translation }, context);
    if (outcome.kind === 'erp_error') {
      const failure = json2FailureOf(outcome.data, call.method);
      const data =
        failure.name !== undefined && isJsonObject(outcome.data)
          ? { ...outcome.data, name: failure.name }
          : outcome.data;
      return { ...outcome, code: failure.code, data };
    }
    return call.method === 'copy' ? asIdList(outcome) : outcome;
  }
}

/**
 * `copy` answers one id up to ERP 17 (`@api.returns('self', lambda value: value.id)`) and a
 * list from 18 on, as JSON-2 always does: a v2 caller gets the list.
 */
function asIdList(outcome: ErpOutcome): ErpOutcome {
  if (outcome.kind !== 'raw_result') return outcome;
  const text = outcome.json.toString('utf8').trim();
  return /^\d{1,16}$/.test(text) ? { kind: 'result', value: [Number(text)] } : outcome;
}

/** An ERP error as JSON-2 answers a call it cannot bind (422), without a call. */
function unprocessable(message: string): ErpOutcome {
  return {
    kind: 'erp_error',
    code: 422,
    message,
    data: {
      name: 'werkzeug.exceptions.UnprocessableEntity',
      message,
      arguments: [message, 422],
      context: {},
    },
  };
}

/** Whether the JSON text of `ids` is an id or a list of ids, as JSON-2's `browse(ids)` takes them. */
function isIdsText(text: string): boolean {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return false;
  }
  const isId = (id: unknown): boolean => Number.isSafeInteger(id);
  return isId(value) || (Array.isArray(value) && value.every(isId));
}
