/**
 * @module platform/key-policy
 * A proxy key's own policy (least privilege; README, "Key policies"): what a key entry's `policy`
 * may say, its schema (zod/mini, as the rest of the proxy-keys document), the one list of read
 * methods, and the policy compiled once at load into what a call is checked against. The check
 * itself is `core/key-policy-check.ts`'s, made once per call.
 *
 * Every field is optional; an absent one narrows nothing:
 *
 * - `apis`: any of `v1`, `v2`, `version`, `mcp`, `operator` (`/_/license` and `/_/metrics` when
 *   they require a key);
 * - `access`: `read` (only the methods of {@link READ_METHODS}) or `write` (the default);
 * - `models`: exact model names, or `prefix.*` (any model whose name starts with `prefix.`);
 * - `targets`: the syntax of `ERP_ALLOWED_TARGETS` (host names, `*.` wildcards, CIDRs), narrowing
 *   the proxy's target policy, never widening it;
 * - `databases`: exact database names, narrowing `ERP_ALLOWED_DATABASES`;
 * - `limits`: rate limits, `[{"requests": N, "per": "second" | "minute" | "hour" | "day"}]`, all
 *   of which must hold (platform/limits.ts); a budget per key name, per person for an OAuth
 *   identity (README, "Limits");
 * - `confirm`: `"writes"` (every MCP write tool) or a list of write tool names whose calls a person
 *   confirms through the MCP client first (docs/guide/confirmations.md). Which names are write tools, and
 *   that the policy can write through `/mcp` at all, core/confirm/policy.ts checks at load.
 * - `methods`: a map from model (exact, `prefix.*` or `*`; platform/model-rules.ts) to the methods
 *   allowed on it;
 * - `fields`: a map (same keys) to `{"deny": [field names]}` or `{"allow": [field names]}` (only
 *   these fields, and `id`, are served: the fail-closed choice for personal data);
 * - `companies`: a map from database name to the company ids its calls run with
 *   (docs/guide/policies.md, "Methods, fields and companies"; the engine is core/policy/).
 *
 * A field or value the schema does not know fails the whole document (fail closed), with a message
 * naming the key's `name` and the field, never the key.
 */
import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import { canonicalJsonOf } from './canonical-json.ts';
import { METHOD_NAME, MODEL_NAME } from './erp-names.ts';
import { type RateLimit, rateLimitListSchema } from './limits.ts';
import { compileModelRules, MODEL_RULE_KEY, type ModelRules } from './model-rules.ts';
import { parseTargetList, type TargetList } from './target-list.ts';
import { lazily } from './zod.ts';

/** The APIs a key policy names (README, "Key policies"). */
export const KEY_POLICY_APIS = Object.freeze([
  'v1',
  'v2',
  'version',
  'mcp',
  'operator',
  'audit',
  'brakes',
] as const);
export type KeyPolicyApi = (typeof KEY_POLICY_APIS)[number];

/**
 * The APIs only a key whose policy's `apis` lists them may use: they show (or stop) every caller's
 * activity, so a key without a policy, or with a policy that leaves `apis` out, never has them.
 */
export const PRIVILEGED_APIS: ReadonlySet<KeyPolicyApi> = new Set<KeyPolicyApi>(['audit', 'brakes']);

/** What a key policy allows of the ERP data. */
export const KEY_POLICY_ACCESS = Object.freeze(['read', 'write'] as const);
export type KeyPolicyAccess = (typeof KEY_POLICY_ACCESS)[number];

/** Which rule of a key's policy refused a call: a log field and a metric dimension (few values). */
export const KEY_POLICY_RULES = Object.freeze([
  'api',
  'access',
  'model',
  'method',
  'target',
  'database',
  'field',
  'company',
  'confirm',
] as const);
export type KeyPolicyRule = (typeof KEY_POLICY_RULES)[number];

/**
 * The methods a `read` key may call, on every API (v1 actions and `call_method`'s `fn_name`, v2
 * methods, every MCP tool's ERP calls): the public methods Odoo 16 to 19 define on every model
 * that only read. Re-checked against the 16, 17, 18 and 19 sources (issue 54: `odoo/models.py`,
 * 19's `odoo/orm/models.py`, `addons/web/models/models.py`, `addons/base/models/ir_ui_view.py`);
 * each entry says why it is here, and where a version lacks it (that ERP then refuses the call as it
 * would anyway; 19 made `search_fetch`, `exists` and `check_access` private). Any other name is a
 * write, an unknown one included: a model's own methods (`action_confirm`, `message_post`...) can
 * change data, and `onchange`, `name_create`, `copy_data`, `web_resequence`, `load` (an import),
 * `update` (a `write()`, public on 16-18) and `web_save` are left out on purpose. Compared exactly:
 * the ERP's method names are case-sensitive, and the name compared is the one sent to the ERP.
 *
 * One entry writes with some arguments: `export_data` asking for external ids (a column with an
 * `id` segment) creates the missing `ir.model.data` rows; core/policy/call-writes.ts counts such a
 * call as a write. Known overrides that write on a read (iap.account's `get_views` on 17, its
 * `web_read` on 18-19, storing what IAP answers) are a model's own, listed in docs/guide/policies.md.
 */
