/**
 * @module erp-double/errors
 * Odoo and werkzeug exceptions as the double raises them, and their two wire serializations
 * (JSON-RPC `error.data` and the JSON-2 error body, `JsonRPCDispatcher.handle_error` and `Json2Dispatcher.handle_error` in Odoo 19's `odoo/http.py`).
 */
import type { ErpMode } from './types.ts';

const HTTP_REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  422: 'Unprocessable Entity',
  500: 'Internal Server Error',
};

/** Options of an {@link OdooError}. */
export interface OdooErrorOptions {
  /** HTTP status on JSON-2 (`http_status` of the exception class, 500 for plain Python exceptions). */
  json2Status?: number;
  /** A werkzeug HTTPException: `arguments` is `[description, code]`. */
  werkzeug?: boolean;
  /** Extra response headers on JSON-2 (e.g. `WWW-Authenticate`). */
  headers?: Record<string, string>;
  /** `AccessDenied` in 19+: the traceback is suppressed, `debug` is only the last line. */
  suppressTraceback?: boolean;
}

/** An exception raised inside the imitated Odoo server. */
export class OdooError extends Error {
  /** Python qualified class name, e.g. `odoo.exceptions.AccessError`. */
  readonly pyName: string;
  readonly json2Status: number;
  readonly werkzeug: boolean;
  readonly headers: Record<string, string>;
  readonly suppressTraceback: boolean;

  constructor(pyName: string, message: string, options: OdooErrorOptions = {}) {
    super(message);
    this.name = 'OdooError';
    this.pyName = pyName;
    this.json2Status = options.json2Status ?? 500;
    this.werkzeug = options.werkzeug ?? false;
    this.headers = options.headers ?? {};
    this.suppressTraceback = options.suppressTraceback ?? false;
  }

  /** `exc.args` as serialized by Odoo. */
  get pyArguments(): unknown[] {
    return this.werkzeug ? [this.message, this.json2Status] : [this.message];
  }

  /** A plausible `debug` text: a short fake traceback ending with the exception line. */
  debugText(): string {
    const shortName = this.pyName.startsWith('builtins.')
      ? this.pyName.slice('builtins.'.length)
      : this.pyName;
    const text = this.werkzeug
      ? `${this.json2Status} ${HTTP_REASONS[this.json2Status] ?? ''}: ${this.message}`
      : this.message;
    const last = `${shortName}: ${text}\n`;
    if (this.suppressTraceback) return last;
    return (
      'Traceback (most recent call last):\n' +
      '  File "/srv/odoo/odoo/http.py", line 2200, in _serve_db\n' +
      '    return service_model.retrying(serve_func, env=self.env)\n' +
      '  File "erp-double", line 1, in <module>\n' +
      '    (imitated by the erp-proxy test double)\n' +
      last
    );
  }
}

/** `odoo.exceptions.AccessDenied("Access Denied")` (403 on JSON-2, traceback suppressed in 19+). */
export function accessDenied(mode: ErpMode, message = 'Access Denied'): OdooError {
  return new OdooError('odoo.exceptions.AccessDenied', message, {
    json2Status: 403,
    suppressTraceback: Number(mode) >= 19,
  });
}

/** `odoo.exceptions.AccessError` (403). */
export function accessError(message: string): OdooError {
  return new OdooError('odoo.exceptions.AccessError', message, { json2Status: 403 });
}

/** `odoo.exceptions.UserError` (422). */
export function userError(message: string): OdooError {
  return new OdooError('odoo.exceptions.UserError', message, { json2Status: 422 });
}

/** `odoo.exceptions.ValidationError` (422). */
export function validationError(message: string): OdooError {
  return new OdooError('odoo.exceptions.ValidationError', message, { json2Status: 422 });
}

/** `odoo.exceptions.MissingError` for `model(ids)` (404). */
export function missingError(model: string, ids: readonly number[], uid: number): OdooError {
  const tuple = ids.length === 1 ? `${ids[0]},` : ids.join(', ');
  return new OdooError(
    'odoo.exceptions.MissingError',
    `Record does not exist or has been deleted.\n(Record: ${model}(${tuple}), User: ${uid})`,
    { json2Status: 404 },
  );
}

/** A plain Python exception (`builtins.ValueError`, ...): 500 on JSON-2. */
export function pyError(className: string, message: string): OdooError {
  return new OdooError(`builtins.${className}`, message, { json2Status: 500 });
}

/** A werkzeug HTTPException (`NotFound`, `UnprocessableEntity`, ...). */
export function werkzeugError(
  className: string,
  status: number,
  description: string,
  headers: Record<string, string> = {},
): OdooError {
  return new OdooError(`werkzeug.exceptions.${className}`, description, {
    json2Status: status,
    werkzeug: true,
    headers,
  });
}

/** `serialize_exception(exc)` with the key order of the given Odoo version. */
export function serializeException(error: OdooError, mode: ErpMode): Record<string, unknown> {
  const debug = error.debugText();
  if (Number(mode) >= 19) {
    return { name: error.pyName, message: error.message, arguments: error.pyArguments, context: {}, debug };
  }
  return { name: error.pyName, debug, message: error.message, arguments: error.pyArguments, context: {} };
}

/** Turns anything thrown into an {@link OdooError} (a bug in the double becomes a 500 RuntimeError). */
export function toOdooError(thrown: unknown): OdooError {
  if (thrown instanceof OdooError) return thrown;
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return pyError('RuntimeError', `erp-double internal error: ${message}`);
}
