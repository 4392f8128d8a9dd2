/**
 * @module upstream/erp-answer
 * What an ERP answer is: the one definition every path reads upstream answers with (v1 over
 * `/jsonrpc`, v1 translated to JSON-2, v2 over JSON-2, v2 over `execute_kw`, the version
 * endpoints and the protocol bridge's version lookup). An answer is passed on as the ERP's only
 * when it has the ERP's shape; anything else is -32005 naming the HTTP status and content type
 * and asking to check `erp_instance.url` (README, "Responses and errors"; docs/design.md, "What
 * an ERP answer is").
 *
 * - `/jsonrpc` (HTTP 200, a JSON object with `"jsonrpc": "2.0"`):
 *   - with `result`: the result;
 *   - with `error`: an ERP error only when `error` is an object whose `data` is an object with a
 *     string `name` (the exception class, as Odoo's `serialize_exception` always sends it);
 *   - with neither: the method returned None (Odoo's `JsonRPCDispatcher._response` leaves
 *     `result` out when it is None) only when the object is exactly `{"jsonrpc": "2.0", "id":
 *     <the request's id>}`, the two members Odoo writes; any other such object is not Odoo's.
 *   An HTTP 404 is {@link JsonRpcMissingError}: the route is missing (ERP 22), or the URL is not
 *   an ERP's; on its own it proves neither.
 * - JSON-2 `/json/2/<model>/<method>`:
 *   - 200: the body, any JSON, is the result (JSON-2 has no envelope);
 *   - 4xx/5xx: an ERP error only when the body is a JSON object with a string `name` and a string
 *     `message` (Odoo 19's `serialize_exception`, every recorded capture);
 *   - 404 whose body is not a JSON object (Odoo 16-18's HTML 404, Odoo 19's "No database is
 *     selected" page): JSON-2 unavailable (-32006). A JSON object without `name` and `message` is
 *     another service's 404: -32005. A bare JSON string (early saas-18.4 JSON-2 builds, before
 *     the spec's ERP 19) is no ERP error object either: the spec gives `error.data` as the ERP's
 *     error object whose `name` is the exception class.
 * - `GET /web/version`: HTTP 200, a JSON object whose `version_info` and `version` have the
 *   specification's shape ({@link toErpVersion}); `common.version` over `/jsonrpc`: a `/jsonrpc`
 *   result whose `server_version_info` and `server_version` have it.
 *
 * Before any of this, answers about the way to the ERP keep their own codes
 * (`classifyGatewayAnswer`): redirects -32005 naming the `Location`, 429/503/502 -32004, 504 -32003.
 */
import { BadUpstreamResponseError } from '../platform/errors.ts';
import { isJsonObject, scanJson } from '../platform/json.ts';
import { classifyGatewayAnswer, describeAnswer, parseJsonBody, TooDeepAnswerError } from './erp-transport.ts';
import type { UpstreamResponse } from './http-client.ts';

/**
 * `version_info` as the specification gives it: `[major, minor, micro, release_level, serial,
 * edition]`, integers and strings in that order. The major may be a string (`"saas~18"`: Odoo's
 * `release.py` lets it become one during a release).
 */
export type ErpVersionInfo = readonly [number | string, number, number, string, number, string];

export interface ErpVersion {
  readonly version_info: ErpVersionInfo;
  readonly version: string;
}

/**
 * Longest string accepted in a version answer (`version`, a string major, the release level,
 * the edition). Real ones are short: `"saas~17.2+e-20241113"` is 20 characters.
 */
export const MAX_VERSION_TEXT_LENGTH = 64;

/** A version number part: a non-negative safe integer (`19`, `0`; never `-1`, `0.5` or `1e308`). */
function isVersionNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isVersionText(value: unknown, minLength = 0): value is string {
  return typeof value === 'string' && value.length >= minLength && value.length <= MAX_VERSION_TEXT_LENGTH;
}

/**
 * The version answer in the shape the specification gives, or `undefined` for any other shape:
 * exactly six elements, `[int | string, int, int, string, int, string]` with the integers
 * non-negative and safe and the strings at most {@link MAX_VERSION_TEXT_LENGTH} characters (a
 * string major and `version` not empty). What real ERPs answer passes: `[19, 0, 0, "final", 0,
 * ""]`, `["saas~18", 3, 0, "final", 0, ""]`, `["saas~17", 2, 0, "final", 0, "e"]`. A new array
 * is returned, so nothing else the ERP put in the answer is passed on.
 */
