/**
 * The key policies' call rules (docs/guide/policies.md, "Methods, fields and companies"): `methods`, `fields` and `companies` read at
 * load (fail closed, naming the key or identity and the field), the model-keyed maps' precedence,
 * the method rule in checkKeyPolicy's order, every place the field rule sees a field (dotted paths
 * through relations, asked of a fields_get port at most once per relation), the answer filter
 * (numbers as spelt), the company rule's context and its refusals of every widening attempt, and
 * the lossless JSON both use.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkKeyPolicy } from '../../lambdas/core/key-policy-check.ts';
import { filterOutcome, removeDeniedFields } from '../../lambdas/core/policy/answer-filter.ts';
import { applyContentRules, hasContentRules } from '../../lambdas/core/policy/call-rules.ts';
import { CALL_SHAPES } from '../../lambdas/core/policy/call-shapes.ts';
import { companyRule } from '../../lambdas/core/policy/company-rule.ts';
import { type FieldsOf, fieldRule } from '../../lambdas/core/policy/field-rule.ts';
import { cachedFieldsOf, fieldInfosOf } from '../../lambdas/core/policy/fields-lookup.ts';
import { methodRule } from '../../lambdas/core/policy/method-rule.ts';
import { parseProxyKeys } from '../../lambdas/platform/config.ts';
import { KeyPolicyRefusedError } from '../../lambdas/platform/errors.ts';
import { hasCallRules, type KeyPolicy } from '../../lambdas/platform/key-policy.ts';
import {
  type LosslessValue,
  parseLossless,
  stringifyLossless,
} from '../../lambdas/platform/lossless-json.ts';
import { compileModelRules, ruleFor } from '../../lambdas/platform/model-rules.ts';
import { parseIdentities } from '../../lambdas/protocol/oauth/identities.ts';
import type { ErpCall } from '../../lambdas/upstream/erp-transport.ts';

const KEY = 'policy-key-SECRET-0123456789';

function policyOf(policy: unknown): KeyPolicy {
  const [entry] = parseProxyKeys(JSON.stringify({ keys: [{ name: 'support', key: KEY, policy }] }));
  if (entry?.policy === undefined) throw new Error('no policy parsed');
  return entry.policy;
}

/** A fields_get port over a small schema (a field's relation, or `undefined`), counting its lookups. */
function schema(models: Record<string, Record<string, string | undefined>>): FieldsOf & { asked: string[] } {
  const asked: string[] = [];
  const port = async (model: string) => {
    asked.push(model);
    return new Map(
      Object.entries(models[model] ?? {}).map(([name, relation]) => [
        name,
        relation === undefined ? {} : { relation },
      ]),
    );
  };
  return Object.assign(port, { asked });
}

const SCHEMA = {
  'sale.order': {
    partner_id: 'res.partner',
    order_line: 'sale.order.line',
    name: undefined,
    amount_total: undefined,
  },
  'sale.order.line': {
    order_id: 'sale.order',
    product_id: 'product.product',
    price_unit: undefined,
    company_id: 'res.company',
  },
  'res.partner': {
    bank_ids: 'res.partner.bank',
    vat: undefined,
    name: undefined,
    email: undefined,
    child_ids: 'res.partner',
    parent_id: 'res.partner',
  },
  'res.partner.bank': { acc_number: undefined, partner_id: 'res.partner' },
};

const CONTACTS = policyOf({ fields: { 'res.partner': { deny: ['vat', 'bank_ids'] } } });

async function fieldRefusal(
  policy: KeyPolicy,
  model: string,
  method: string,
  kwargs: Record<string, unknown>,
  args?: unknown[],
): Promise<string | undefined> {
  const { refusal } = await fieldRule(
    policy.fields as NonNullable<KeyPolicy['fields']>,
    {
      model,
      method,
      kwargs: parseLossless(JSON.stringify(kwargs)) as { [name: string]: LosslessValue },
      ...(args ? { args: parseLossless(JSON.stringify(args)) as LosslessValue[] } : {}),
    },
    schema(SCHEMA),
  );
  if (refusal !== undefined) {
    expect(refusal).toBeInstanceOf(KeyPolicyRefusedError);
    expect(refusal.rule).toBe('field');
  }
  return refusal?.message;
}