export const READ_METHODS: readonly string[] = Object.freeze([
  // Searching and reading records: BaseModel's search and read paths, no write in 16-19.
  'search',
  'search_read',
  'search_count',
  'search_fetch', // 17-18 (private in 19): search, then fetch into the cache
  'read',
  'exists', // private in 19
  'name_search', // display names computed under sudo() with the caller's context (policies guide)
  'name_get', // 16-17 (gone in 18)
  'read_group', // 16-19 (deprecated in 19): SQL GROUP BY
  'formatted_read_group', // 19: read_group's successor
  'formatted_read_grouping_sets', // 19
  'get_metadata', // reads ir.model.data with sudo: xmlids, create/write users and dates
  'export_data', // writes ir.model.data rows for an `id` column: a write then (call-writes.ts)
  'get_field_translations',
  // Describing the model.
  'fields_get', // field descriptions, filtered by field groups
  'default_get', // computes defaults, writes nothing (res.config.settings' reads ICP values with sudo)
  'check_access_rights', // 16-18 (deprecated in 19)
  'check_access', // 18 (private in 19)
  'has_access', // 18+
  'check_field_access_rights',
  'get_views', // 16+ (ir_ui_view.py): arch and fields of views
  'get_view',
  'fields_view_get', // 16 (deprecated there, gone in 17)
  'load_views', // 16 (deprecated there, gone in 17)
  // The web client's read methods (addons/web): they search and read, no write in base or web.
  'web_search_read',
  'web_read', // 17+
  'web_read_group',
  'web_name_search', // 19
  'read_progress_bar',
  'search_panel_select_range',
  'search_panel_select_multi_range',
]);

const READ_METHOD_SET: ReadonlySet<string> = new Set(READ_METHODS);

/** Whether `method`, exactly as it is sent to the ERP, is on the read list. */
export function isReadMethod(method: string): boolean {
  return READ_METHOD_SET.has(method);
}

/** A key policy, compiled once at load. */
export interface KeyPolicy {
  /** `undefined`: every API. */
  readonly apis: ReadonlySet<KeyPolicyApi> | undefined;
  readonly access: KeyPolicyAccess;
  /** `undefined`: every model. */
  readonly models: ModelList | undefined;
  /** `undefined`: every target the proxy's target policy allows. */
  readonly targets: TargetList | undefined;
  /** `undefined`: every database `ERP_ALLOWED_DATABASES` allows. */
  readonly databases: ReadonlySet<string> | undefined;
  /** Rate limits, all of which must hold; `undefined`: none (README, "Limits"). */
  readonly limits: readonly RateLimit[] | undefined;
  /** The write tools a person confirms (`"writes"`: every one); `undefined`: none (docs/guide/confirmations.md). */
  readonly confirm: ConfirmPolicy | undefined;
  /** The methods allowed per model; `undefined`: every method `access` allows. */
  readonly methods: ModelRules<ReadonlySet<string>> | undefined;
  /** The fields denied (or the only ones allowed) per model; `undefined`: none. */
  readonly fields: ModelRules<FieldRule> | undefined;
  /** The company ids per database, the first one Odoo's current company; `undefined`: no company rule. */
  readonly companies: ReadonlyMap<string, readonly number[]> | undefined;
  /** A SHA-256 of the policy's canonical JSON (an audit record names the policy that ruled by it). */
  readonly digest?: string;
}

/** Whether `policy` has a rule of the call's own content (`methods`, `fields`, `companies`). */
export function hasCallRules(policy: KeyPolicy | undefined): policy is KeyPolicy {
  return (
    policy !== undefined &&
    (policy.methods !== undefined || policy.fields !== undefined || policy.companies !== undefined)
  );
}

/**
 * One model's `fields` rule: the fields it denies (`allow: false`), or the only fields it serves
 * (`allow: true`; `id` is always served).
 */
export interface FieldRule {
  readonly allow: boolean;
  readonly names: ReadonlySet<string>;
}

/** Whether `rule` denies `field` (`undefined`: no rule, nothing denied). */
export function fieldDenied(rule: FieldRule | undefined, field: string): boolean {
  if (rule === undefined) return false;
  return rule.allow ? field !== 'id' && !rule.names.has(field) : rule.names.has(field);
}

