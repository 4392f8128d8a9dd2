/**
 * Rules that hold against a hostile caller (issue 54; docs/guide/policies.md, "What each rule
 * reads"): the argument readers against Odoo's own rewrite (Python's `re.sub` run on the same
 * columns), the field rule's spellings Odoo reads that a plain split does not (`email.id`,
 * `email:id`, `email/anything`, `having` aggregates, quoted order names, 19's `default_get(fields)`),
 * `allow` rules, fields carried by a related path or delegation, and what the proxy cannot read
 * refused: context keys at any depth, values of methods the rules do not parse, `export_data`'s
 * external ids (a write, for the access rule too).
 */
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkKeyPolicy } from '../../lambdas/core/key-policy-check.ts';
import { filterOutcome } from '../../lambdas/core/policy/answer-filter.ts';
import { applyContentRules } from '../../lambdas/core/policy/call-rules.ts';
import { callWrites } from '../../lambdas/core/policy/call-writes.ts';
import {
  deniedFieldsOf,
  type FieldInfo,
  type FieldsOf,
  fieldRule,
} from '../../lambdas/core/policy/field-rule.ts';
import {
  exportColumnPath,
  exportFieldPath,
  exportWrites,
  orderFieldPaths,
  specAlias,
  specFieldPaths,
} from '../../lambdas/core/policy/odoo-arguments.ts';
import {
  checkReadable,
  checkToolContexts,
  READABLE_CONTEXT_KEYS,
} from '../../lambdas/core/policy/unreadable.ts';
import { parseProxyKeys } from '../../lambdas/platform/config.ts';
import { KeyPolicyRefusedError } from '../../lambdas/platform/errors.ts';
import type { KeyPolicy } from '../../lambdas/platform/key-policy.ts';
import { type LosslessValue, parseLossless } from '../../lambdas/platform/lossless-json.ts';
import type { ErpCall } from '../../lambdas/upstream/erp-transport.ts';

function policyOf(policy: unknown): KeyPolicy {
  const [entry] = parseProxyKeys(
    JSON.stringify({ keys: [{ name: 'k', key: 'key-0123456789abcdef', policy }] }),
  );
  if (entry?.policy === undefined) throw new Error('no policy parsed');
  return entry.policy;
}

/** A model's fields: `relation` for a relational one, `related` for one that reads another's, `{}` else. */
type Schema = Record<string, Record<string, FieldInfo>>;

const SCHEMA: Schema = {
  'res.partner': {
    id: {},
    name: {},
    email: {},
    phone: {},
    vat: {},
    display_name: {},
    create_date: {},
    parent_id: { relation: 'res.partner' },
    child_ids: { relation: 'res.partner' },
    country_id: { relation: 'res.country' },
    user_ids: { relation: 'res.users' },
    category_id: { relation: 'res.partner.category' },
    // res.partner's own related fields (Odoo: parent_name = parent_id.name, country_code = country_id.code).
    parent_name: { related: 'parent_id.name' },
    country_code: { related: 'country_id.code' },
    tz: {},
    lang: {},
    company_id: { relation: 'res.company' },
  },
  'res.users': {
    id: {},
    login: {},
    partner_id: { relation: 'res.partner' },
    // Odoo: fields.Char(related='partner_id.email', inherited=True); a delegated field, as fields_get says.
    email: { related: 'partner_id.email' },
    name: { related: 'partner_id.name' },
    display_name: {},
    tz: {},
    company_id: { relation: 'res.company' },
  },
  'res.company': {
    id: {},
    name: {},
    partner_id: { relation: 'res.partner' },
    email: { related: 'partner_id.email' },
  },
  'res.country': {
    id: {},
    name: {},
    code: {},
    create_uid: { relation: 'res.users' },
    write_uid: { relation: 'res.users' },
  },
  'res.partner.category': { id: {}, name: {}, partner_ids: { relation: 'res.partner' } },
  'ir.actions.server': { id: {}, name: {}, code: {} },
  'crm.lead': {
    id: {},
    name: {},
    partner_id: { relation: 'res.partner' },
    user_ids: { relation: 'res.users' },
  },
  'sale.order': {
    id: {},
    name: {},
    partner_id: { relation: 'res.partner' },
    // A related field of a related field: user_id.email is itself partner_id.email.
    salesman_email: { related: 'user_id.email' },
    user_id: { relation: 'res.users' },
  },
};

function schema(models: Schema = SCHEMA): FieldsOf & { asked: string[] } {
  const asked: string[] = [];
  const port = async (model: string) => {
    asked.push(model);
    return new Map(Object.entries(models[model] ?? {}));
  };
  return Object.assign(port, { asked });
}

const lossless = (value: unknown) => parseLossless(JSON.stringify(value));

async function refusal(
  policy: KeyPolicy,
  model: string,
  method: string,
  kwargs: Record<string, unknown>,
  args?: unknown[],
): Promise<string | undefined> {
  const decision = await fieldRule(
    policy.fields as NonNullable<KeyPolicy['fields']>,
    {
      model,
      method,
      kwargs: lossless(kwargs) as { [name: string]: LosslessValue },
      ...(args ? { args: lossless(args) as LosslessValue[] } : {}),
    },
    schema(),
  );
  if (decision.refusal !== undefined) {
    expect(decision.refusal).toBeInstanceOf(KeyPolicyRefusedError);
    expect(decision.refusal.rule).toBe('field');
  }
  return decision.refusal?.message;
}

