/**
 * @module upstream/json2-transport
 * v2: `POST {url}/json/2/<model>/<method>` (README, "Calling the proxy"; docs/design.md).
 * The model and method were validated as identifiers before (-32007), so the path is safe.
 */
import { echoed } from '../platform/bounded-text.ts';
import { BadUpstreamResponseError, Json2UnavailableError } from '../platform/errors.ts';
import { isJsonObject, scanJson } from '../platform/json.ts';
import {
  type CallContext,
  classifyGatewayAnswer,
  describeAnswer,
  type ErpCall,
  type ErpOutcome,
  type ErpTransport,
  parseJsonBody,
  scrubErrorData,
  sendExchange,
  unusableAnswer,
  upstreamUrl,
} from './erp-transport.ts';
import type { HttpClient } from './http-client.ts';

/** Odoo 19's page when no database could be selected (`NOT_FOUND_NODB`). */
const NO_DATABASE_SELECTED = /No database is selected/i;

export class Json2Transport implements ErpTransport {
  constructor(private readonly client: HttpClient) {}

  async call(call: ErpCall, context: CallContext): Promise<ErpOutcome> {
    context.state.upstreamProtocol = 'json2';
    const response = await sendExchange(this.client, context, {
      method: 'POST',
      url: upstreamUrl(call.baseUrl, `/json/2/${call.model}/${call.method}`),
      headers: {
        authorization: `bearer ${call.apiKey}`,
        'x-odoo-database': call.db,
        'content-type': 'application/json; charset=utf-8',
      },
      body: call.kwargsJson,
    });

    if (response.status === 200) {
      // The body is the result: validated, then passed on as it came (never parsed).
      const scan = scanJson(response.body);
      if (!scan.ok) throw unusableAnswer(response, scan.reason, '/json/2');
      return { kind: 'raw_result', json: response.body };
    }

    const json = parseJsonBody(response);

    const gateway = classifyGatewayAnswer(response);
    if (gateway) throw gateway;

    // An ERP error is a 4xx or 5xx with a JSON object (or, from early JSON-2 builds, a JSON
    // string); any other status (a 201, a 206, a 600 or 999 from something that is not HTTP-clean)
    // is not something the ERP answers: -32005, as the README says.
    if (
      response.status >= 400 &&
      response.status <= 599 &&
      json.ok &&
      (isJsonObject(json.value) || typeof json.value === 'string')
    ) {
      const body = json.value;
      const message =
        typeof body === 'string'
          ? body
          : typeof body.message === 'string'
            ? body.message
            : `ERP error (HTTP ${response.status})`;
      return {
        kind: 'erp_error',
        code: response.status,
        message,
        data: scrubErrorData(body, context.stripDebug),
      };
    }

    if (response.status === 404) {
      const text = response.body.subarray(0, 64 * 1024).toString('utf8');
      if (NO_DATABASE_SELECTED.test(text)) {
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
    throw new BadUpstreamResponseError(
      `The target did not answer like an ERP on /json/2 (${describeAnswer(response)}).`,
    );
  }
}
