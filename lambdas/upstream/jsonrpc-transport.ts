/**
 * @module upstream/jsonrpc-transport
 * v1: `POST {url}/jsonrpc` with `execute_kw` (README, "Calling the proxy"; docs/design.md).
 */
import { BadUpstreamResponseError } from '../platform/errors.ts';
import { isJsonObject, scanJson } from '../platform/json.ts';
import {
  type CallContext,
  classifyGatewayAnswer,
  databaseHeader,
  describeAnswer,
  type ErpCall,
  type ErpOutcome,
  type ErpTransport,
  scrubErrorData,
  sendExchange,
  unusableAnswer,
  upstreamUrl,
} from './erp-transport.ts';
import type { HttpClient } from './http-client.ts';

let nextRpcId = 1;

/**
 * -32005 for a target whose `/jsonrpc` answers 404: ERP 22 and later, or a wrong URL. The call
 * did not run, so the protocol bridge may go on over JSON-2 (README, "One envelope for every ERP
 * version").
 */
export class JsonRpcMissingError extends BadUpstreamResponseError {}

/**
 * Calls `service.method(*args)` over `/jsonrpc` and maps the answer. ERP errors come back as
 * HTTP 200 with `error.code` 200 (Odoo 16-18) or 0 (19+): both become code 0 here.
 */
export async function callJsonRpc(
  client: HttpClient,
  context: CallContext,
  baseUrl: URL,
  service: 'object' | 'common',
  method: string,
  argsJson: string,
  database?: string,
): Promise<ErpOutcome> {
  const id = nextRpcId++;
  const response = await sendExchange(client, context, {
    method: 'POST',
    url: upstreamUrl(baseUrl, '/jsonrpc'),
    headers: { 'content-type': 'application/json; charset=utf-8', ...databaseHeader(database) },
    body: `{"jsonrpc":"2.0","method":"call","params":{"service":${JSON.stringify(service)},"method":${JSON.stringify(method)},"args":${argsJson}},"id":${id}}`,
  });

  const gateway = classifyGatewayAnswer(response);
  if (gateway) throw gateway;
  if (response.status === 404) {
    throw new JsonRpcMissingError(
      `The target has no /jsonrpc endpoint (${describeAnswer(response)}). It may be ERP 22 or later, ` +
        'which removed /jsonrpc: use v2 (/v2/erp/execute). Otherwise check erp_instance.url.',
    );
  }
  // Validated without parsing: only a (small) error is parsed; a result is passed on as it came.
  const scan = response.status === 200 ? scanJson(response.body, { topLevelMembers: true }) : undefined;
  if (!scan?.ok || scan.members === undefined || firstByte(response.body) !== 0x7b) {
    throw unusableAnswer(response, scan && !scan.ok ? scan.reason : 'syntax', '/jsonrpc');
  }
  // Odoo always answers with "jsonrpc":"2.0"; any other JSON object (a health check, another
  // API at that URL) is not an ERP answer, and must not pass for a call that returned None.
  const versionSpan = scan.members.get('jsonrpc');
  if (!versionSpan || response.body.toString('latin1', versionSpan.start, versionSpan.end) !== '"2.0"') {
    throw unusableAnswer(response, 'not_jsonrpc', '/jsonrpc');
  }
  const errorSpan = scan.members.get('error');
  const error = errorSpan ? JSON.parse(response.body.toString('utf8', errorSpan.start, errorSpan.end)) : null;
  if (isJsonObject(error)) {
    const data = isJsonObject(error.data) ? error.data : null;
    // Odoo's top-level message is always "Odoo Server Error"; the useful text is in data.message.
    const message =
      (data && typeof data.message === 'string' && data.message) ||
      (typeof error.message === 'string' ? error.message : 'ERP error');
    // `data` is passed on whatever JSON it is (Odoo always sends an object).
    return { kind: 'erp_error', code: 0, message, data: scrubErrorData(error.data, context.stripDebug) };
  }
  if (error !== null) {
    throw new BadUpstreamResponseError('The ERP answered /jsonrpc with an error that is not an object.');
  }
  const resultSpan = scan.members.get('result');
  // A method that returned None gives an envelope with neither result nor error.
  if (!resultSpan) return { kind: 'result', value: null };
  return { kind: 'raw_result', json: response.body.subarray(resultSpan.start, resultSpan.end) };
}

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

export class JsonRpcTransport implements ErpTransport {
  constructor(private readonly client: HttpClient) {}

  call(call: ErpCall, context: CallContext): Promise<ErpOutcome> {
    context.state.upstreamProtocol = 'jsonrpc';
    // execute_kw(db, uid, key, model, method, args, kwargs); args and kwargs as the client wrote them.
    const fixed = JSON.stringify([call.db, call.uid, call.apiKey, call.model, call.method]).slice(0, -1);
    const argsJson = `${fixed},${call.argsJson ?? '[]'},${call.kwargsJson}]`;
    return callJsonRpc(this.client, context, call.baseUrl, 'object', 'execute_kw', argsJson, call.db);
  }
}