const DENY_EMAIL = policyOf({ fields: { 'res.partner': { deny: ['email', 'vat'] } } });
const ALLOW_NAME = policyOf({ fields: { 'res.partner': { allow: ['name', 'display_name', 'parent_id'] } } });

/** Odoo's fix_import_export_id_paths, run by Python itself on every column (one process). */
function pythonExportPaths(columns: readonly string[]): string[][] {
  const program = [
    'import json, re, sys',
    'def fix_import_export_id_paths(fieldname):',
    "    fixed_db_id = re.sub(r'([^/])\\.id', r'\\1/.id', fieldname)",
    "    fixed_external_id = re.sub(r'([^/]):id', r'\\1/id', fixed_db_id)",
    "    return fixed_external_id.split('/')",
    'print(json.dumps([fix_import_export_id_paths(c) for c in json.load(sys.stdin)]))',
  ].join('\n');
  return JSON.parse(execFileSync('python3', ['-c', program], { input: JSON.stringify(columns) }).toString());
}

describe('the argument readers, from Odoo 16-19', () => {
  it.each([
    ['partner_id.id', ['partner_id', '.id']],
    ['partner_id:id', ['partner_id', 'id']],
    ['a.identifier', ['a', '.identifier']],
    ['x.id.id', ['x', '.id.id']],
    ['a::id', ['a:', 'id']],
    ['category_id:id/name', ['category_id', 'id', 'name']],
    ['/id', ['', 'id']],
    ['email.id', ['email', '.id']],
  ])('export column %j is split as Odoo splits it', (column, path) => {
    expect(exportColumnPath(column)).toEqual(path);
  });

  it("fuzz: the export reader splits every column exactly as Odoo's own function does (Python's re.sub)", () => {
    const piece = fc.constantFrom(
      'email',
      'name',
      'partner_id',
      'id',
      '.id',
      ':id',
      '.',
      ':',
      '/',
      'i',
      'd',
      'x',
      'é',
    );
    const columns = fc.sample(
      fc.array(piece, { minLength: 1, maxLength: 8 }).map((pieces) => pieces.join('')),
      { numRuns: 400, seed: 54 },
    );
    expect(columns.map(exportColumnPath)).toEqual(pythonExportPaths(columns));
  });

  it('an export column reads up to its first id or .id; any id segment writes external ids', () => {
    expect(exportFieldPath('parent_id/email')).toEqual(['parent_id', 'email']);
    expect(exportFieldPath('email.id')).toEqual(['email']);
    expect(exportFieldPath('parent_id/id/email')).toEqual(['parent_id']);
    expect(exportWrites(['name', 'parent_id/.id', 'email.id'])).toBe(false);
    for (const column of ['id', 'parent_id/id', 'parent_id:id', 'category_id:id/name', 'name/id'])
      expect(exportWrites(['name', column]), column).toBe(true);
    expect(exportWrites('id')).toBe(true);
    expect(exportWrites([3])).toBe(true);
  });

  it('field specs and order terms name what Odoo reads of them', () => {
    // The alias is the answer's member, not a field (specAlias).
    expect(specFieldPaths('total:sum(amount)')).toEqual([['amount']]);
    expect(specAlias('total:sum(amount)')).toBe('total');
    expect(specAlias('amount:sum')).toBeUndefined();
    expect(specFieldPaths('partner_id.email:count_distinct')).toEqual([['partner_id', 'email']]);
    // regex_field_agg.match reads a prefix: the rest of the text is ignored by Odoo.
    expect(specFieldPaths('email!!')).toEqual([['email']]);
    expect(specFieldPaths('__count')).toEqual([]);
    expect(orderFieldPaths('"vat" desc, name, email:max desc nulls last, __count')).toEqual([
      ['vat'],
      ['name'],
      ['email'],
    ]);
  });

  it('fuzz: the spec reader takes at least the field regex_field_agg reads (Python)', () => {
    const piece = fc.constantFrom('email', 'name', ':', 'max', '(', ')', 'sum', '.', ' ', '!', 'x_1');
    const specs = fc.sample(
      fc.array(piece, { minLength: 1, maxLength: 6 }).map((pieces) => pieces.join('')),
      { numRuns: 300, seed: 19 },
    );
    const program = [
      'import json, re, sys',
      "regex_field_agg = re.compile(r'(\\w+)(?::(\\w+)(?:\\((\\w+)\\))?)?')",
      'out = []',
      'for s in json.load(sys.stdin):',
      '    m = regex_field_agg.match(s)',
      '    out.append(([m.group(3)] if m.group(3) else [m.group(1)]) if m else [])',
      'print(json.dumps(out))',
    ].join('\n');
    const odoo: string[][] = JSON.parse(
      execFileSync('python3', ['-c', program], { input: JSON.stringify(specs) }).toString(),
    );
    specs.forEach((spec, index) => {
      const read = specFieldPaths(spec).map((path) => path[0]);
      for (const field of odoo[index] ?? []) expect(read, spec).toContain(field);
    });
  });
});

