/**
 * @module core/policy/erp-fields
 * The `fields_get` port of the field rule for one ERP call: the call's own ERP, database and ERP
 * key, through the call's transport, within its time budget, kept per target, database, ERP user
 * (a hash of the key), model and ERP version (core/policy/fields-lookup.ts). The proxy's own lookup: never counted as a call.
 */
import { createHash } from 'node:crypto';
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
  // Per ERP user too: fields_get hides the fields of groups the user lacks (a hash, never the key).
  const user = createHash('sha256').update(apiKey).digest('base64url').slice(0, 22);
  return cachedFieldsOf(`${baseUrl.href}\n${db}\n${version ?? '-'}\n${user}`, async (model) => {
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