export function toErpVersion(versionInfo: unknown, version: unknown): ErpVersion | undefined {
  if (!Array.isArray(versionInfo) || versionInfo.length !== 6) return undefined;
  const [major, minor, micro, releaseLevel, serial, edition] = versionInfo as unknown[];
  const majorOk = isVersionNumber(major) || isVersionText(major, 1);
  if (
    !majorOk ||
    !isVersionNumber(minor) ||
    !isVersionNumber(micro) ||
    !isVersionText(releaseLevel) ||
    !isVersionNumber(serial) ||
    !isVersionText(edition) ||
    !isVersionText(version, 1)
  ) {
    return undefined;
  }
  return { version_info: [major as number | string, minor, micro, releaseLevel, serial, edition], version };
}

/** Why an answer is not the ERP's, as the -32005 message words it. */
export type NotErpReason =
  /** Not JSON at all, or a status the protocol never answers with: status and type say enough. */
  | 'syntax'
  /** JSON nested deeper than the proxy passes on. */
  | 'depth'
  /** `/jsonrpc`: JSON that is not a JSON-RPC 2.0 answer. */
  | 'not_jsonrpc'
  /** `/jsonrpc`: a JSON-RPC `error` without the exception's name in `error.data.name`. */
  | 'rpc_error_shape'
  /** JSON-2: an error body that is not an object with the exception's `name` and `message`. */
  | 'json2_error_shape';

const REASON_TEXT: Readonly<Record<Exclude<NotErpReason, 'depth'>, string>> = {
  syntax: '',
  not_jsonrpc: 'JSON that is not a JSON-RPC 2.0 answer, ',
  rpc_error_shape: "a JSON-RPC error without the ERP's exception name (error.data.name), ",
  json2_error_shape: "an error body without the ERP's exception name and message, ",
};

/**
 * -32005: the answer is not the ERP's. `answer` says what came back (`HTTP 404
 * application/json`, with why it is not the ERP's), for a message that sums up several.
 */
export class NotErpAnswerError extends BadUpstreamResponseError {
  readonly answer: string;
  constructor(message: string, answer: string) {
    super(message);
    this.answer = answer;
  }
}

/**
 * -32005 for an answer that is not the ERP's: names the path, the HTTP status and the content
 * type (never the body), and asks to check `erp_instance.url`.
 */
export function notAnErpAnswer(
  response: UpstreamResponse,
  reason: NotErpReason,
  path: string,
): BadUpstreamResponseError {
  if (reason === 'depth') return new TooDeepAnswerError();
  const answer = `${REASON_TEXT[reason]}${describeAnswer(response)}`;
  return new NotErpAnswerError(
    `The target did not answer like an ERP on ${path} (${answer}). Check erp_instance.url.`,
    answer,
  );
}

/**
 * -32005 for a target whose `/jsonrpc` answers HTTP 404: ERP 22 and later, or a URL that is not
 * an ERP's. The call did not run; the protocol bridge moves it to JSON-2 only when the target's
 * version says it has JSON-2 (README, "One envelope for every ERP version").
 */
export class JsonRpcMissingError extends NotErpAnswerError {
  constructor(response: UpstreamResponse) {
    const answer = describeAnswer(response);
    super(
      `The target has no /jsonrpc endpoint (${answer}). It may be ERP 22 or later, ` +
        'which removed /jsonrpc: use v2 (/v2/erp/execute). Otherwise check erp_instance.url.',
      answer,
    );
  }
}

/** `/jsonrpc`'s answer, when it is the ERP's. */
export type JsonRpcAnswer =
  /** `result`, as the ERP's JSON bytes (validated, not parsed). */
  | { readonly kind: 'result'; readonly json: Buffer }
  /** Neither `result` nor `error`: the method returned None. */
  | { readonly kind: 'none' }
  /** The ERP's error: `error` and its `data` (an object with a string `name`). */
  | {
      readonly kind: 'error';
      readonly error: Record<string, unknown>;
      readonly data: Record<string, unknown> & { readonly name: string };
    };

/** The first byte that is not JSON whitespace. */
function firstByte(bytes: Buffer): number | undefined {
  let i = 0;
  while (
    i < bytes.length &&
    (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09)
  )
    i += 1;
  return bytes[i];
}

function isNamedObject(value: unknown): value is Record<string, unknown> & { readonly name: string } {
  return isJsonObject(value) && typeof value.name === 'string';
}

/**
 * Reads `/jsonrpc`'s answer to the request with JSON-RPC id `requestId`, or throws: the front
 * proxy's code (`classifyGatewayAnswer`), {@link JsonRpcMissingError} for a 404, -32005 for
 * anything else that is not the ERP's answer.
 */
