/**
 * @module upstream/jsonrpc-transport
 * v1: `POST {url}/jsonrpc` with `execute_kw` (README, "Calling the proxy"; docs/design.md).
 */

import { readJsonRpcAnswer } from './erp-answer.ts';
import {
  type CallContext,
  databaseHeader,
  type ErpCall,
  type ErpOutcome,
  type ErpTransport,
  scrubErrorData,
  sendExchange,
  upstreamUrl,
} from './erp-transport.ts';
import type { HttpClient } from './http-client.ts';
import { withoutInfrastructure } from './infrastructure-text.ts';

let nextRpcId = 1;

/**
 * Calls `service.method(*args)` over `/jsonrpc` and maps the answer (what counts as the ERP's:
 * `erp-answer.ts`). ERP errors come back as HTTP 200 with `error.code` 200 (Odoo 16-18) or 0
 * (19+): both become code 0 here.
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

  const answer = readJsonRpcAnswer(response, id);
  if (answer.kind === 'none') return { kind: 'result', value: null };
  if (answer.kind === 'result') return { kind: 'raw_result', json: answer.json };
  const { error } = answer;
  const data = scrubErrorData(answer.data, context.stripDebug) as Record<string, unknown>;
  // Odoo's top-level message is always "Odoo Server Error"; the useful text is in data.message.
  const message =
    (typeof data.message === 'string' && data.message) ||
    (typeof error.message === 'string' ? withoutInfrastructure(error.message) : 'ERP error');
  return { kind: 'erp_error', code: 0, message, data };
}

export class JsonRpcTransport implements ErpTransport {
  constructor(private readonly client: HttpClient) {}

  call(call: ErpCall, context: CallContext): Promise<ErpOutcome> {
    context.meter.servedBy('jsonrpc');
    // execute_kw(db, uid, key, model, method, args, kwargs); args and kwargs as the client wrote them.
    const fixed = JSON.stringify([call.db, call.uid, call.apiKey, call.model, call.method]).slice(0, -1);
    const argsJson = `${fixed},${call.argsJson ?? '[]'},${call.kwargsJson}]`;
    return callJsonRpc(this.client, context, call.baseUrl, 'object', 'execute_kw', argsJson, call.db);
  }
}
