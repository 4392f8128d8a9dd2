/**
 * @module core/mcp/display-names
 * What the confirmation form reads of the ERP (core/confirm/form.ts): the model's display name
 * (`ir.model`'s `name`) and the records' display names (`read` of `display_name`, for the first
 * {@link MAX_LISTED_RECORDS} ids). They are the proxy's own lookups (`ErpAccess.lookup`), never
 * one of the tool's requests, and the key's (or identity's) policy checks them as it checks a
 * request: never sent to a model or a database the key may not read, never asking for a field its
 * `fields` rule denies; a read it refuses, or that the ERP
 * fails, leaves its name out (the form then shows the technical name, or the id alone) rather than
 * keeping the person from being asked.
 */
import { type FormFacts, MAX_LISTED_RECORDS, recordIds } from '../confirm/form.ts';
import type { ErpAccess } from './erp-access.ts';

/** The model's display name, when the ERP tells it. */
async function modelName(erp: ErpAccess, model: string): Promise<string | undefined> {
  try {
    const { value } = await erp.lookup('ir.model', 'search_read', {
      domain: [['model', '=', model]],
      fields: ['name'],
      limit: 1,
    });
    const name = Array.isArray(value) ? (value[0] as { name?: unknown } | undefined)?.name : undefined;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

/** The records' display names by id, those the ERP tells. */
async function recordNames(
  erp: ErpAccess,
  model: string,
  ids: readonly number[],
): Promise<Map<number, string>> {
  const names = new Map<number, string>();
  if (ids.length === 0) return names;
  try {
    const { value } = await erp.lookup(model, 'read', {
      ids: ids.slice(0, MAX_LISTED_RECORDS),
      fields: ['display_name'],
    });
    if (!Array.isArray(value)) return names;
    for (const record of value as { id?: unknown; display_name?: unknown }[]) {
      if (typeof record?.id === 'number' && typeof record.display_name === 'string')
        names.set(record.id, record.display_name);
    }
  } catch {
    // Left out: the form shows the ids alone.
  }
  return names;
}

/** The form's facts for a call of `tool` with `args`, on the ERP `erpUrl` and database `db`. */
export async function readFormFacts(
  erp: ErpAccess,
  call: { readonly tool: string; readonly args: Readonly<Record<string, unknown>> },
  where: { readonly erpUrl: string; readonly db: string },
): Promise<FormFacts> {
  const model = typeof call.args.model === 'string' ? call.args.model : '';
  const [name, names] = await Promise.all([
    modelName(erp, model),
    recordNames(erp, model, recordIds(call.args)),
  ]);
  return { tool: call.tool, args: call.args, ...where, modelName: name, recordNames: names };
}