export function readJsonRpcAnswer(response: UpstreamResponse, requestId: number): JsonRpcAnswer {
  const path = '/jsonrpc';
  const gateway = classifyGatewayAnswer(response);
  if (gateway) throw gateway;
  if (response.status === 404) throw new JsonRpcMissingError(response);
  // Validated without parsing: only a (small) error is parsed; a result is passed on as it came.
  const scan = response.status === 200 ? scanJson(response.body, { topLevelMembers: true }) : undefined;
  if (!scan?.ok || scan.members === undefined || firstByte(response.body) !== 0x7b) {
    throw notAnErpAnswer(response, scan && !scan.ok ? scan.reason : 'syntax', path);
  }
  const { members } = scan;
  const text = (name: string): string | undefined => {
    const span = members.get(name);
    return span && response.body.toString('utf8', span.start, span.end);
  };
  if (text('jsonrpc') !== '"2.0"') throw notAnErpAnswer(response, 'not_jsonrpc', path);

  const errorText = text('error');
  const error: unknown = errorText === undefined ? null : JSON.parse(errorText);
  if (error !== null) {
    if (!isJsonObject(error) || !isNamedObject(error.data))
      throw notAnErpAnswer(response, 'rpc_error_shape', path);
    return { kind: 'error', error, data: error.data };
  }
  const resultSpan = members.get('result');
  if (resultSpan) return { kind: 'result', json: response.body.subarray(resultSpan.start, resultSpan.end) };
  // Odoo's answer for None is exactly {"jsonrpc": "2.0", "id": <the request's id>}.
  const idText = text('id');
  const ownId = idText !== undefined && JSON.parse(idText) === requestId;
  if (!ownId || members.size !== 2) {
    throw notAnErpAnswer(response, 'not_jsonrpc', path);
  }
  return { kind: 'none' };
}

/** A JSON-2 error body: an object with the exception's `name` and `message`. */
export type Json2ErrorBody = Record<string, unknown> & { readonly name: string; readonly message: string };

/** What JSON-2 answered, when it is the ERP's (or its missing route). */
export type Json2Answer =
  /** HTTP 200: the body, validated, not parsed. */
  | { readonly kind: 'result'; readonly json: Buffer }
  /** 4xx/5xx with Odoo's error object. */
  | { readonly kind: 'error'; readonly status: number; readonly body: Json2ErrorBody }
  /**
   * 404 whose body is not a JSON object: no JSON-2 route for this request (ERP older than 19) or,
   * `noDatabase`, Odoo 19's page for a database it could not select.
   */
  | { readonly kind: 'missing'; readonly noDatabase: boolean };

/** Odoo 19's page when no database could be selected (`NOT_FOUND_NODB`). */
const NO_DATABASE_SELECTED = /No database is selected/i;

function isJson2ErrorBody(value: unknown): value is Json2ErrorBody {
  return isJsonObject(value) && typeof value.name === 'string' && typeof value.message === 'string';
}

/**
 * Reads a JSON-2 answer (`/json/2/...`), or throws: the front proxy's code
 * (`classifyGatewayAnswer`), -32005 for anything that is not the ERP's answer.
 */
export function readJson2Answer(response: UpstreamResponse): Json2Answer {
  const path = '/json/2';
  if (response.status === 200) {
    // The body is the result: validated, then passed on as it came (never parsed).
    const scan = scanJson(response.body);
    if (!scan.ok) throw notAnErpAnswer(response, scan.reason, path);
    return { kind: 'result', json: response.body };
  }
  const json = parseJsonBody(response);
  const gateway = classifyGatewayAnswer(response);
  if (gateway) throw gateway;
  const isError = response.status >= 400 && response.status <= 599;
  if (isError && json.ok && isJson2ErrorBody(json.value)) {
    return { kind: 'error', status: response.status, body: json.value };
  }
  if (response.status === 404 && !(json.ok && isJsonObject(json.value))) {
    const text = response.body.subarray(0, 64 * 1024).toString('utf8');
    return { kind: 'missing', noDatabase: NO_DATABASE_SELECTED.test(text) };
  }
  throw notAnErpAnswer(response, isError && json.ok ? 'json2_error_shape' : 'syntax', path);
}

/** `GET /web/version`'s answer, when it is the ERP's version; `undefined` for anything else. */
export function readWebVersionAnswer(response: UpstreamResponse): ErpVersion | undefined {
  if (response.status !== 200) return undefined;
  const json = parseJsonBody(response);
  if (!json.ok || !isJsonObject(json.value)) return undefined;
  return toErpVersion(json.value.version_info, json.value.version);
}

/** The version in a `/jsonrpc` `common.version` result, when it has the specification's shape. */
export function commonVersionOf(result: unknown): ErpVersion | undefined {
  return isJsonObject(result) ? toErpVersion(result.server_version_info, result.server_version) : undefined;
}

/**
 * -32005 for a target whose `/jsonrpc` answered 404 and that tells no ERP version: not an ERP at
 * that URL (or not at that path).
 */
export function notAnErpWithoutVersion(error: JsonRpcMissingError): BadUpstreamResponseError {
  return new BadUpstreamResponseError(
    `The target did not answer like an ERP: /jsonrpc answered ${error.answer}, and it tells no ERP version ` +
      '(GET /web/version, /jsonrpc common.version). Check erp_instance.url.',
    { cause: error },
  );
}