describe('the field rule reads what Odoo reads', () => {
  it.each([
    ['export_data email.id', 'export_data', { ids: [1], fields_to_export: ['email.id'] }],
    ['export_data email:id', 'export_data', { ids: [1], fields_to_export: ['email:id'] }],
    ['export_data email/anything', 'export_data', { ids: [1], fields_to_export: ['email/country_id'] }],
    ['export_data a related path', 'export_data', { ids: [1], fields_to_export: ['parent_id/email'] }],
    [
      'a having aggregate',
      'formatted_read_group',
      { domain: [], groupby: ['name'], having: [['email:max', '>', 'm']] },
    ],
    ['a quoted order', 'search', { domain: [], order: '"email" desc' }],
    [
      'an order by aggregate',
      'formatted_read_group',
      { domain: [], groupby: ['name'], order: 'email:max desc' },
    ],
    ['19 default_get(fields)', 'default_get', { fields: ['email'] }],
    ['res.partner default_get(default_fields)', 'default_get', { default_fields: ['vat'] }],
    ['check_field_access_rights', 'check_field_access_rights', { operation: 'read', field_names: ['email'] }],
    [
      'a field spec with trailing text',
      'read_group',
      { domain: [], fields: ['email!!:max'], groupby: ['name'] },
    ],
  ])('%s', async (_case, method, kwargs) => {
    expect(await refusal(DENY_EMAIL, 'res.partner', method, kwargs)).toMatch(
      /field (email|vat) of res\.partner is denied/,
    );
  });

  it('reads positional places too: 20 read_group having, default_get args[0]', async () => {
    expect(
      await refusal(DENY_EMAIL, 'res.partner', 'read_group', {}, [
        [],
        ['name'],
        [],
        [['email:max', '>', 'a']],
      ]),
    ).toMatch(/field email/);
    expect(await refusal(DENY_EMAIL, 'res.partner', 'default_get', {}, [['email']])).toMatch(/field email/);
  });

  it('allows the same calls without the denied field (the control)', async () => {
    for (const [method, kwargs] of [
      [
        'export_data',
        { ids: [1], fields_to_export: ['name', 'parent_id/name', 'parent_id/.id', 'name/anything'] },
      ],
      [
        'formatted_read_group',
        { domain: [], groupby: ['name'], having: [['__count', '>', 1]], order: 'name:max' },
      ],
      ['search', { domain: [['create_date.year_number', '=', 2020]], order: '"name" desc' }],
      ['default_get', { fields: ['name'] }],
    ] as const) {
      expect(await refusal(DENY_EMAIL, 'res.partner', method, kwargs), method).toBeUndefined();
    }
  });

  it('a field carried by delegation or a related path is denied where it is carried', async () => {
    expect(await refusal(DENY_EMAIL, 'res.users', 'search_read', { fields: ['login', 'email'] })).toMatch(
      /field email of res\.users is denied/,
    );
    expect(
      await refusal(DENY_EMAIL, 'res.company', 'search_read', { domain: [['email', 'ilike', 'a']] }),
    ).toMatch(/field email of res\.company/);
    // Two related hops: sale.order.salesman_email is user_id.email, itself partner_id.email.
    expect(await refusal(DENY_EMAIL, 'sale.order', 'read', { ids: [1], fields: ['salesman_email'] })).toMatch(
      /field salesman_email of sale\.order/,
    );
    expect(
      await refusal(DENY_EMAIL, 'sale.order', 'search_read', { domain: [['user_id.email', '=', 'x']] }),
    ).toMatch(/field email of res\.users/);
    // The control: the same models without the carried field.
    expect(
      await refusal(DENY_EMAIL, 'res.users', 'search_read', { fields: ['login', 'name'] }),
    ).toBeUndefined();
    expect(await refusal(DENY_EMAIL, 'sale.order', 'read', { ids: [1], fields: ['name'] })).toBeUndefined();
    // And its answers lose it too, without fields named.
    const denied = await deniedFieldsOf(
      DENY_EMAIL.fields as NonNullable<KeyPolicy['fields']>,
      'res.users',
      schema(),
    );
    expect(denied?.('email')).toBe(true);
    expect(denied?.('login')).toBe(false);
    const users = await deniedFieldsOf(
      DENY_EMAIL.fields as NonNullable<KeyPolicy['fields']>,
      'res.country',
      schema(),
    );
    expect(users).toBeUndefined();
  });

  it('an allow rule serves only its fields (and id), in requests and answers', async () => {
    for (const [method, kwargs] of [
      ['search_read', { fields: ['name', 'phone'] }],
      ['search_read', { domain: [['phone', '=', '1']] }],
      ['search', { order: 'create_date desc' }],
      ['export_data', { ids: [1], fields_to_export: ['name', 'phone'] }],
      ['web_read', { ids: [1], specification: { name: {}, country_id: {} } }],
      ['read_group', { domain: [], fields: ['name'], groupby: ['country_id'] }],
      ['write', { ids: [1], vals: { phone: '1' } }],
      // Through a relation the allow rule still binds: parent_id leads back to res.partner.
      ['search_read', { domain: [['parent_id.phone', '=', '1']] }],
    ] as const) {
      expect(await refusal(ALLOW_NAME, 'res.partner', method, kwargs), method).toMatch(
        /field (phone|create_date|country_id) of res\.partner is denied/,
      );
    }
    for (const [method, kwargs] of [
      ['search_read', { fields: ['name', 'id'], domain: [['parent_id.name', '=', 'a']], order: 'name' }],
      ['web_read', { ids: [1], specification: { name: {}, parent_id: { fields: { display_name: {} } } } }],
    ] as const) {
      expect(await refusal(ALLOW_NAME, 'res.partner', method, kwargs), method).toBeUndefined();
    }
    // res.users carries res.partner's email and phone-less name: email is carried and not allowed.
    expect(await refusal(ALLOW_NAME, 'res.users', 'read', { ids: [1], fields: ['email'] })).toMatch(
      /field email of res\.users/,
    );
    const decision = await fieldRule(
      ALLOW_NAME.fields as NonNullable<KeyPolicy['fields']>,
      { model: 'res.partner', method: 'search_read', kwargs: {} },
      schema(),
    );
    const denied = decision.refusal === undefined ? decision.denied : undefined;
    expect(denied).toBeDefined();
    const answer = filterOutcome(
      {
        kind: 'raw_result',
        json: Buffer.from('[{"id":7,"name":"A","email":"a@x","phone":"1","x_note":"n"}]'),
      },
      'records',
      denied as (field: string) => boolean,
    );
    expect(answer.kind === 'raw_result' && answer.json.toString()).toBe('[{"id":7,"name":"A"}]');
  });

  it('name_search and name_get answer display names: refused where display_name is denied or not allowed', async () => {
    const strict = policyOf({ fields: { 'res.partner': { allow: ['name'] } } });
    expect(await refusal(strict, 'res.partner', 'name_search', { name: 'a' })).toMatch(
      /field display_name of res\.partner/,
    );
    expect(await refusal(strict, 'res.partner', 'name_get', { ids: [1] })).toMatch(/field display_name/);
    expect(await refusal(ALLOW_NAME, 'res.partner', 'name_search', { name: 'a' })).toBeUndefined();
    expect(await refusal(DENY_EMAIL, 'res.partner', 'name_get', { ids: [1] })).toBeUndefined();
  });

  it('property: under an allow rule, no field outside it is named anywhere a field is read', async () => {
    const placed = fc.constantFrom(
      (f: string) => ['search_read', { fields: ['name', f] }],
      (f: string) => ['search_read', { domain: [[f, '=', 1]] }],
      (f: string) => ['search_read', { domain: [[`parent_id.${f}`, '=', 1]] }],
      (f: string) => ['search', { order: `${f} desc` }],
      (f: string) => ['read_group', { groupby: [`${f}:month`] }],
      (f: string) => ['formatted_read_group', { groupby: ['name'], having: [[`${f}:max`, '=', 1]] }],
      (f: string) => ['create', { vals_list: [{ [f]: 1 }] }],
      (f: string) => ['web_read', { ids: [1], specification: { parent_id: { fields: { [f]: {} } } } }],
      (f: string) => ['export_data', { ids: [1], fields_to_export: [`${f}.id`] }],
      (f: string) => ['export_data', { ids: [1], fields_to_export: [`parent_id/${f}/x`] }],
    );
    await fc.assert(
      fc.asyncProperty(
        placed,
        fc.constantFrom('email', 'phone', 'vat', 'create_date'),
        async (place, field) => {
          const [method, kwargs] = place(field) as [string, Record<string, unknown>];
          expect(await refusal(ALLOW_NAME, 'res.partner', method, kwargs)).toContain(
            `field ${field} of res.partner`,
          );
        },
      ),
    );
  });
});

