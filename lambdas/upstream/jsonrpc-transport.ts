/**
 * @module jsonrpc-transport
 * v1: `POST {url}/jsonrpc` with `execute_kw` (DESIGN.md section 4, wire-reference section 1).
 */
import type { ProxyOutcome } from '../envelope.ts';
import { BadUpstreamResponseError } from '../errors.ts';
import {
  type CallContext,
  classifyGatewayAnswer,
  describeAnswer,
  type ErpCall,
  type ErpTransport,
  isJsonObject,
  parseJsonBody,
  scrubErrorData,
  sendExchange,
  upstreamUrl,
} from './erp-transport.ts';
import type { HttpClient } from './http-client.ts';

let nextRpcId = 1;

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
  args: readonly unknown[],
): Promise<ProxyOutcome> {
  const id = nextRpcId++;
  const response = await sendExchange(client, context, {
    method: 'POST',
    url: upstreamUrl(baseUrl, '/jsonrpc'),
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'call', params: { service, method, args }, id }),
  });

  const gateway = classifyGatewayAnswer(response);
  if (gateway) throw gateway;
  if (response.status === 404) {
    throw new BadUpstreamResponseError(
      `The target has no /jsonrpc endpoint (${describeAnswer(response)}). It may be ERP 22 or later, ` +
        'which removed /jsonrpc: use v2 (/v2/erp/execute). Otherwise check erp_instance.url.',
    );
  }
  const json = parseJsonBody(response);
  if (response.status !== 200 || !json.ok || !isJsonObject(json.value)) {
    throw new BadUpstreamResponseError(
      `The target did not answer like an ERP on /jsonrpc (${describeAnswer(response)}). Check erp_instance.url.`,
    );
  }
  const answer = json.value;
  if (isJsonObject(answer.error)) {
    const data = isJsonObject(answer.error.data) ? answer.error.data : null;
    // Odoo's top-level message is always "Odoo Server Error"; the useful text is in data.message.
    const message =
      (data && typeof data.message === 'string' && data.message) ||
      (typeof answer.error.message === 'string' ? answer.error.message : 'ERP error');
    return { kind: 'erp_error', code: 0, message, data: scrubErrorData(data, context.stripDebug) };
  }
  if ('error' in answer && answer.error !== null && answer.error !== undefined) {
    throw new BadUpstreamResponseError('The ERP answered /jsonrpc with an error that is not an object.');
  }
  // A method that returned None gives an envelope with neither result nor error.
  return { kind: 'result', value: 'result' in answer ? answer.result : null };
}

export class JsonRpcTransport implements ErpTransport {
  constructor(private readonly client: HttpClient) {}

  call(call: ErpCall, context: CallContext): Promise<ProxyOutcome> {
    return callJsonRpc(this.client, context, call.baseUrl, 'object', 'execute_kw', [
      call.db,
      call.uid,
      call.apiKey,
      call.model,
      call.method,
      call.args ?? [],
      call.kwargs,
    ]);
  }
}