/** A policy's `confirm`: every write tool, or these tool names. */
export type ConfirmPolicy = 'writes' | ReadonlySet<string>;

/** The `models` entries: exact names, and the prefixes of `prefix.*` globs (with their dot). */
export interface ModelList {
  readonly exact: ReadonlySet<string>;
  readonly prefixes: readonly string[];
}

/**
 * Whether `model`, exactly as it is sent to the ERP, is in `list`: an exact entry equals it, or it
 * is a valid model name that starts with a glob's `prefix.` (so `sale.*` never matches
 * `sale.order/../res.users`, `sale.order\u0000` or ` sale.order`).
 */
export function modelListed(list: ModelList, model: string): boolean {
  if (list.exact.has(model)) return true;
  return (
    list.prefixes.some((prefix) => model.length > prefix.length && model.startsWith(prefix)) &&
    MODEL_NAME.test(model)
  );
}

/**
 * An Odoo domain on `ir.model` that matches exactly the models of `list` (for `list_models`):
 * `model in [...]` for the exact names, `model =like 'prefix.%'` for each glob, with `%`, `_` and
 * `\` escaped (in SQL's LIKE, `_` matches any character).
 */
export function modelListDomain(list: ModelList): unknown[] {
  const leaves: unknown[] = [];
  if (list.exact.size > 0) leaves.push(['model', 'in', [...list.exact]]);
  for (const prefix of list.prefixes) {
    leaves.push(['model', '=like', `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`]);
  }
  return [...Array.from({ length: leaves.length - 1 }, () => '|'), ...leaves];
}

/**
 * The message of a strict object's problem: an unknown field (named when its name looks like a
 * field name: a misplaced secret is never echoed), or a value that is no object.
 */
export function strictObjectError(notAnObject: (issue: z.core.$ZodRawIssue) => string) {
  return (issue: z.core.$ZodRawIssue): string => {
    if (issue.code !== 'unrecognized_keys') return notAnObject(issue);
    const keys = (issue as { keys?: unknown }).keys;
    const names = Array.isArray(keys) ? keys.map(String) : [];
    const shown = names.every((name) => /^[A-Za-z_][A-Za-z0-9_]{0,31}$/.test(name));
    return shown && names.length > 0
      ? `unknown field${names.length > 1 ? 's' : ''} ${names.map((name) => JSON.stringify(name)).join(', ')}`
      : 'an unknown field';
  };
}

/** A `models` entry: a model name, or `prefix.*`. */
const MODEL_ENTRY = /^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*(?:\.\*)?$/;

function nonEmptyList<T extends z.ZodMiniType>(item: T, what: string) {
  return z
    .array(item, { error: 'expected a list' })
    .check(z.minLength(1, `an empty list allows no ${what}; leave the field out to allow every ${what}`));
}

/** A `targets` entry the target list's own parser accepts (the message is the parser's). */
const targetEntry = () =>
  z.string({ error: 'expected a string' }).check(
    z.refine((entry) => {
      try {
        parseTargetList([entry]);
        return true;
      } catch {
        return false;
      }
    }, 'not a host name (erp.example.com), a wildcard (*.example.com) or a CIDR (10.0.0.0/8); URLs and ports are not entries'),
  );

/** A field name as Odoo spells one (`bank_ids`, `x_studio_wage`). */
export const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A map keyed by model (exact, `prefix.*`, `*`): at least one key, each of that shape. */
function modelKeyedMap<T extends z.ZodMiniType>(value: T, what: string) {
  return z
    .record(z.string().check(z.regex(MODEL_RULE_KEY)), value, {
      error: (issue) =>
        issue.code === 'invalid_key'
          ? 'expected a model name (res.partner), a prefix glob (sale.*) or * (every model) as a key'
          : 'expected an object keyed by model',
    })
    .check(
      z.refine((map) => Object.keys(map).length > 0, `an empty map sets no ${what}; leave the field out`),
    );
}

const FIELD_RULE_SHAPE = 'expected {"deny": [field names]} or {"allow": [field names]}';

const fieldNameList = (what: string) =>
  nonEmptyList(
    z.string({ error: 'expected a string' }).check(z.regex(FIELD_NAME, 'expected a field name (vat)')),
    what,
  );

