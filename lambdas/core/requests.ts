/**
 * @module core/requests
 * Turns a request body (already read by the middleware, after authentication) into a
 * protocol-neutral call, or the
 * right error: -32700 / -32600 / -32002 on v1 and version endpoints; on v2 the plain-text
 * shape error, then -32007 for names and header values that cannot travel safely upstream.
 */
import type * as z from 'zod/mini';
import {
  InvalidRequestError,
  InvalidV2TargetError,
  MissingFunctionNameError,
  ParseError,
  V2RequestShapeError,
} from '../platform/errors.ts';
import { isJsonObject, MAX_JSON_DEPTH } from '../platform/json.ts';
import { isSameProxyKey } from '../platform/secrets.ts';
import { type ErpCall, MAX_HEADER_VALUE_LENGTH } from '../upstream/erp-transport.ts';
import type { InboundBody } from './inbound-call.ts';
import { type FactSheet, withFacts } from './request-facts.ts';
import {
  describeIssues,
  HEADER_SAFE,
  isMethodName,
  isModelName,
  MAX_NAME_LENGTH,
  v1ExecuteSchema,
  v2ExecuteSchema,
  versionSchema,
} from './schemas.ts';

function parseEnvelopeBody<T extends z.ZodMiniType>(body: InboundBody, schema: T): z.infer<T> {
  if (!body.ok) {
    throw new ParseError(`Parse error: ${body.problem ?? 'the request body is not valid JSON'}`);
  }
  if (!isJsonObject(body.value)) {
    throw new InvalidRequestError('Invalid request: the body must be a JSON object');
  }
  if (body.tooDeep) {
    throw new InvalidRequestError(`Invalid request: the body nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  const parsed = schema.safeParse(body.value);
  if (!parsed.success) throw new InvalidRequestError(`Invalid request: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/**
 * The JSON text of a top-level member of the (already read and validated) body, as the client
 * wrote it: forwarded byte for byte, so `1.0`, `1e400` or a 20-digit integer reach the ERP
 * unchanged. A repeated member is the last one, as in `JSON.parse`.
 */
function rawMember(body: InboundBody, name: string): string | undefined {
  return body.ok ? body.members.get(name) : undefined;
}

/** The target as the request log line shows it: the host (with its port) and the database. A new object. */
export function targetFacts(url: URL, db?: string): FactSheet {
  return db === undefined ? { erpHost: url.host } : { erpHost: url.host, erpDb: db };
}

/**
 * What a parsed call tells the request log line: the action (v1 `fn_name`, v2 method), model and
 * target. A new object, which the caller may complete.
 */
export function callFacts(call: ErpCall): FactSheet {
  return { action: call.method, model: call.model, erpHost: call.baseUrl.host, erpDb: call.db };
}

/** The facts of a call refused after its schema: what was read of it before the refusal. */
function refusedCallFacts(model: string, url: URL, db: string, action?: string): FactSheet {
  const facts: FactSheet = { model, erpHost: url.host, erpDb: db };
  if (action !== undefined) facts.action = action;
  return facts;
}

/**
 * The proxy key (`x-api-key`) and the ERP key are never the same value (README, "Calling the
 * proxy"). A client that put its proxy key into `erp_instance.api_key` would send it to the ERP;
 * it is refused instead, also when padded with whitespace (`" <key> "` authenticates as the key,
 * so the comparison trims as authentication does, in constant time). Only the caller's own key
 * is compared: comparing with every proxy key would tell a caller whether some string is another
 * caller's key.
 */
function isCallersProxyKey(erpApiKey: string, presentedProxyKey: string | undefined): boolean {
  return presentedProxyKey !== undefined && isSameProxyKey(erpApiKey, presentedProxyKey);
}

const PROXY_KEY_AS_ERP_KEY =
  "erp_instance.api_key is the proxy key sent in x-api-key; it must be the ERP user's own API key " +
  '(the proxy key is never sent to an ERP)';

/** v1 execute body → call. `presentedProxyKey` is the request's `x-api-key`. */
export function parseV1Call(inbound: InboundBody, presentedProxyKey?: string): ErpCall {
  const body = parseEnvelopeBody(inbound, v1ExecuteSchema());
  const { url, db } = body.erp_instance;
  let method: string = body.action;
  if (body.action === 'call_method') {
    const fnName = body.fn_name?.trim() ?? '';
    if (fnName === '')
      throw withFacts(new MissingFunctionNameError(), refusedCallFacts(body.model_id, url, db));
    // The one name grammar, before any rule reads the name (platform/erp-names.ts).
    if (!isMethodName(fnName))
      throw withFacts(
        new InvalidRequestError(
          `Invalid request: fn_name: "${printable(fnName)}" is not an ERP method name (letters, digits and _, not starting with a digit, at most ${MAX_NAME_LENGTH} characters)`,
        ),
        refusedCallFacts(body.model_id, url, db),
      );
    method = fnName;
  }
  if (isCallersProxyKey(body.erp_instance.api_key, presentedProxyKey)) {
    throw withFacts(
      new InvalidRequestError(`Invalid request: ${PROXY_KEY_AS_ERP_KEY}`),
      refusedCallFacts(body.model_id, url, db, method),
    );
  }
  return {
    baseUrl: body.erp_instance.url,
    db: body.erp_instance.db,
    apiKey: body.erp_instance.api_key,
    uid: body.erp_instance.user_id,
    standardAction: body.action !== 'call_method',
    model: body.model_id,
    method,
    argsJson: rawMember(inbound, 'params') ?? '[]',
    kwargsJson: rawMember(inbound, 'keyword') ?? '{}',
  };
}

/** Longest model or method name forwarded (platform/erp-names.ts). */
export const MAX_V2_NAME_LENGTH = MAX_NAME_LENGTH;
/** Longest `db` or `api_key` forwarded on v2 (they travel as header values). */
export const MAX_V2_HEADER_VALUE_LENGTH = MAX_HEADER_VALUE_LENGTH;

/** v2 execute body → call. Shape errors are plain text (README, Responses and errors). */
export function parseV2Call(inbound: InboundBody, presentedProxyKey?: string): ErpCall {
  if (!inbound.ok) {
    throw new V2RequestShapeError(`body: ${inbound.problem ?? 'the request body is not valid JSON'}`);
  }
  const value = inbound.value;
  if (!isJsonObject(value)) {
    const received = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
    throw new V2RequestShapeError(`body: expected object, received ${received}`);
  }
  if (inbound.tooDeep) throw new V2RequestShapeError(`body: nests deeper than ${MAX_JSON_DEPTH} levels`);
  const parsed = v2ExecuteSchema().safeParse(value);
  if (!parsed.success) throw new V2RequestShapeError(describeIssues(parsed.error));
  const body = parsed.data;
  try {
    checkV2Target(body, presentedProxyKey);
  } catch (error) {
    throw withFacts(
      error,
      refusedCallFacts(body.model_id, body.erp_instance.url, body.erp_instance.db, body.method),
    );
  }
  return {
    baseUrl: body.erp_instance.url,
    db: body.erp_instance.db,
    apiKey: body.erp_instance.api_key,
    // Ignored unless the call runs over /jsonrpc (ERP_V2_TRANSPORT=auto, ERP 16-18).
    uid: userIdOf(body.erp_instance.user_id),
    model: body.model_id,
    method: body.method,
    // Present: the schema requires kwargs.
    kwargsJson: rawMember(inbound, 'kwargs') as string,
  };
}

/** The names and header values of a v2 call that cannot travel safely upstream: -32007. */
function checkV2Target(body: z.infer<ReturnType<typeof v2ExecuteSchema>>, presentedProxyKey?: string): void {
  if (body.model_id.length > MAX_V2_NAME_LENGTH) {
    throw new InvalidV2TargetError(`Invalid model_id: longer than ${MAX_V2_NAME_LENGTH} characters.`);
  }
  if (body.method.length > MAX_V2_NAME_LENGTH) {
    throw new InvalidV2TargetError(`Invalid method: longer than ${MAX_V2_NAME_LENGTH} characters.`);
  }
  if (!isModelName(body.model_id)) {
    throw new InvalidV2TargetError(
      `Invalid model_id "${printable(body.model_id)}": expected an ERP model name such as res.partner (letters, digits, _ and single dots).`,
    );
  }
  if (!isMethodName(body.method)) {
    throw new InvalidV2TargetError(
      `Invalid method "${printable(body.method)}": expected an ERP method name (letters, digits and _, not starting with a digit).`,
    );
  }
  if (body.erp_instance.db.length > MAX_V2_HEADER_VALUE_LENGTH) {
    throw new InvalidV2TargetError(
      `Invalid erp_instance.db: longer than ${MAX_V2_HEADER_VALUE_LENGTH} characters (it is sent as the X-Odoo-Database header).`,
    );
  }
  if (body.erp_instance.api_key.length > MAX_V2_HEADER_VALUE_LENGTH) {
    throw new InvalidV2TargetError(
      `Invalid erp_instance.api_key: longer than ${MAX_V2_HEADER_VALUE_LENGTH} characters (it is sent in the Authorization header).`,
    );
  }
  if (!HEADER_SAFE.test(body.erp_instance.db)) {
    throw new InvalidV2TargetError(
      'Invalid erp_instance.db: it must be non-empty printable ASCII without leading or trailing spaces (it is sent as the X-Odoo-Database header).',
    );
  }
  if (!HEADER_SAFE.test(body.erp_instance.api_key)) {
    // Never echo the key itself.
    throw new InvalidV2TargetError(
      'Invalid erp_instance.api_key: it must be non-empty printable ASCII without spaces around it (it is sent in the Authorization header).',
    );
  }
  if (isCallersProxyKey(body.erp_instance.api_key, presentedProxyKey)) {
    throw new InvalidV2TargetError(`Invalid ${PROXY_KEY_AS_ERP_KEY}`);
  }
}

/** A v2 `user_id` the ERP can use: a positive integer (anything else is ignored, as before). */
function userIdOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** Version body → target base URL. */
export function parseVersionTarget(inbound: InboundBody): URL {
  return parseEnvelopeBody(inbound, versionSchema()).url;
}

/** Shows a name in a message with control characters (CR/LF included) escaped, shortened. */
function printable(value: string): string {
  const shown = JSON.stringify(value.slice(0, 80)).slice(1, -1);
  return value.length > 80 ? `${shown}...` : shown;
}