describe('the schema of methods, fields and companies', () => {
  it.each([
    [
      { methods: { 'res partner': ['write'] } },
      'keys.0.policy.methods.res partner (key "support"): expected a model name',
    ],
    [{ methods: {} }, 'keys.0.policy.methods (key "support"): an empty map sets no method rule'],
    [{ methods: { 'res.partner': [] } }, 'keys.0.policy.methods.res.partner (key "support"): an empty list'],
    [
      { methods: { 'res.partner': ['un link'] } },
      'keys.0.policy.methods.res.partner.0 (key "support"): expected a method name',
    ],
    [{ methods: ['write'] }, 'keys.0.policy.methods (key "support"): expected an object keyed by model'],
    [
      { fields: { 'res.partner': { deny: ['vat'], allow: ['name'] } } },
      'keys.0.policy.fields.res.partner (key "support"): expected {"deny": [field names]} or {"allow": [field names]}: one of the two, not both',
    ],
    [
      { fields: { 'res.partner': {} } },
      'keys.0.policy.fields.res.partner (key "support"): expected {"deny": [field names]} or {"allow": [field names]}: one of the two',
    ],
    [
      { fields: { 'res.partner': { only: ['vat'] } } },
      'keys.0.policy.fields.res.partner (key "support"): unknown field "only"',
    ],
    [
      { fields: { 'res.partner': { allow: [] } } },
      'keys.0.policy.fields.res.partner.allow (key "support"): an empty list',
    ],
    [
      { fields: { 'res.partner': { deny: [] } } },
      'keys.0.policy.fields.res.partner.deny (key "support"): an empty list',
    ],
    [
      { fields: { 'res.partner': { deny: ['bank ids'] } } },
      'keys.0.policy.fields.res.partner.deny.0 (key "support"): expected a field name',
    ],
    [
      { fields: { 'sale*': { deny: ['vat'] } } },
      'keys.0.policy.fields.sale* (key "support"): expected a model name',
    ],
    [
      { companies: { erp_a: [1, 'two'] } },
      'keys.0.policy.companies.erp_a.1 (key "support"): expected a company id',
    ],
    [
      { companies: { erp_a: [0] } },
      'keys.0.policy.companies.erp_a.0 (key "support"): expected a positive company id',
    ],
    [
      { companies: { erp_a: [1.5] } },
      'keys.0.policy.companies.erp_a.0 (key "support"): expected a company id',
    ],
    [{ companies: { erp_a: [] } }, 'keys.0.policy.companies.erp_a (key "support"): an empty list'],
    [{ companies: {} }, 'keys.0.policy.companies (key "support"): an empty map allows no database'],
    [{ companies: { '': [1] } }, 'keys.0.policy.companies. (key "support"): a database name is not empty'],
  ])('fails closed on %j, naming the key and the field', (policy, message) => {
    expect(() => parseProxyKeys(JSON.stringify({ keys: [{ name: 'support', key: KEY, policy }] }))).toThrow(
      message,
    );
    try {
      parseProxyKeys(JSON.stringify({ keys: [{ name: 'support', key: KEY, policy }] }));
    } catch (error) {
      expect((error as Error).message).not.toContain(KEY);
    }
  });

  it('reads the three maps; `*` is valid there and not in models', () => {
    const policy = policyOf({
      methods: { 'helpdesk.ticket': ['read', 'write'], '*': ['search_read'] },
      fields: { 'res.*': { deny: ['vat'] } },
      companies: { erp_a: [2, 1, 2] },
    });
    expect(policy.methods?.star).toEqual(new Set(['search_read']));
    expect(policy.fields?.globs).toEqual([['res.', { allow: false, names: new Set(['vat']) }]]);
    expect(policy.companies?.get('erp_a')).toEqual([2, 1]);
    expect(hasCallRules(policy) && hasContentRules(policy)).toBe(true);
    expect(hasCallRules(policyOf({ access: 'read' }))).toBe(false);
    expect(hasContentRules(policyOf({ methods: { '*': ['read'] } }))).toBe(false);
    expect(() => policyOf({ models: ['*'] })).toThrow('expected a model name');
  });

  it('OAuth identity-map entries take the same fields and fail the same way, naming the entry', () => {
    const erp = { url: 'https://erp.example.com', db: 'prod', user_id: 7, api_key: 'erp-api-key-0123456789' };
    const [entry] = parseIdentities(
      JSON.stringify({
        identities: [
          {
            name: 'subsidiary',
            match: { claim: 'sub', value: 'a' },
            erp,
            policy: {
              companies: { prod: [3] },
              methods: { '*': ['read'] },
              fields: { '*': { deny: ['vat'] } },
            },
          },
        ],
      }),
    );
    expect(entry?.policy?.companies?.get('prod')).toEqual([3]);
    expect(() =>
      parseIdentities(
        JSON.stringify({
          identities: [
            {
              name: 'subsidiary',
              match: { claim: 'sub', value: 'a' },
              erp,
              policy: { companies: { prod: [-1] } },
            },
          ],
        }),
      ),
    ).toThrow('identities.0.policy.companies.prod.0 (identity "subsidiary"): expected a positive company id');
  });
});