/** The `methods`, `fields` and `companies` members of a policy's schema. */
const callRuleMembers = () => ({
  methods: z.optional(
    modelKeyedMap(
      nonEmptyList(
        z
          .string({ error: 'expected a string' })
          .check(z.regex(METHOD_NAME, 'expected a method name (write)')),
        'method',
      ),
      'method rule',
    ),
  ),
  fields: z.optional(
    modelKeyedMap(
      z
        .strictObject(
          {
            deny: z.optional(fieldNameList('denied field')),
            allow: z.optional(fieldNameList('allowed field')),
          },
          { error: strictObjectError(() => FIELD_RULE_SHAPE) },
        )
        .check(
          z.refine(
            (rule) => (rule.deny === undefined) !== (rule.allow === undefined),
            `${FIELD_RULE_SHAPE}: one of the two, not both`,
          ),
        ),
      'field rule',
    ),
  ),
  companies: z.optional(
    z
      .record(
        z.string().check(z.minLength(1, 'a database name is not empty')),
        nonEmptyList(
          z
            .number({ error: 'expected a company id (an integer)' })
            .check(z.int('expected a company id (an integer)'), z.positive('expected a positive company id')),
          'company',
        ),
        {
          error: (issue) =>
            issue.code === 'invalid_key'
              ? 'a database name is not empty'
              : 'expected an object keyed by database name',
        },
      )
      .check(
        z.refine(
          (map) => Object.keys(map).length > 0,
          'an empty map allows no database; leave the field out',
        ),
      ),
  ),
});

/**
 * The JSON form of a key's `policy`: a strict object (an unknown field fails), every field optional.
 * Built on its first use.
 */
export const keyPolicySchema = lazily(() =>
  z.strictObject(
    {
      apis: z.optional(
        nonEmptyList(
          z.enum(KEY_POLICY_APIS, { error: `expected one of ${KEY_POLICY_APIS.join(', ')}` }),
          'API',
        ),
      ),
      access: z.optional(z.enum(KEY_POLICY_ACCESS, { error: 'expected "read" or "write"' })),
      models: z.optional(
        nonEmptyList(
          z
            .string({ error: 'expected a string' })
            .check(z.regex(MODEL_ENTRY, 'expected a model name (res.partner) or a prefix glob (sale.*)')),
          'model',
        ),
      ),
      targets: z.optional(nonEmptyList(targetEntry(), 'target')),
      databases: z.optional(
        nonEmptyList(
          z.string({ error: 'expected a string' }).check(z.minLength(1, 'a database name is not empty')),
          'database',
        ),
      ),
      limits: z.optional(rateLimitListSchema()),
      confirm: z.optional(confirmSchema()),
      ...callRuleMembers(),
    },
    { error: strictObjectError(() => 'expected an object') },
  ),
);

/** `confirm`: `"writes"`, or a list of distinct tool names (which are write tools: core/confirm/policy.ts). */
const confirmSchema = () =>
  z.union(
    [
      z.literal('writes'),
      nonEmptyList(
        z
          .string({ error: 'expected a tool name' })
          .check(z.regex(/^[a-z_]{1,64}$/, 'expected a tool name such as "create" or "write"')),
        'tool',
      ).check(z.refine((names) => new Set(names).size === names.length, 'a tool is named twice')),
    ],
    { error: 'expected "writes" or a list of write tool names' },
  );

/** A key's policy as its schema reads it. */
export type KeyPolicyDocument = z.output<ReturnType<typeof keyPolicySchema>>;

/** Compiles a policy its schema read; every entry was already checked. */
export function compileKeyPolicy(document: KeyPolicyDocument): KeyPolicy {
  const models = document.models;
  return Object.freeze({
    apis: document.apis === undefined ? undefined : new Set(document.apis),
    access: document.access ?? 'write',
    models:
      models === undefined
        ? undefined
        : Object.freeze({
            exact: new Set(models.filter((entry) => !entry.endsWith('.*'))),
            prefixes: Object.freeze(
              models.filter((entry) => entry.endsWith('.*')).map((entry) => entry.slice(0, -1)),
            ),
          }),
    targets: document.targets === undefined ? undefined : parseTargetList(document.targets),
    databases: document.databases === undefined ? undefined : new Set(document.databases),
    limits:
      document.limits === undefined
        ? undefined
        : Object.freeze(document.limits.map((limit) => Object.freeze({ ...limit }))),
    confirm:
      document.confirm === undefined || document.confirm === 'writes'
        ? document.confirm
        : new Set(document.confirm),
    methods:
      document.methods === undefined
        ? undefined
        : compileModelRules(document.methods, (methods) => new Set(methods)),
    fields:
      document.fields === undefined
        ? undefined
        : compileModelRules(
            document.fields,
            (rule): FieldRule =>
              Object.freeze({ allow: rule.allow !== undefined, names: new Set(rule.allow ?? rule.deny) }),
          ),
    companies:
      document.companies === undefined
        ? undefined
        : new Map(
            Object.entries(document.companies).map(([db, ids]) => [db, Object.freeze([...new Set(ids)])]),
          ),
    digest: createHash('sha256').update(canonicalJsonOf(document), 'utf8').digest('base64url'),
  });
}
