/**
 * @module core/policy/erp-fields
 * The `fields_get` port of the field rule for one ERP call: the call's own ERP, database and ERP
 * key, through the call's transport, within its time budget, kept per target, database, model and
 * ERP version (core/policy/fields-lookup.ts). The proxy's own lookup: never counted as a call.
 */
import type { CallContext, ErpCall, ErpTransport } from '../../upstream/erp-transport.ts';
import type { FieldsOf } from './field-rule.ts';
import { cachedFieldsOf } from './fields-lookup.ts';

/** What the lookup asks of each field. */
export const FIELDS_GET_KWARGS = '{"attributes":["type","relation","related"]}';

/**
 * A {@link FieldsOf} asking `call`'s ERP. `version` is the ERP's version when known (a cache key
 * part: an upgrade changes the fields), else the transport's. An ERP error (a model the user may not read) answers no
 * field, so the rule refuses the path it cannot follow; that answer is not kept.
 */
export function erpFieldsOf(
  transport: ErpTransport,
  call: ErpCall,
  context: CallContext,
  version: string | undefined = transport.knownVersion?.(call.baseUrl),
): FieldsOf {
  const { baseUrl, db, apiKey, uid } = call;
  return cachedFieldsOf(`${baseUrl.href}\n${db}\n${version ?? '-'}`, async (model) => {
    const outcome = await transport.call(
      {
        baseUrl,
        db,
        apiKey,
        ...(uid === undefined ? {} : { uid }),
        standardAction: true,
        model,
        method: 'fields_get',
        ...(call.argsJson === undefined ? {} : { argsJson: '[]' }),
        kwargsJson: FIELDS_GET_KWARGS,
      },
      context,
    );
    if (outcome.kind === 'erp_error') return undefined;
    return outcome.kind === 'result' ? outcome.value : JSON.parse(outcome.json.toString('utf8'));
  });
}