const call = (method: string, kwargs: Record<string, unknown>, extra: Partial<ErpCall> = {}): ErpCall => ({
  baseUrl: new URL('https://erp.example.com'),
  db: 'erp_a',
  apiKey: 'k',
  model: 'res.partner',
  method,
  kwargsJson: JSON.stringify(kwargs),
  ...extra,
});

describe('what the proxy cannot read is refused', () => {
  const fields = policyOf({ fields: { 'res.partner': { deny: ['email'] } } });
  const companies = policyOf({ companies: { erp_a: [1] } });
  const confirming = policyOf({ confirm: 'writes' });
  const plain = policyOf({ access: 'write' });

  async function ruled(policy: KeyPolicy, sent: ErpCall): Promise<string | undefined> {
    try {
      await applyContentRules(policy, sent, schema());
      return undefined;
    } catch (error) {
      expect(error).toBeInstanceOf(KeyPolicyRefusedError);
      return (error as Error).message;
    }
  }

  it.each([
    [
      'default_company_ids on create',
      'create',
      { vals_list: [{ name: 'a' }], context: { default_company_ids: [[6, 0, [9]]] } },
    ],
    ['default_email on create', 'create', { vals_list: [{ name: 'a' }], context: { default_email: 'x' } }],
    ['show_email on read', 'read', { ids: [1], fields: ['display_name'], context: { show_email: true } }],
    ['formatted_display_name', 'search_read', { context: { formatted_display_name: true } }],
    ['tracking_disable', 'write', { ids: [1], vals: { name: 'a' }, context: { tracking_disable: true } }],
    [
      'a nested spec context',
      'web_read',
      {
        ids: [1],
        specification: { parent_id: { fields: { display_name: {} }, context: { show_email: true } } },
      },
    ],
    [
      'a deeper spec context',
      'web_search_read',
      {
        specification: {
          child_ids: { fields: { parent_id: { fields: { display_name: {} }, context: { show_vat: 1 } } } },
        },
      },
    ],
    ['a lang of another type', 'search_read', { context: { lang: { en: 1 } } }],
  ])('a context the proxy cannot read: %s', async (_case, method, kwargs) => {
    for (const policy of [fields, companies]) {
      expect(await ruled(policy, call(method, kwargs))).toMatch(
        // The company rule refuses a nested web_ context itself (it would not be scoped to the companies).
        /context.* key "[a-z_]+" (is not one the proxy reads|has a value of a type)|a context nested in the arguments of a web_ method/,
      );
      // The control: a key without content rules sends it as it is.
      expect(await ruled(plain, call(method, kwargs))).toBeUndefined();
    }
  });

  it('the readable context keys pass, for every key with content rules', async () => {
    const context = { lang: 'fr_FR', tz: 'Europe/Brussels', active_test: false, bin_size: true };
    for (const policy of [fields, companies, confirming])
      expect(await ruled(policy, call('search_read', { context, fields: ['name'] }))).toBeUndefined();
    expect(READABLE_CONTEXT_KEYS).toEqual([
      'lang',
      'tz',
      'active_test',
      'uid',
      'bin_size',
      'allowed_company_ids',
    ]);
  });

  it('a method whose values the rules do not parse: load, update, a model method with values', async () => {
    for (const policy of [fields, companies]) {
      // On res.partner, which has field rules, the field rule refuses first (it cannot see which fields load uses).
      expect(
        await ruled(
          policy,
          call('load', { fields: ['name', 'company_id/id'], data: [['A', 'base.main_company']] }),
        ),
      ).toMatch(/"load" takes values the proxy does not read|cannot see which fields load uses/);
      expect(
        await ruled(
          policy,
          call('update', { ids: [7], values: { company_id: false } }, { model: 'crm.lead' }),
        ),
      ).toMatch(/"update" takes values|which fields "?update"? names in its arguments/);
      expect(
        await ruled(policy, call('message_post', { ids: [7], body: 'x' }, { model: 'crm.lead' })),
      ).toMatch(/"message_post" takes values|which fields "?message_post"? names/);
      expect(
        await ruled(policy, {
          ...call('update', {}, { model: 'crm.lead' }),
          argsJson: '[[7], {"company_id": false}]',
        }),
      ).toMatch(/"update" takes values|which fields "?update"? names/);
    }
    // With its ids (and context) only, a model's method is read: nothing in it is a value.
    for (const policy of [companies, confirming]) {
      expect(
        await ruled(policy, call('action_confirm', { ids: [7] }, { model: 'sale.order' })),
      ).toBeUndefined();
      expect(
        await ruled(policy, { ...call('action_confirm', {}, { model: 'sale.order' }), argsJson: '[[7]]' }),
      ).toBeUndefined();
    }
    expect(await ruled(plain, call('load', { fields: ['name'], data: [['A']] }))).toBeUndefined();
    // A confirming key's person sees every value of the call on the form: its values are not refused.
    expect(
      await ruled(confirming, call('message_post', { ids: [7], body: 'x' }, { model: 'crm.lead' })),
    ).toBeUndefined();
  });

  it('a named argument or a positional place the rules do not read, for a method they read, is refused', async () => {
    for (const policy of [fields, companies]) {
      // res.users.write(values) on 16-18: `values` is read as write's values now; an unknown name is refused.
      expect(
        await ruled(policy, call('write', { ids: [1], vals_typo: { company_id: 9 } }, { model: 'crm.lead' })),
      ).toMatch(/argument "vals_typo" of "write" is not one the proxy reads/);
      expect(
        await ruled(policy, {
          ...call('write', {}, { model: 'crm.lead' }),
          argsJson: '[[1], {"name": "a"}, {"x": 1}]',
        }),
      ).toMatch(/3 positional arguments, more than the 2/);
    }
    expect(
      await ruled(companies, call('write', { ids: [1], values: { company_id: 9 } }, { model: 'crm.lead' })),
    ).toMatch(/company_id in the values names a company outside/);
    expect(await ruled(fields, call('write', { ids: [1], values: { email: 'x' } }))).toMatch(
      /field email of res\.partner is denied/,
    );
  });

  it('with field rules, a method the rule does not read is refused on any model when it carries arguments', async () => {
    // web_name_search on a model without its own rule reaches res.partner through its specification.
    expect(
      await ruled(
        fields,
        call(
          'web_name_search',
          { name: 'a', specification: { partner_ids: { fields: { email: {} } } } },
          { model: 'crm.lead' },
        ),
      ),
    ).toMatch(/cannot see which fields "?web_name_search"? names in its arguments/);
    expect(await ruled(fields, call('action_confirm', { ids: [7] }, { model: 'crm.lead' }))).toBeUndefined();
    expect(
      await ruled(
        companies,
        call('web_read_group', { domain: [], groupby: ['name'] }, { model: 'crm.lead' }),
      ),
    ).toBeUndefined();
  });

  it('a JSON value of a type Odoo reads otherwise (a dict iterated for its keys) is refused', async () => {
    for (const kwargs of [
      { domain: [], fields: { 'x:array_agg(email)': 1 }, groupby: ['name'] },
      { domain: [], fields: ['name'], groupby: { email: 1 } },
      { domain: { email: 1 }, fields: ['name'], groupby: ['name'] },
    ])
      expect(await ruled(fields, call('read_group', kwargs)), JSON.stringify(kwargs)).toMatch(
        /is not of a type the proxy reads/,
      );
    expect(
      await ruled(fields, call('search_read', { domain: [[1, '=', 1]], fields: ['name'] })),
    ).toBeUndefined();
  });

  it("a many2one shows its comodel's display name: denied where display_name is", async () => {
    const strict = policyOf({ fields: { 'res.partner': { allow: ['name'] } } });
    const models: Schema = {
      ...SCHEMA,
      'res.partner.bank': { id: {}, acc_number: {}, partner_id: { relation: 'res.partner' } },
    };
    const decision = await fieldRule(
      strict.fields as NonNullable<KeyPolicy['fields']>,
      {
        model: 'res.partner.bank',
        method: 'read',
        kwargs: lossless({ ids: [1], fields: ['partner_id'] }) as { [name: string]: LosslessValue },
      },
      schema(models),
    );
    expect(decision.refusal?.message).toMatch(/field partner_id of res\.partner\.bank is denied/);
    const allowed = await fieldRule(
      ALLOW_NAME.fields as NonNullable<KeyPolicy['fields']>,
      {
        model: 'res.partner.bank',
        method: 'read',
        kwargs: lossless({ ids: [1], fields: ['partner_id'] }) as { [name: string]: LosslessValue },
      },
      schema(models),
    );
    expect(allowed.refusal).toBeUndefined();
  });

  it('a model whose fields the ERP would not describe cannot be checked: refused (fail closed)', async () => {
    expect(await ruled(fields, call('search_read', { fields: ['name'] }, { model: 'x.unknown' }))).toMatch(
      /cannot read the fields of x\.unknown/,
    );
  });

  it('export_data asking for external ids writes: refused for content rules, a write for the access rule', async () => {
    const exported = call('export_data', { ids: [1], fields_to_export: ['name', 'parent_id:id'] });
    for (const policy of [fields, companies, confirming])
      expect(await ruled(policy, exported)).toMatch(/asks for external ids/);
    expect(callWrites(exported)).toBe(true);
    expect(
      callWrites({ ...exported, kwargsJson: '{"ids":[1],"fields_to_export":["name","parent_id/.id"]}' }),
    ).toBe(false);
    expect(callWrites({ method: 'export_data', argsJson: '[[1], ["id"]]', kwargsJson: '{}' })).toBe(true);
    expect(callWrites({ method: 'search_read', kwargsJson: '{}' })).toBe(false);
    expect(callWrites({ method: 'load', kwargsJson: '{}' })).toBe(true);
    const reader = policyOf({ access: 'read' });
    expect(() => checkKeyPolicy(reader, { method: 'export_data', writes: true })).toThrow(
      /may only read; this export_data call writes/,
    );
    expect(() => checkKeyPolicy(reader, { method: 'export_data', writes: false })).not.toThrow();
  });

  it("a confirming key's reads are not read (nothing there is confirmed), its writes are", async () => {
    expect(await ruled(confirming, call('search_read', { context: { show_email: true } }))).toBeUndefined();
    expect(
      await ruled(
        confirming,
        call('write', { ids: [1], vals: { name: 'a' }, context: { default_function: 'x' } }),
      ),
    ).toBeUndefined();
    expect(() =>
      checkToolContexts(
        confirming,
        { model: 'res.partner', ids: [1], values: {}, context: { default_function: 'x' } },
        true,
      ),
    ).toThrow(
      /key "default_function" is not one the proxy reads \(.*\), so this key's confirmations cannot check it/,
    );
  });

  it('MCP tool arguments: contexts anywhere in them, at the policy step', () => {
    expect(() =>
      checkToolContexts(fields, { model: 'res.partner', context: { show_email: true } }, false),
    ).toThrow(/context key "show_email"/);
    expect(() =>
      checkToolContexts(
        fields,
        {
          model: 'res.partner',
          method: 'web_read',
          kwargs: { specification: { parent_id: { context: { show_vat: 1 } } } },
        },
        true,
      ),
    ).toThrow(/kwargs\.specification\.parent_id\.context key "show_vat"/);
    expect(() =>
      checkToolContexts(confirming, { model: 'res.partner', context: { show_email: true } }, false),
    ).not.toThrow();
    expect(() =>
      checkToolContexts(
        confirming,
        { model: 'res.partner', values: {}, context: { default_email: 'x' } },
        true,
      ),
    ).toThrow(/confirmations cannot check it/);
    expect(() => checkToolContexts(plain, { context: { anything: 1 } }, true)).not.toThrow();
  });

  it('the policies and confirmations guides list every readable context key (READABLE_CONTEXT is the one list)', async () => {
    const { readFileSync } = await import('node:fs');
    const guide = (name: string) =>
      readFileSync(new URL(`../../docs/guide/${name}`, import.meta.url), 'utf8');
    for (const doc of [guide('policies.md'), guide('confirmations.md')])
      for (const key of READABLE_CONTEXT_KEYS) expect(doc).toContain(`\`${key}\``);
  });

  it('checkReadable names the rule that applies: field, then company, then confirm', () => {
    const kwargs = lossless({ context: { show_email: true } }) as { [name: string]: LosslessValue };
    for (const [policy, rule] of [
      [fields, 'field'],
      [companies, 'company'],
      [policyOf({ fields: { '*': { deny: ['x'] } }, companies: { erp_a: [1] } }), 'field'],
    ] as const) {
      try {
        checkReadable(policy, { model: 'res.partner', method: 'search_read', kwargs });
        expect.unreachable();
      } catch (error) {
        expect(error).toMatchObject({ code: -32008, rule });
      }
    }
  });
});

