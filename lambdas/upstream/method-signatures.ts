/**
 * @module upstream/method-signatures
 * What the protocol bridge needs to know about an ERP method to move its arguments between
 * positional (`/jsonrpc` execute_kw) and named (JSON-2) form: whether it is a model method (no
 * ids) and its parameters in declaration order. Read from the ERP's own method documentation
 * (`GET /doc-bearer/<model>.json`, Odoo 19's `api_doc`), or from the built-in table below for
 * the methods every model has (README, "One envelope for every ERP version").
 */
import { isJsonObject } from '../platform/json.ts';

/** How a Python parameter can be passed (`inspect.Parameter.kind`). */
export type ParamKind =
  | 'POSITIONAL_ONLY'
  | 'POSITIONAL_OR_KEYWORD'
  | 'VAR_POSITIONAL'
  | 'KEYWORD_ONLY'
  | 'VAR_KEYWORD';

export interface ParamSpec {
  readonly name: string;
  readonly kind: ParamKind;
}

export interface MethodSignature {
  /** `@api.model`: called without ids. Otherwise a record method: v1's `params[0]` is the ids. */
  readonly model: boolean;
  /** Parameters after `self`, in declaration order. */
  readonly params: readonly ParamSpec[];
}

const positional = (...names: string[]): ParamSpec[] =>
  names.map((name) => ({ name, kind: 'POSITIONAL_OR_KEYWORD' }));

/**
 * The methods every ERP model has, as Odoo 16-19 declare them on `BaseModel` (and, for
 * `read_group` and `toggle_active`, as Odoo 19 still accepts them although its documentation
 * leaves deprecated methods out). The v1 actions use these without asking the ERP. ERP 20 and
 * later differ in two ({@link builtInSignature}).
 */
export const BUILT_IN_SIGNATURES: ReadonlyMap<string, MethodSignature> = new Map<string, MethodSignature>([
  ['search_count', { model: true, params: positional('domain', 'limit') }],
  ['search', { model: true, params: positional('domain', 'offset', 'limit', 'order') }],
  ['read', { model: false, params: positional('fields', 'load') }],
  ['fields_get', { model: true, params: positional('allfields', 'attributes') }],
  [
    'search_read',
    {
      model: true,
      params: [
        ...positional('domain', 'fields', 'offset', 'limit', 'order'),
        { name: 'read_kwargs', kind: 'VAR_KEYWORD' },
      ],
    },
  ],
  ['create', { model: true, params: positional('vals_list') }],
  ['write', { model: false, params: positional('vals') }],
  ['unlink', { model: false, params: [] }],
  ['name_search', { model: true, params: positional('name', 'domain', 'operator', 'limit') }],
  ['copy', { model: false, params: positional('default') }],
  ['action_archive', { model: false, params: [] }],
  ['action_unarchive', { model: false, params: [] }],
  [
    'read_group',
    { model: true, params: positional('domain', 'fields', 'groupby', 'offset', 'limit', 'orderby', 'lazy') },
  ],
  ['toggle_active', { model: false, params: [] }],
]);

/** The first ERP version with read_group's new form and without toggle_active (README, "ERP 20 and 21"). */
export const FIRST_ERP20_MAJOR = 20;

/**
 * `read_group` from ERP 20 on (Odoo 19.5, odoo/odoo#236332): `@api.model`, answering one list per
 * group; the 16-19 form (`fields`, `orderby`, `lazy`) was removed in 19.1 (odoo/odoo#226523).
 */
export const READ_GROUP_20: MethodSignature = {
  model: true,
  params: positional('domain', 'groupby', 'aggregates', 'having', 'offset', 'limit', 'order'),
};

/**
 * The built-in signature of `method` on an ERP of major version `major` (`undefined`: not known,
 * read as 16-19): {@link BUILT_IN_SIGNATURES}, except on ERP 20 and later `read_group`'s new form
 * and no `toggle_active` (removed, a peer reports; deprecated since Odoo 18.1, odoo/odoo#183691).
 */
export function builtInSignature(method: string, major: number | undefined): MethodSignature | undefined {
  if (major !== undefined && major >= FIRST_ERP20_MAJOR) {
    if (method === 'read_group') return READ_GROUP_20;
    if (method === 'toggle_active') return undefined;
  }
  return BUILT_IN_SIGNATURES.get(method);
}

const PARAM_KINDS: ReadonlySet<string> = new Set([
  'POSITIONAL_ONLY',
  'POSITIONAL_OR_KEYWORD',
  'VAR_POSITIONAL',
  'KEYWORD_ONLY',
  'VAR_KEYWORD',
]);

/**
 * The signatures of a `/doc-bearer/<model>.json` document (doc-bearer notes, section 2): each
 * method's `parameters` in order (a missing `kind` is `POSITIONAL_OR_KEYWORD`), and `api`
 * containing `model` for model methods. Entries that do not have that shape are left out, so a
 * method the proxy cannot read is treated as undocumented. `undefined` when the document itself
 * is not one.
 */
export function signaturesFromDoc(doc: unknown): Map<string, MethodSignature> | undefined {
  if (!isJsonObject(doc) || !isJsonObject(doc.methods)) return undefined;
  const signatures = new Map<string, MethodSignature>();
  for (const [name, entry] of Object.entries(doc.methods)) {
    if (!isJsonObject(entry) || !isJsonObject(entry.parameters)) continue;
    const params: ParamSpec[] = [];
    let readable = true;
    for (const [paramName, param] of Object.entries(entry.parameters)) {
      const kind = isJsonObject(param) && param.kind !== undefined ? param.kind : 'POSITIONAL_OR_KEYWORD';
      if (!isJsonObject(param) || typeof kind !== 'string' || !PARAM_KINDS.has(kind)) {
        readable = false;
        break;
      }
      params.push({ name: paramName, kind: kind as ParamKind });
    }
    if (!readable) continue;
    const api = Array.isArray(entry.api) ? entry.api : [];
    signatures.set(name, { model: api.includes('model'), params });
  }
  return signatures;
}
