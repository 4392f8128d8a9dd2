/**
 * @module erp-double/api-doc
 * The JSON documents of Odoo 19's `api_doc` module (`/doc-bearer/<model>.json` and
 * `/doc-bearer/index.json`; captures `doc-bearer-*`). For the models the real server was
 * captured on (res.partner, res.users, ir.attachment) the document is the captured one, word for
 * word; for the double's other models it is built from the double's own definitions, with the
 * method entries the real server gave for the same (BaseModel) methods.
 */
import { readFileSync } from 'node:fs';
import { MODELS, type ModelDef } from './models.ts';
import { fieldAttributes, METHODS } from './orm.ts';
import { isPlainObject, type JsonObject } from './py.ts';
import type { ErpMode } from './types.ts';
import { isTwentyOrLater } from './versions.ts';

/** Where the captured documents are: the copy of the real captures beside this file. */
const CAPTURES_DIR = new URL('./captures/', import.meta.url);

/** Models whose document the real server was captured answering (admin key, erp_a). */
const CAPTURED_DOCUMENTS: Readonly<Record<string, string>> = {
  'res.partner': 'doc-bearer-res.partner-admin.json',
  'res.users': 'doc-bearer-res.users-admin.json',
  'ir.attachment': 'doc-bearer-ir.attachment-admin.json',
};

/** The captured document whose BaseModel method entries the built documents reuse. */
const METHOD_SOURCE = 'res.partner';

/** `get_sorted_installed_modules()` of the captured server (doc-bearer-index-admin). */
export const INSTALLED_MODULES: readonly string[] = Object.freeze([
  'base',
  'rpc',
  'web',
  'api_doc',
  'auth_totp',
  'base_import',
  'base_import_module',
  'base_setup',
  'bus',
  'web_tour',
  'auth_passkey',
  'html_editor',
  'iap',
  'mail',
  'web_unsplash',
  'auth_signup',
  'auth_totp_mail',
  'base_install_request',
  'contacts',
  'google_gmail',
  'iap_mail',
  'mail_bot',
  'microsoft_outlook',
  'phone_validation',
  'privacy_lookup',
  'partner_autocomplete',
  'sms',
  'snailmail',
]);

/** Fields no module introduces (`_fields[name]._modules` is empty): `module` is null for them. */
const MAGIC_FIELDS: ReadonlySet<string> = new Set(['id', 'display_name']);

/** Parsed captured documents, read once (the res.partner one is about 150 kB). */
const captured = new Map<string, JsonObject>();

function capturedDocument(model: string): JsonObject | undefined {
  const file = CAPTURED_DOCUMENTS[model];
  if (file === undefined) return undefined;
  const cached = captured.get(model);
  if (cached) return cached;
  const capture: unknown = JSON.parse(readFileSync(new URL(file, CAPTURES_DIR), 'utf8'));
  const response = isPlainObject(capture) && isPlainObject(capture.response) ? capture.response : {};
  if (!isPlainObject(response.body)) throw new Error(`erp-double: ${file} has no document body`);
  captured.set(model, response.body);
  return response.body;
}

/** A document built from the double's definitions: its fields and the methods it can run. */
function builtDocument(def: ModelDef): JsonObject {
  const source = capturedDocument(METHOD_SOURCE)?.methods;
  const entries = isPlainObject(source) ? source : {};
  const fields: JsonObject = {};
  for (const [name, field] of Object.entries(def.fields)) {
    fields[name] = {
      ...fieldAttributes(name, field),
      module: MAGIC_FIELDS.has(name) ? null : (def.module ?? 'base'),
    };
  }
  // `dir(Model)` order, and only documented methods: read_group is @api.deprecated, so it has no
  // entry in the captured documents and stays out here too.
  const methods: JsonObject = {};
  for (const name of Object.keys(METHODS).sort()) {
    const entry = entries[name];
    if (isPlainObject(entry)) methods[name] = entry;
  }
  return { model: def.name, name: def.description, doc: null, fields, methods };
}

/**
 * On 20+, `read_group` is public and no longer deprecated (odoo/odoo#236332; versions.ts), so it
 * is documented (an assumption): formatted_read_group's entry (the same parameters), answering
 * tuples. The methods stay in `dir(Model)` order.
 */
function withReadGroup20(document: JsonObject): JsonObject {
  const methods = isPlainObject(document.methods) ? document.methods : {};
  const formatted = methods.formatted_read_group;
  if (!isPlainObject(formatted)) return document;
  const signature = typeof formatted.signature === 'string' ? formatted.signature : '';
  const entry = { ...formatted, signature: signature.replace(/->.*$/, '-> list[tuple]') };
  const names = [...Object.keys(methods), 'read_group'].sort();
  return {
    ...document,
    methods: Object.fromEntries(names.map((name) => [name, name === 'read_group' ? entry : methods[name]])),
  };
}

/** The `/doc-bearer/<model>.json` document of a model of the double, as Odoo `mode` writes it. */
export function modelDocument(def: ModelDef, mode: ErpMode = '19'): JsonObject {
  const document = capturedDocument(def.name) ?? builtDocument(def);
  return isTwentyOrLater(mode) ? withReadGroup20(document) : document;
}

/** One model of the index: field strings and method names, taken from its document. */
function indexEntry(document: JsonObject): JsonObject {
  const fields = isPlainObject(document.fields) ? document.fields : {};
  const methods = isPlainObject(document.methods) ? document.methods : {};
  return {
    model: document.model,
    name: document.name,
    fields: Object.fromEntries(
      Object.entries(fields).map(([name, field]) => [
        name,
        { string: isPlainObject(field) ? field.string : name },
      ]),
    ),
    methods: Object.keys(methods),
  };
}

/**
 * The `/doc-bearer/index.json` document: the installed modules and every model `canRead` lets
 * through (`has_access('read')`, so bus.bus is absent for the admin), each as in its own document.
 */
export function indexDocument(canRead: (def: ModelDef) => boolean, mode: ErpMode = '19'): JsonObject {
  return {
    modules: [...INSTALLED_MODULES],
    models: MODELS.filter(canRead).map((def) => indexEntry(modelDocument(def, mode))),
  };
}