describe('model-keyed maps', () => {
  it('the exact name, else the longest glob, else *; never merged', () => {
    const rules = compileModelRules(
      { 'sale.*': 'glob', 'sale.order.*': 'longer', 'sale.order': 'exact', '*': 'star' },
      (v) => v,
    );
    expect(ruleFor(rules, 'sale.order')).toBe('exact');
    expect(ruleFor(rules, 'sale.order.line')).toBe('longer');
    expect(ruleFor(rules, 'sale.report')).toBe('glob');
    expect(ruleFor(rules, 'res.partner')).toBe('star');
    expect(ruleFor(rules, 'sale.')).toBe('star');
    expect(ruleFor(rules, 'sale.x/../res.users')).toBe('star');
    expect(
      ruleFor(
        compileModelRules({ 'sale.*': 1 }, (v) => v),
        'res.partner',
      ),
    ).toBeUndefined();
  });

  it('property: the value found is that of the most specific matching key', () => {
    const segment = fc.constantFrom('sale', 'order', 'line', 'res', 'partner');
    const modelName = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('.'));
    const key = fc.oneof(
      modelName,
      modelName.map((name) => `${name}.*`),
      fc.constant('*'),
    );
    fc.assert(
      fc.property(fc.uniqueArray(key, { maxLength: 6 }), modelName, (keys, model) => {
        const rules = compileModelRules(Object.fromEntries(keys.map((k) => [k, k])), (v) => v);
        const matching = keys.filter(
          (k) => k === model || k === '*' || (k.endsWith('.*') && model.startsWith(k.slice(0, -1))),
        );
        const rank = (k: string) => (k === model ? Number.MAX_SAFE_INTEGER : k === '*' ? -1 : k.length);
        const best = matching.sort((a, b) => rank(b) - rank(a))[0];
        expect(ruleFor(rules, model)).toBe(best);
      }),
    );
  });
});

describe('the method rule', () => {
  const support = policyOf({
    methods: {
      'helpdesk.ticket': ['search_read', 'read', 'write', 'message_post'],
      '*': ['search_read', 'read'],
    },
    databases: ['prod'],
  });

  it('allows the listed methods of the most specific key, and every method on a model no key matches', () => {
    expect(methodRule(support, 'helpdesk.ticket', 'message_post')).toBeUndefined();
    expect(methodRule(support, 'res.partner', 'read')).toBeUndefined();
    expect(
      methodRule(policyOf({ methods: { 'sale.*': ['read'] } }), 'res.partner', 'unlink'),
    ).toBeUndefined();
    expect(methodRule(policyOf({ access: 'read' }), 'res.partner', 'unlink')).toBeUndefined();
  });

  it('refuses another method, -32008 rule method, naming the method and the model', () => {
    const refusal = methodRule(support, 'helpdesk.ticket', 'unlink');
    expect(refusal?.code).toBe(-32008);
    expect(refusal?.rule).toBe('method');
    expect(refusal?.message).toBe(
      "Refused by this key's policy: method unlink is not in this key's methods for helpdesk.ticket",
    );
    expect(methodRule(support, 'res.partner', 'write')?.rule).toBe('method');
  });

  it('comes after model and before database in checkKeyPolicy', () => {
    const policy = policyOf({ models: ['helpdesk.ticket'], methods: { '*': ['read'] }, databases: ['prod'] });
    const rule = (question: Parameters<typeof checkKeyPolicy>[1]) => {
      try {
        checkKeyPolicy(policy, question);
        return undefined;
      } catch (error) {
        return (error as KeyPolicyRefusedError).rule;
      }
    };
    expect(rule({ model: 'res.partner', method: 'unlink', db: 'other' })).toBe('model');
    expect(rule({ model: 'helpdesk.ticket', method: 'unlink', db: 'other' })).toBe('method');
    expect(rule({ model: 'helpdesk.ticket', method: 'read', db: 'other' })).toBe('database');
    expect(rule({ model: 'helpdesk.ticket', method: 'read', db: 'prod' })).toBeUndefined();
  });
});