describe('the second review: more spellings Odoo reads', () => {
  const fields = policyOf({ fields: { 'res.partner': { deny: ['email'] } } });
  const companies = policyOf({ companies: { erp_a: [1] } });
  const strict = policyOf({ fields: { 'res.partner': { allow: ['name', 'country_id'] } } });
  const named = policyOf({ fields: { 'res.partner': { allow: ['country_id'] } } });

  async function ruled(policy: KeyPolicy, sent: ErpCall): Promise<string | undefined> {
    try {
      const result = await applyContentRules(policy, sent, schema());
      return `sent ${result.call.kwargsJson}`;
    } catch (error) {
      expect(error).toBeInstanceOf(KeyPolicyRefusedError);
      return (error as Error).message;
    }
  }

  it("x2many commands whose values are a list of pairs (Odoo's dict()) are refused by both rules", async () => {
    const pairs = call('write', {
      ids: [1],
      vals: {
        child_ids: [
          [
            0,
            0,
            [
              ['name', 'a'],
              ['email', 'x'],
            ],
          ],
        ],
      },
    });
    expect(await ruled(fields, pairs)).toMatch(/an x2many command's values is not of a type the proxy reads/);
    const shared = call('write', { ids: [1], vals: { child_ids: [[0, 0, [['company_id', false]]]] } });
    expect(await ruled(companies, shared)).toMatch(/values are not an object/);
    expect(await ruled(companies, call('copy', { ids: [1], default: [['company_id', false]] }))).toMatch(
      /values are not an object/,
    );
  });

  it('a context written as a list of pairs is refused, at any depth and on the MCP policy step', async () => {
    expect(
      await ruled(fields, call('create', { vals_list: [{ name: 'a' }], context: [['default_email', 'x']] })),
    ).toMatch(/context is not an object/);
    expect(() =>
      checkToolContexts(
        policyOf({ confirm: 'writes' }),
        {
          model: 'res.partner',
          method: 'create',
          kwargs: { vals_list: [{}], context: [['default_email', 'x']] },
        },
        true,
      ),
    ).toThrow(/kwargs\.context is a list, which the ERP would read as pairs/);
  });

  it('Odoo 19 lower-cases operators: ANY, NOT ANY and any! sub-domains are read', async () => {
    for (const operator of ['ANY', 'Not Any', 'any!', 'not any!'])
      expect(
        await ruled(fields, call('search', { domain: [['child_ids', operator, [['email', '=', 'x']]]] })),
        operator,
      ).toMatch(/field email of res\.partner is denied/);
  });

  it("a relational field compared with text searches the comodel's names: refused where the comodel is ruled", async () => {
    expect(
      await ruled(fields, call('search', { domain: [['parent_id', '=ilike', 'a@example.com']] })),
    ).toMatch(/parent_id is compared with text/);
    expect(
      await ruled(
        fields,
        call('search', { domain: [['partner_ids', 'in', ['a@x']]] }, { model: 'res.partner.category' }),
      ),
    ).toMatch(/partner_ids is compared with text/);
    // The control: ids, and text against a relation to a model without rules.
    expect(await ruled(fields, call('search', { domain: [['parent_id', '=', 7]] }))).toMatch(/^sent /);
    expect(await ruled(fields, call('search', { domain: [['country_id', 'ilike', 'Bel']] }))).toMatch(
      /^sent /,
    );
  });

  it("every relational field carries its comodel's display names; a carried name carries display_name", async () => {
    expect(
      await ruled(
        named,
        call(
          'read_group',
          { domain: [], fields: [], groupby: ['partner_ids'] },
          { model: 'res.partner.category' },
        ),
      ),
    ).toMatch(/field partner_ids of res\.partner\.category is denied/);
    // res.users' name is its partner's: its display_name, and every many2one to res.users, carry it.
    expect(
      await ruled(named, call('read', { ids: [1], fields: ['display_name'] }, { model: 'res.users' })),
    ).toMatch(/field display_name of res\.users is denied/);
    expect(
      await ruled(named, call('read', { ids: [1], fields: ['user_id'] }, { model: 'sale.order' })),
    ).toMatch(/field user_id of sale\.order is denied/);
    // get_metadata answers its creators' and last writers' display names: users' names, partners' names.
    expect(await ruled(named, call('get_metadata', { ids: [1] }, { model: 'res.country' }))).toMatch(
      /field create_uid of res\.country is denied/,
    );
    expect(await ruled(strict, call('get_metadata', { ids: [1] }, { model: 'res.country' }))).toMatch(
      /^sent /,
    );
    expect(
      await ruled(strict, call('read', { ids: [1], fields: ['display_name'] }, { model: 'res.users' })),
    ).toMatch(/^sent /);
  });

  it("name_search's name is text and its operator a plain one", async () => {
    expect(
      await ruled(
        fields,
        call('name_search', { name: [['email', '=', 'x']], operator: 'any' }, { model: 'crm.lead' }),
      ),
    ).toMatch(/is not of a type the proxy reads/);
    expect(
      await ruled(fields, call('name_search', { name: 'a', operator: 'ANY' }, { model: 'crm.lead' })),
    ).toMatch(/the operator "?ANY"? is not of a type/);
    expect(
      await ruled(fields, call('name_search', { name: 'a', operator: 'ilike' }, { model: 'crm.lead' })),
    ).toMatch(/^sent /);
  });

  it('lang and tz are checked as fields only where records are created, nested creates included', async () => {
    expect(
      await ruled(strict, call('write', { ids: [1], vals: { name: 'a' }, context: { lang: 'en_US' } })),
    ).toMatch(/^sent /);
    expect(
      await ruled(strict, call('create', { vals_list: [{ name: 'a' }], context: { tz: 'Europe/Brussels' } })),
    ).toMatch(/context key tz would set the new record's field tz of res\.partner/);
    expect(
      await ruled(
        strict,
        call(
          'write',
          { ids: [1], vals: { user_ids: [[0, 0, { login: 'x' }]] }, context: { lang: 'en_US' } },
          { model: 'crm.lead' },
        ),
      ),
    ).toMatch(/^sent /);
  });

  it("a companies key's create gets the key's company as default_company_id (a partner has no default company)", async () => {
    const sent = await ruled(companies, call('create', { vals_list: [{ name: 'a' }] }));
    expect(sent).toBe(
      'sent {"vals_list":[{"name":"a"}],"context":{"allowed_company_ids":[1],"default_company_id":1}}',
    );
    expect(await ruled(companies, call('search_read', { fields: ['name'] }))).toBe(
      'sent {"fields":["name"],"context":{"allowed_company_ids":[1]}}',
    );
  });

  it('models whose records are code are read, never changed, by a key with content rules', async () => {
    for (const policy of [fields, companies]) {
      expect(
        await ruled(
          policy,
          call('create', { vals_list: [{ name: 'x', code: 'log(1)' }] }, { model: 'ir.actions.server' }),
        ),
      ).toMatch(/"ir\.actions\.server" holds code/);
      expect(
        await ruled(policy, call('search_read', { fields: ['name'] }, { model: 'ir.actions.server' })),
      ).toMatch(/^sent /);
    }
  });

  it("group keys by a path stay; 17-18's <groupby>_count orders read_group", async () => {
    const allowed = new Set(['id', 'name', 'parent_id']);
    const groups = [{ 'parent_id.country_id': [1, 'Belgium'], __count: 2, 'email:max': 'x' }];
    filterOutcome({ kind: 'result', value: groups }, 'groups', (field) => !allowed.has(field));
    expect(groups).toEqual([{ 'parent_id.country_id': [1, 'Belgium'], __count: 2 }]);
    expect(
      await ruled(
        strict,
        call('read_group', { domain: [], fields: ['name'], groupby: ['name'], orderby: 'name_count desc' }),
      ),
    ).toMatch(/^sent /);
  });
});

describe('the third review: command codes as Odoo compares them, child_of text', () => {
  const fields = policyOf({ fields: { 'res.partner': { deny: ['email'] } } });
  const companies = policyOf({ companies: { erp_a: [1] } });
  const strict = policyOf({ fields: { 'res.partner': { allow: ['name'] } } });

  async function ruled(policy: KeyPolicy, sent: ErpCall): Promise<string | undefined> {
    try {
      await applyContentRules(policy, sent, schema());
      return undefined;
    } catch (error) {
      expect(error).toBeInstanceOf(KeyPolicyRefusedError);
      return (error as Error).message;
    }
  }

  it('false and true are the create and update codes (Python: False == 0, True == 1)', async () => {
    const create = call('write', { ids: [1], vals: { child_ids: [[false, 0, { name: 'a', email: 'x' }]] } });
    expect(await ruled(fields, create)).toMatch(/field email of res\.partner is denied/);
    const update = call('write', { ids: [1], vals: { child_ids: [[true, 7, { email: 'x' }]] } });
    expect(await ruled(fields, update)).toMatch(/field email of res\.partner is denied/);
    const shared = call('write', {
      ids: [1],
      vals: { child_ids: [[false, 0, { name: 'a', company_id: false }]] },
    });
    expect(await ruled(companies, shared)).toMatch(/company_id in the values names a company outside/);
    // A command whose code is no command's is refused, not skipped.
    for (const code of ['0', 7, -1, null, 1.5])
      expect(
        await ruled(fields, call('write', { ids: [1], vals: { child_ids: [[code, 0, { email: 'x' }]] } })),
        String(code),
      ).toMatch(/an x2many command is not of a type the proxy reads/);
    // The control: a many2many given as a list of ids, and the other commands, pass.
    expect(
      await ruled(
        fields,
        call('write', {
          ids: [1],
          vals: {
            child_ids: [
              [4, 7],
              [3, 8],
              [6, 0, [1, 2]],
            ],
          },
        }),
      ),
    ).toBeUndefined();
    expect(await ruled(fields, call('write', { ids: [1], vals: { category_id: [1, 2] } }))).toBeUndefined();
  });

  it('child_of and parent_of with text search names: refused under field rules', async () => {
    for (const [policy, leaf] of [
      [strict, ['id', 'child_of', 'a@example.com']],
      [fields, ['parent_id.id', 'parent_of', ['x', 1]]],
    ] as const)
      expect(await ruled(policy, call('search', { domain: [leaf] })), JSON.stringify(leaf)).toMatch(
        /(child_of|parent_of) text searches names/,
      );
    expect(await ruled(strict, call('search', { domain: [['id', 'child_of', [7]]] }))).toBeUndefined();
  });

  it('a refused lang or tz names the context key that would set the field', async () => {
    expect(
      await ruled(strict, call('create', { vals_list: [{ name: 'a' }], context: { lang: 'en_US' } })),
    ).toMatch(
      /context key lang would set the new record's field lang of res\.partner, which is denied to this key/,
    );
  });
});
