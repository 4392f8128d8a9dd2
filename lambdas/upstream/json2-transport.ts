/**
 * @module upstream/json2-transport
 * v2: `POST {url}/json/2/<model>/<method>` (README, "Calling the proxy"; docs/design.md).
 * The path is built by `json2Path` from names of the one grammar, each segment encoded (a name off
 * the grammar is -32007 there, whatever route brought it: upstream/erp-paths.ts).
 */
import { echoed } from '../platform/bounded-text.ts';
import { Json2UnavailableError } from '../platform/errors.ts';
import { readJson2Answer } from './erp-answer.ts';
import { json2Path } from './erp-paths.ts';
import {
  type CallContext,
  describeAnswer,
  type ErpCall,
  type ErpOutcome,
  type ErpTransport,
  scrubErrorData,
  sendExchange,
  upstreamUrl,
} from './erp-transport.ts';
import type { HttpClient } from './http-client.ts';
import { withoutInfrastructure } from './infrastructure-text.ts';

export class Json2Transport implements ErpTransport {
  constructor(private readonly client: HttpClient) {}

  async call(call: ErpCall, context: CallContext): Promise<ErpOutcome> {
    context.meter.servedBy('json2');
    const response = await sendExchange(this.client, context, {
      method: 'POST',
      url: upstreamUrl(call.baseUrl, json2Path(call.model, call.method)),
      headers: {
        authorization: `bearer ${call.apiKey}`,
        'x-odoo-database': call.db,
        'content-type': 'application/json; charset=utf-8',
      },
      body: call.kwargsJson,
    });

    // What counts as the ERP's answer, and what is -32005 or -32006: erp-answer.ts.
    const answer = readJson2Answer(response);
    if (answer.kind === 'result') return { kind: 'raw_result', json: answer.json };
    if (answer.kind === 'error') {
      return {
        kind: 'erp_error',
        code: answer.status,
        message: withoutInfrastructure(answer.body.message),
        data: scrubErrorData(answer.body, context.stripDebug),
      };
    }
    if (answer.noDatabase) {
      throw new Json2UnavailableError(
        `v2 is unavailable on this target: the ERP could not select database "${echoed(call.db)}" ` +
          '(it does not exist, or the server picks the database by hostname). This is a database or hostname ' +
          "problem: check erp_instance.db, and on a multi-tenant host use the database's own hostname as erp_instance.url.",
        'no_database',
      );
    }
    throw new Json2UnavailableError(
      `v2 is unavailable on this target: /json/2 answered ${describeAnswer(response)}. ` +
        'The ERP is older than 19 (use v1) or the database could not be selected.',
    );
  }
}