describe('the field rule: every place a request names a field', () => {
  it.each([
    ['search_read fields', 'search_read', { fields: ['name', 'vat'] }],
    ['read fields', 'read', { ids: [1], fields: ['vat'] }],
    ['a domain leaf', 'search_count', { domain: ['|', ['name', '=', 'a'], ['vat', '=', 'BE1']] }],
    ['a negated leaf', 'search', { domain: ['!', ['bank_ids', '!=', false]] }],
    ['order', 'search', { domain: [], order: 'name asc, vat desc' }],
    [
      'order with an aggregate',
      'read_group',
      { domain: [], fields: ['name'], groupby: ['name'], orderby: 'vat:count_distinct' },
    ],
    ['read_group fields', 'read_group', { domain: [], fields: ['vat:count_distinct'], groupby: ['name'] }],
    ['read_group alias', 'read_group', { domain: [], fields: ['n:count_distinct(vat)'], groupby: ['name'] }],
    ['groupby', 'read_group', { domain: [], fields: [], groupby: ['vat'] }],
    [
      'formatted_read_group aggregates',
      'formatted_read_group',
      { domain: [], groupby: ['name'], aggregates: ['vat:count_distinct'] },
    ],
    ['a having domain', 'formatted_read_group', { domain: [], groupby: ['name'], having: [['vat', '=', 1]] }],
    ['create values', 'create', { vals_list: [{ name: 'a', vat: 'x' }] }],
    ['create one dict', 'create', { vals_list: { vat: 'x' } }],
    ['write values', 'write', { ids: [1], vals: { vat: 'x' } }],
    ['copy defaults', 'copy', { ids: [1], default: { bank_ids: [] } }],
    ['web_save values', 'web_save', { ids: [1], vals: { vat: 'x' }, specification: {} }],
    ['default_get fields', 'default_get', { fields_list: ['vat'] }],
    ['fields_get allfields', 'fields_get', { allfields: ['vat'] }],
    ['16 web_search_read fields', 'web_search_read', { domain: [], fields: ['vat'] }],
    ['a specification', 'web_search_read', { domain: [], specification: { name: {}, vat: {} } }],
    ['web_read specification', 'web_read', { ids: [1], specification: { bank_ids: { fields: {} } } }],
    ['export_data', 'export_data', { ids: [1], fields_to_export: ['name', 'vat'] }],
    ['name_search 16 args', 'name_search', { name: 'a', args: [['vat', '=', 'x']] }],
    ['an any sub-domain', 'search', { domain: [['child_ids', 'any', [['vat', '=', 'x']]]] }],
  ])('%s', async (_place, method, kwargs) => {
    const message = await fieldRefusal(CONTACTS, 'res.partner', method, kwargs);
    expect(message).toMatch(
      /^Refused by this key's policy: field (vat|bank_ids) of res\.partner is denied to this key$/,
    );
  });

  it.each([
    ['search_read', [[['vat', '=', 'x']]]],
    ['search_read', [[], ['vat']]],
    ['read', [[1], ['vat']]],
    ['read_group', [[], ['name'], ['vat']]],
    ['read_group', [[], ['name'], ['name'], [['vat', '=', 1]]]],
    ['read_group', [[], ['name'], ['name'], 0, 10, 'vat desc']],
    ['write', [[1], { vat: 'x' }]],
    ['create', [{ vat: 'x' }]],
    ['export_data', [[1], ['bank_ids/acc_number']]],
    ['web_search_read', [[], { vat: {} }]],
  ])('v1 positional arguments: %s %j', async (method, args) => {
    expect(await fieldRefusal(CONTACTS, 'res.partner', method, {}, args)).toMatch(
      /field (vat|bank_ids) of res\.partner/,
    );
  });

  it('follows dotted paths, any sub-domains, nested specifications and x2many values to the relation, once per relation', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['search_read', { domain: [['partner_id.vat', '=', 'x']] }],
      ['search_read', { domain: [['order_line.order_id.partner_id.bank_ids.acc_number', '!=', false]] }],
      ['search_read', { domain: [['partner_id', 'any', [['bank_ids', '!=', false]]]] }],
      ['search_read', { order: 'partner_id.vat' }],
      ['web_search_read', { specification: { partner_id: { fields: { vat: {} } } } }],
      ['web_search_read', { specification: { partner_id: { fields: { name: {} }, order: 'vat' } } }],
      ['write', { ids: [1], vals: { partner_id: 1, order_line: [[0, 0, { price_unit: 1 }]] } }],
      ['export_data', { ids: [1], fields_to_export: ['partner_id/vat'] }],
    ];
    const refused: (string | undefined)[] = [];
    for (const [method, kwargs] of cases)
      refused.push(await fieldRefusal(CONTACTS, 'sale.order', method, kwargs));
    expect(refused.slice(0, 6).map((message) => message?.includes('of res.partner is denied'))).toEqual(
      Array(6).fill(true),
    );
    expect(refused[6]).toBeUndefined();
    expect(refused[7]).toContain('field vat of res.partner');
    const port = schema(SCHEMA);
    const rules = CONTACTS.fields as NonNullable<KeyPolicy['fields']>;
    await fieldRule(
      rules,
      {
        model: 'sale.order',
        method: 'search',
        kwargs: {
          domain: [
            ['partner_id.name', '=', 'a'],
            ['name', '=', 'b'],
          ],
        },
      },
      port,
    );
    // Each model the call reaches is looked up (the denied fields it carries by a related path are
    // known only from its fields), once per call; the kept lookups are fields-lookup.ts's.
    expect(port.asked.filter((model) => model === 'sale.order').length).toBeGreaterThan(0);
    expect(new Set(port.asked)).toEqual(new Set(['sale.order', 'res.partner']));
    port.asked.length = 0;
    await fieldRule(
      rules,
      { model: 'sale.order', method: 'search', kwargs: { domain: [['partner_id.vat', '=', 'a']] } },
      port,
    );
    expect(new Set(port.asked)).toEqual(new Set(['sale.order', 'res.partner']));
  });

  it('refuses a path it cannot follow (fail closed), and allows what names no denied field', async () => {
    expect(
      await fieldRefusal(CONTACTS, 'sale.order', 'search', { domain: [['unknown_id.vat', '=', 1]] }),
    ).toContain('cannot tell which model sale.order.unknown_id relates to');
    for (const [method, kwargs] of [
      ['search_read', { domain: [['name', 'ilike', 'vat']], fields: ['name', 'email'], order: 'name' }],
      ['read', { ids: [1] }],
      ['web_search_read', { specification: { name: {}, parent_id: { fields: { name: {} } } } }],
      ['create', { vals_list: [{ name: 'a', child_ids: [[0, 0, { name: 'b' }]] }] }],
      ['name_search', { name: 'vat', context: { lang: 'en_US' } }],
    ] as const) {
      expect(await fieldRefusal(CONTACTS, 'res.partner', method, kwargs)).toBeUndefined();
    }
    expect(
      await fieldRefusal(CONTACTS, 'res.partner', 'write', {
        ids: [1],
        vals: { child_ids: [[0, 0, { vat: 'x' }]] },
      }),
    ).toContain('field vat');
  });

  it('refuses on a model with field rules a method whose field use it cannot see, and only there', async () => {
    expect(await fieldRefusal(CONTACTS, 'res.partner', 'message_post', { ids: [1], body: 'x' })).toContain(
      'the proxy cannot see which fields message_post uses',
    );
    expect(await fieldRefusal(CONTACTS, 'sale.order', 'action_confirm', { ids: [1] })).toBeUndefined();
  });

  it('property: a denied field named in any field place of any understood method is refused', async () => {
    const placed = fc.constantFrom(
      (f: string) => ['search_read', { fields: ['name', f] }],
      (f: string) => ['search_read', { domain: [[f, '=', 1]] }],
      (f: string) => ['search_read', { domain: [[`parent_id.${f}`, '=', 1]] }],
      (f: string) => ['search', { order: `${f} desc` }],
      (f: string) => ['read_group', { groupby: [`${f}:month`] }],
      (f: string) => ['formatted_read_group', { aggregates: [`${f}:sum`] }],
      (f: string) => ['create', { vals_list: [{ [f]: 1 }] }],
      (f: string) => ['write', { ids: [1], vals: { [f]: 1 } }],
      (f: string) => ['web_read', { ids: [1], specification: { [f]: {} } }],
      (f: string) => ['web_read', { ids: [1], specification: { parent_id: { fields: { [f]: {} } } } }],
      (f: string) => ['export_data', { ids: [1], fields_to_export: [`parent_id/${f}`] }],
    );
    await fc.assert(
      fc.asyncProperty(placed, fc.constantFrom('vat', 'bank_ids'), async (place, field) => {
        const [method, kwargs] = place(field) as [string, Record<string, unknown>];
        expect(await fieldRefusal(CONTACTS, 'res.partner', method, kwargs)).toContain(
          `field ${field} of res.partner`,
        );
      }),
    );
  });

  it('every understood method has a shape, and the list is the documented one', async () => {
    const doc = (await import('node:fs')).readFileSync(
      new URL('../../docs/guide/policies.md', import.meta.url),
      'utf8',
    );
    for (const method of CALL_SHAPES.keys()) expect(doc).toContain(`\`${method}\``);
  });
});

