/**
 * @module core/policy/call-writes
 * Whether a call can write, read from its method and, where the method alone does not tell, its
 * arguments: a method outside the read list (platform/key-policy.ts `READ_METHODS`) writes, and so
 * does `export_data`, on the list, when a column asks for external ids (Odoo then creates the
 * missing `ir.model.data` rows: core/policy/odoo-arguments.ts `exportWrites`). The one predicate of
 * the `access` rule, the idempotency records and the confirmation of execute calls.
 */
import { isReadMethod } from '../../platform/key-policy.ts';
import { isLosslessObject, type LosslessValue, parseLossless } from '../../platform/lossless-json.ts';
import { CALL_SHAPES, callArguments } from './call-shapes.ts';
import { exportWrites } from './odoo-arguments.ts';

/** A call as the predicate reads it: its method, and its arguments as JSON texts (v1's positional ones too). */
export interface WriteQuestion {
  readonly method: string;
  readonly argsJson?: string | undefined;
  readonly kwargsJson?: string | undefined;
}

function parsed(json: string | undefined): LosslessValue | undefined {
  return json === undefined ? undefined : parseLossless(json);
}

/**
 * Whether `call` can write. Only an `export_data` call has its arguments read (parsed once, only
 * then): every other read method answers from its name alone.
 *
 * @example
 * callWrites({ method: 'export_data', kwargsJson: '{"ids":[1],"fields_to_export":["name"]}' }) // false
 * callWrites({ method: 'export_data', kwargsJson: '{"ids":[1],"fields_to_export":["partner_id:id"]}' }) // true
 */
export function callWrites(call: WriteQuestion): boolean {
  if (!isReadMethod(call.method)) return true;
  if (call.method !== 'export_data') return false;
  const args = parsed(call.argsJson);
  const kwargs = parsed(call.kwargsJson);
  const shape = CALL_SHAPES.get('export_data');
  if (shape === undefined) return true;
  return callArguments(
    shape,
    Array.isArray(args) ? args : undefined,
    isLosslessObject(kwargs) ? kwargs : undefined,
  ).some(({ value }) => exportWrites(value));
}