describe('the answer filter', () => {
  const deniedNames = new Set(['vat', 'bank_ids']);
  const denied = (field: string) => deniedNames.has(field);

  it('removes denied fields from every answer shape, numbers as the ERP spelt them', () => {
    const raw = (text: string) =>
      filterOutcome({ kind: 'raw_result', json: Buffer.from(text) }, 'records', denied);
    const records = raw('[{"id":1,"vat":"BE1","amount":1.0,"big":12345678901234567890,"bank_ids":[1e2]}]');
    expect(records.kind === 'raw_result' && records.json.toString()).toBe(
      '[{"id":1,"amount":1.0,"big":12345678901234567890}]',
    );
    const untouched = Buffer.from('[{"id": 1.0, "name": "a"}]');
    const same = filterOutcome({ kind: 'raw_result', json: untouched }, 'records', denied);
    expect(same.kind === 'raw_result' && same.json).toBe(untouched);
    const web = filterOutcome(
      { kind: 'raw_result', json: Buffer.from('{"length":1,"records":[{"id":1,"vat":"x"}]}') },
      'web_records',
      denied,
    );
    expect(web.kind === 'raw_result' && web.json.toString()).toBe('{"length":1,"records":[{"id":1}]}');
    const fields = { name: { type: 'char' }, vat: { type: 'char' } };
    expect(removeDeniedFields(fields, 'by_field', denied)).toBe(true);
    expect(fields).toEqual({ name: { type: 'char' } });
    const groups = [{ name: 'a', __count: 2, 'vat:count_distinct': 1, vat: 3, name_count: 2, vat_count: 1 }];
    removeDeniedFields(groups, 'groups', denied);
    expect(groups).toEqual([{ name: 'a', __count: 2, name_count: 2, vat_count: 1 }]);
    // Under an allow rule: Odoo's own keys and the lazy count of an allowed field stay.
    const allowed = new Set(['name', 'id']);
    const allowGroups = [
      { name: 'a', __count: 2, __domain: [], name_count: 2, vat: 3, 'vat:max': 1, __range: {} },
    ];
    removeDeniedFields(allowGroups, 'groups', (field) => !allowed.has(field));
    expect(allowGroups).toEqual([{ name: 'a', __count: 2, __domain: [], name_count: 2, __range: {} }]);
    const error = { kind: 'erp_error', code: 1, message: 'm', data: { vat: 1 } } as const;
    expect(filterOutcome(error, 'records', denied)).toBe(error);
  });

  it('property: a filtered answer carries no denied field and keeps every other byte of each value', () => {
    const number = fc.oneof(
      fc.integer().map(String),
      fc.constantFrom('1.0', '1e400', '-0', '12345678901234567890', '2.50'),
    );
    const value = fc.oneof(
      number,
      fc.string().map((s) => JSON.stringify(s)),
      fc.constant('false'),
    );
    const name = fc.constantFrom('id', 'name', 'vat', 'bank_ids', 'amount', '__proto__');
    const record = fc.dictionary(name, value).map(
      (members) =>
        `{${Object.entries(members)
          .map(([k, v]) => `${JSON.stringify(k)}:${v}`)
          .join(',')}}`,
    );
    fc.assert(
      fc.property(fc.array(record, { maxLength: 4 }), (records) => {
        const text = `[${records.join(',')}]`;
        const out = filterOutcome({ kind: 'raw_result', json: Buffer.from(text) }, 'records', denied);
        const json = out.kind === 'raw_result' ? out.json.toString() : '';
        const parsed = JSON.parse(json) as Record<string, unknown>[];
        for (const item of parsed) {
          expect(Object.hasOwn(item, 'vat') || Object.hasOwn(item, 'bank_ids')).toBe(false);
        }
        const kept = (JSON.parse(text) as Record<string, unknown>[]).map((item) => {
          const { vat: _v, bank_ids: _b, ...rest } = item;
          return rest;
        });
        expect(parsed).toEqual(kept);
        for (const spelling of ['1.0', '1e400', '12345678901234567890', '2.50'])
          if (text.includes(`:${spelling}`) && !json.includes(spelling)) {
            // Only a removed member may take a spelling away.
            expect(
              records.some((r) => r.includes(`"vat":${spelling}`) || r.includes(`"bank_ids":${spelling}`)),
            ).toBe(true);
          }
      }),
    );
  });
});

describe('lossless JSON', () => {
  it('property: parse then write gives the canonical text JSON.stringify would, numbers as spelt', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        expect(stringifyLossless(parseLossless(text))).toBe(
          JSON.stringify(JSON.parse(text), (_k, v) => v).replace(/-0(?=[,\]}]|$)/g, '-0'),
        );
      }),
    );
    expect(
      stringifyLossless(
        parseLossless(' {"a" : [1.0, 1e400, 12345678901234567890], "__proto__": {"b": null}} '),
      ),
    ).toBe('{"a":[1.0,1e400,12345678901234567890],"__proto__":{"b":null}}');
    expect(() => parseLossless('{"a":}')).toThrow('not JSON');
  });
});

describe('the company rule', () => {
  const companies = new Map([['erp_a', [2, 3]]]);
  const decide = (
    kwargs: Record<string, unknown>,
    method = 'search_read',
    db = 'erp_a',
    args?: unknown[],
  ) => {
    const lossless = parseLossless(JSON.stringify(kwargs)) as { [name: string]: LosslessValue };
    const decision = companyRule(companies, {
      method,
      db,
      kwargs: lossless,
      ...(args ? { args: parseLossless(JSON.stringify(args)) as LosslessValue[] } : {}),
    });
    return { decision, kwargs: JSON.parse(stringifyLossless(lossless)) as Record<string, unknown> };
  };

  it("sets the key's list when the caller sets none, an empty list, false or null; keeps a subset", () => {
    for (const context of [
      undefined,
      {},
      { allowed_company_ids: [] },
      { allowed_company_ids: false },
      { allowed_company_ids: null },
    ]) {
      const { decision, kwargs } = decide(context === undefined ? { domain: [] } : { context });
      expect(decision).toEqual({ changed: true });
      expect((kwargs.context as Record<string, unknown>).allowed_company_ids).toEqual([2, 3]);
    }
    const subset = decide({ context: { allowed_company_ids: [3], lang: 'en_US' } });
    expect(subset.decision).toEqual({ changed: false });
    expect(subset.kwargs.context).toEqual({ allowed_company_ids: [3], lang: 'en_US' });
    expect(
      decide({ context: { company_id: 2, default_company_id: 3, force_company: [2] } }).decision,
    ).toEqual({ changed: true });
  });

  it("refuses one id given as allowed_company_ids, even one of the key's: not a list (found by the property below)", () => {
    for (const id of [3, 1]) {
      const { decision, kwargs } = decide({ context: { allowed_company_ids: id } });
      expect(decision.refusal?.rule).toBe('company');
      expect(decision.refusal?.message).toContain('or is not a list');
      expect(kwargs.context).toEqual({ allowed_company_ids: id });
    }
  });

  it.each([
    [
      'a database the map does not name',
      { context: {} },
      'search_read',
      'erp_b',
      'database "erp_b" is not in this key\'s companies',
    ],
    [
      'an id outside in allowed_company_ids',
      { context: { allowed_company_ids: [2, 1] } },
      'search_read',
      'erp_a',
      'allowed_company_ids',
    ],
    [
      'a non-list',
      { context: { allowed_company_ids: 'all' } },
      'search_read',
      'erp_a',
      'allowed_company_ids',
    ],
    [
      'force_company outside',
      { context: { force_company: 1 } },
      'search_read',
      'erp_a',
      'context.force_company',
    ],
    ['company_id outside', { context: { company_id: 1 } }, 'search_read', 'erp_a', 'context.company_id'],
    [
      'default_company_id false',
      { context: { default_company_id: false } },
      'create',
      'erp_a',
      'context.default_company_id',
    ],
    ['company outside', { context: { company: [2, 1] } }, 'search_read', 'erp_a', 'context.company'],
    ['a context that is no object', { context: 'x' }, 'search_read', 'erp_a', 'not an object'],
    [
      'a nested context in a specification',
      { specification: { partner_id: { fields: {}, context: { allowed_company_ids: [1] } } } },
      'web_search_read',
      'erp_a',
      'web_',
    ],
    [
      'company_id outside in create values',
      { vals_list: [{ company_id: 1 }] },
      'create',
      'erp_a',
      'company_id in the values',
    ],
    [
      'company_id false in write values',
      { ids: [1], vals: { company_id: false } },
      'write',
      'erp_a',
      'company_id in the values',
    ],
    [
      'company_id in x2many commands',
      { vals_list: [{ line_ids: [[0, 0, { company_id: 1 }]] }] },
      'create',
      'erp_a',
      'company_id in the values',
    ],
    [
      'company_ids widening',
      { ids: [1], vals: { company_ids: [[6, 0, [2, 1]]] } },
      'write',
      'erp_a',
      'company_ids',
    ],
    ['company_ids linking', { ids: [1], vals: { company_ids: [[4, 1]] } }, 'write', 'erp_a', 'company_ids'],
  ])('refuses %s', (_what, kwargs, method, db, message) => {
    const { decision } = decide(kwargs, method, db);
    expect(decision.refusal?.rule).toBe('company');
    expect(decision.refusal?.message).toContain(message);
  });

  it('reads positional values (v1 params)', () => {
    expect(decide({}, 'write', 'erp_a', [[1], { company_id: 1 }]).decision.refusal?.rule).toBe('company');
    expect(decide({}, 'create', 'erp_a', [{ company_id: 3 }]).decision).toEqual({ changed: true });
  });

  it("property: whatever the caller sets, the call runs with a non-empty subset of the key's companies, or is refused", () => {
    const id = fc.integer({ min: 1, max: 5 });
    const companyValue = fc.oneof(id, fc.array(id), fc.constant(false), fc.constant(null), fc.constant('x'));
    const context = fc.record(
      {
        allowed_company_ids: companyValue,
        force_company: companyValue,
        company_id: companyValue,
        default_company_id: companyValue,
        lang: fc.constant('en_US'),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(context, (ctx) => {
        const { decision, kwargs } = decide({ context: ctx });
        if (decision.refusal !== undefined) return;
        const sent = kwargs.context as Record<string, unknown>;
        const allowed = sent.allowed_company_ids as number[];
        expect(allowed.length).toBeGreaterThan(0);
        expect(allowed.every((company) => [2, 3].includes(company))).toBe(true);
        for (const key of ['force_company', 'company_id', 'default_company_id']) {
          if (!Object.hasOwn(sent, key)) continue;
          const value = sent[key];
          for (const company of Array.isArray(value) ? value : [value]) expect([2, 3]).toContain(company);
        }
      }),
    );
  });
});

describe('applyContentRules', () => {
  const call = (method: string, kwargs: Record<string, unknown>, extra: Partial<ErpCall> = {}): ErpCall => ({
    baseUrl: new URL('https://erp.example.com'),
    db: 'erp_a',
    apiKey: 'k',
    model: 'res.partner',
    method,
    kwargsJson: JSON.stringify(kwargs).replace('"=",1]', '"=",1.0]'),
    ...extra,
  });
  const both = policyOf({ fields: { 'res.partner': { deny: ['vat'] } }, companies: { erp_a: [2] } });

  it('field then company: a refused field never asks the company rule; the context is set, numbers as spelt', async () => {
    await expect(
      applyContentRules(
        both,
        call('search_read', { fields: ['vat'], context: { allowed_company_ids: [9] } }),
        schema(SCHEMA),
      ),
    ).rejects.toMatchObject({ rule: 'field' });
    const ruled = await applyContentRules(
      both,
      call('search_read', { domain: [['amount', '=', 1]] }),
      schema(SCHEMA),
    );
    expect(ruled.call.kwargsJson).toBe(
      '{"domain":[["amount","=",1.0]],"context":{"allowed_company_ids":[2]}}',
    );
    const answered = ruled.answer?.({ kind: 'raw_result', json: Buffer.from('[{"id":1,"vat":"x"}]') });
    expect(answered?.kind === 'raw_result' && answered.json.toString()).toBe('[{"id":1}]');
    const kept = await applyContentRules(
      both,
      call('search_read', { context: { allowed_company_ids: [2] } }),
      schema(SCHEMA),
    );
    expect(kept.call.kwargsJson).toBe('{"context":{"allowed_company_ids":[2]}}');
  });

  it('a model without field rules gets no answer filter; a key without companies keeps its bytes', async () => {
    const fieldsOnly = policyOf({ fields: { 'res.partner': { deny: ['vat'] } } });
    const sent = call('search_read', { fields: ['name'] }, { model: 'sale.order' });
    const ruled = await applyContentRules(fieldsOnly, sent, schema(SCHEMA));
    expect(ruled.call).toBe(sent);
    expect(ruled.answer).toBeUndefined();
  });
});

describe('the fields_get lookup', () => {
  it('reads relations and related paths, keeps them per scope and model, and keeps no failure', async () => {
    expect(
      fieldInfosOf({
        a: { type: 'many2one', relation: 'res.partner' },
        b: { type: 'char', relation: '' },
        email: { type: 'char', related: 'partner_id.email' },
      }),
    ).toEqual(
      new Map([
        ['a', { relation: 'res.partner' }],
        ['b', {}],
        ['email', { related: 'partner_id.email' }],
      ]),
    );
    let asked = 0;
    const fieldsOf = cachedFieldsOf(`scope-${Math.random()}`, async () => {
      asked += 1;
      if (asked === 1) throw new Error('down');
      return { partner_id: { relation: 'res.partner' } };
    });
    await expect(fieldsOf('sale.order')).rejects.toThrow('down');
    expect((await fieldsOf('sale.order')).get('partner_id')).toEqual({ relation: 'res.partner' });
    await fieldsOf('sale.order');
    expect(asked).toBe(2);
  });
});
