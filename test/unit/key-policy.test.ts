/**
 * Key policies (README, "Key policies"): the format read at load (fail closed, messages naming the
 * key's name and the field, never the key), the one list of read methods, the one check on what a
 * call asks for, the MCP tool list of a key, and what operators see (metrics, CloudWatch source).
 */
import { describe, expect, it } from 'vitest';
import { checkKeyPolicy, type PolicyQuestion, toolsForKey } from '../../lambdas/core/key-policy-check.ts';
import { TOOLS } from '../../lambdas/core/mcp/tools.ts';
import { LocalMetricsStore } from '../../lambdas/operator/local-metrics-store.ts';
import { buildMetricDataQueries, familiesFromResults } from '../../lambdas/operator/metrics-source.ts';
import { loadConfig, parseProxyKeys } from '../../lambdas/platform/config.ts';
import { KeyPolicyRefusedError } from '../../lambdas/platform/errors.ts';
import {
  isReadMethod,
  KEY_POLICY_APIS,
  type KeyPolicy,
  modelListDomain,
  READ_METHODS,
} from '../../lambdas/platform/key-policy.ts';
import { createMetrics } from '../../lambdas/platform/metrics/powertools.ts';
import { recordRequest } from '../../lambdas/platform/metrics/record.ts';

const KEY = 'policy-key-SECRET-0123456789';

/** The policy of a one-key document with this `policy`. */
function policyOf(policy: unknown): KeyPolicy {
  const [entry] = parseProxyKeys(JSON.stringify({ keys: [{ name: 'reporting', key: KEY, policy }] }));
  if (entry?.policy === undefined) throw new Error('no policy parsed');
  return entry.policy;
}

function messageOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a throw');
}

/** The refusal of a question, or `undefined` when it is allowed (sync questions only). */
function refusal(policy: KeyPolicy | undefined, question: PolicyQuestion): KeyPolicyRefusedError | undefined {
  try {
    const pending = checkKeyPolicy(policy, question, () => Promise.reject(new Error('no DNS in this test')));
    expect(pending).toBeUndefined();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(KeyPolicyRefusedError);
    return error as KeyPolicyRefusedError;
  }
}

describe('the policy format', () => {
  it('reads every field, and a key without policy has none', () => {
    const keys = parseProxyKeys(
      JSON.stringify({
        keys: [
          { name: 'billing', key: 'billing-key-0123456789' },
          {
            name: 'reporting',
            key: KEY,
            policy: {
              apis: ['v1', 'v2', 'version', 'mcp', 'operator', 'audit', 'brakes'],
              access: 'read',
              models: ['res.partner', 'sale.*'],
              targets: ['erp.example.com', '*.erp.internal', '10.20.0.0/16'],
              databases: ['prod'],
            },
          },
          { name: 'empty', key: 'empty-policy-key-0123456789', policy: {} },
        ],
      }),
    );
    expect(keys[0]?.policy).toBeUndefined();
    const policy = keys[1]?.policy;
    expect([...(policy?.apis ?? [])]).toEqual([...KEY_POLICY_APIS]);
    expect(policy?.access).toBe('read');
    expect([...(policy?.models?.exact ?? [])]).toEqual(['res.partner']);
    expect(policy?.models?.prefixes).toEqual(['sale.']);
    expect([...(policy?.targets?.exactNames ?? [])]).toEqual(['erp.example.com']);
    expect(policy?.targets?.wildcardSuffixes).toEqual(['.erp.internal']);
    expect(policy?.targets?.cidrs).toHaveLength(1);
    expect([...(policy?.databases ?? [])]).toEqual(['prod']);
    // Every field absent: nothing narrowed, access write.
    expect(keys[2]?.policy).toEqual({
      apis: undefined,
      access: 'write',
      models: undefined,
      targets: undefined,
      databases: undefined,
      digest: expect.any(String),
    });
  });

  it('works in PROXY_API_KEYS', () => {
    const config = loadConfig({
      PROXY_API_KEYS: JSON.stringify({ keys: [{ name: 'reporting', key: KEY, policy: { access: 'read' } }] }),
    });
    expect(config.localKeys[0]?.policy?.access).toBe('read');
    expect(() =>
      loadConfig({
        PROXY_API_KEYS: JSON.stringify({
          keys: [{ name: 'reporting', key: KEY, policy: { access: 'reed' } }],
        }),
      }),
    ).toThrow(
      'Invalid configuration: PROXY_API_KEYS: keys.0.policy.access (key "reporting"): expected "read" or "write"',
    );
  });

  it.each([
    [{ access: 'reed' }, 'keys.0.policy.access (key "reporting"): expected "read" or "write"'],
    [{ access: 'READ' }, 'keys.0.policy.access (key "reporting"): expected "read" or "write"'],
    [
      { apis: ['v3'] },
      'keys.0.policy.apis.0 (key "reporting"): expected one of v1, v2, version, mcp, operator, audit, brakes',
    ],
    [{ apis: [] }, 'keys.0.policy.apis (key "reporting"): an empty list allows no API'],
    [{ apis: 'v1' }, 'keys.0.policy.apis (key "reporting"): expected a list'],
    [{ models: ['res.partner '] }, 'keys.0.policy.models.0 (key "reporting"): expected a model name'],
    [{ models: ['*'] }, 'keys.0.policy.models.0 (key "reporting"): expected a model name'],
    [{ models: ['sale*'] }, 'keys.0.policy.models.0 (key "reporting"): expected a model name'],
    [{ targets: ['https://erp.example.com'] }, 'keys.0.policy.targets.0 (key "reporting"): not a host name'],
    [{ targets: ['10.0.0.0/33'] }, 'keys.0.policy.targets.0 (key "reporting"): not a host name'],
    [{ databases: [''] }, 'keys.0.policy.databases.0 (key "reporting"): a database name is not empty'],
    [{ acces: 'read' }, 'keys.0.policy (key "reporting"): unknown field "acces"'],
    [[], 'keys.0.policy (key "reporting"): expected an object'],
    ['read', 'keys.0.policy (key "reporting"): expected an object'],
  ])('fails closed on %j, naming the key and the field, never the key', (policy, expected) => {
    const message = messageOf(() =>
      parseProxyKeys(JSON.stringify({ keys: [{ name: 'reporting', key: KEY, policy }] })),
    );
    expect(message).toContain(expected);
    expect(message).not.toContain(KEY);
  });

  it('fails on a misspelt policy field of the entry, and never echoes a field name that may be a secret', () => {
    const misspelt = messageOf(() =>
      parseProxyKeys(JSON.stringify({ keys: [{ name: 'reporting', key: KEY, polcy: { access: 'read' } }] })),
    );
    expect(misspelt).toBe('proxy keys: keys.0 (key "reporting"): unknown field "polcy"');
    const secretAsField = messageOf(() =>
      parseProxyKeys(JSON.stringify({ keys: [{ name: 'reporting', key: KEY, [KEY]: true }] })),
    );
    expect(secretAsField).toBe('proxy keys: keys.0 (key "reporting"): an unknown field');
  });
});

describe('the read methods', () => {
  it('are the documented read-only methods; writes, unknown names and near names are not', () => {
    for (const method of ['search', 'search_read', 'search_count', 'read', 'fields_get', 'name_search']) {
      expect(isReadMethod(method), method).toBe(true);
    }
    for (const method of ['read_group', 'formatted_read_group', 'web_search_read', 'web_read', 'name_get']) {
      expect(isReadMethod(method), method).toBe(true);
    }
    for (const method of [
      'create',
      'write',
      'unlink',
      'copy',
      'action_archive',
      'action_unarchive',
      'name_create',
      'onchange',
      'web_save',
      'message_post',
      'toggle_active',
      'Read',
      'read ',
      ' read',
      'read\u0000',
      '_read_group',
      'search_read/../unlink',
      '',
    ]) {
      expect(isReadMethod(method), JSON.stringify(method)).toBe(false);
    }
    expect(new Set(READ_METHODS).size).toBe(READ_METHODS.length);
    expect(Object.isFrozen(READ_METHODS)).toBe(true);
  });
});

describe('checkKeyPolicy', () => {
  const reporting = policyOf({
    apis: ['v1', 'v2'],
    access: 'read',
    models: ['res.partner', 'sale.*'],
    targets: ['erp.example.com', '*.erp.internal', '10.20.0.0/16', 'fd12::/16'],
    databases: ['prod'],
  });

  it('allows everything for a key without a policy', () => {
    expect(
      refusal(undefined, {
        api: 'mcp',
        model: 'res.users',
        method: 'unlink',
        target: new URL('http://10.0.0.1'),
        db: 'x',
        tool: { name: 'unlink', writes: true },
      }),
    ).toBeUndefined();
  });

  it('names each rule that refuses, in order, never the key', () => {
    const cases: [PolicyQuestion, string, string][] = [
      [{ api: 'mcp' }, 'api', 'this key may not use POST /mcp'],
      [{ api: 'version' }, 'api', 'this key may not use the version endpoints'],
      [{ api: 'operator' }, 'api', 'this key may not use the operator endpoints (/_/license, /_/metrics)'],
      [{ method: 'create' }, 'access', 'this key may only read; create is not a read method'],
      [{ method: 'Read' }, 'access', 'this key may only read; Read is not a read method'],
      [{ method: 'read\u0000' }, 'access', 'this key may only read; "read\\u0000" is not a read method'],
      [
        { tool: { name: 'create', writes: true } },
        'access',
        'this key may only read; the tool create can change data',
      ],
      [{ model: 'res.users' }, 'model', "model res.users is not in this key's models"],
      [
        { model: 'sale.order/../res.users' },
        'model',
        'model "sale.order/../res.users" is not in this key\'s models',
      ],
      [{ db: 'test' }, 'database', 'database "test" is not in this key\'s databases'],
      [
        { target: new URL('http://10.21.0.1:8069') },
        'target',
        "target http://10.21.0.1:8069 is not in this key's targets",
      ],
      [
        { target: new URL('http://[fd13::1]') },
        'target',
        "target http://[fd13::1] is not in this key's targets",
      ],
      // The first rule that refuses names the refusal.
      [{ api: 'mcp', method: 'create', model: 'res.users' }, 'api', 'this key may not use POST /mcp'],
      [
        { method: 'create', model: 'res.users' },
        'access',
        'this key may only read; create is not a read method',
      ],
    ];
    for (const [question, rule, message] of cases) {
      const refused = refusal(reporting, question);
      expect(refused?.rule, JSON.stringify(question)).toBe(rule);
      expect(refused?.message).toBe(`Refused by this key's policy: ${message}`);
      expect(refused?.code).toBe(-32008);
      expect(refused?.httpStatus).toBe(403);
      expect(refused?.message).not.toContain(KEY);
    }
  });

  it('allows what the policy lists', () => {
    for (const question of [
      { api: 'v1', method: 'search_read', model: 'res.partner', db: 'prod' },
      { api: 'v2', method: 'read', model: 'sale.order' },
      { model: 'sale.order.line', method: 'fields_get' },
      { target: new URL('https://erp.example.com:8443') },
      { target: new URL('https://ERP.example.com.') },
      { target: new URL('http://a.b.erp.internal') },
      { target: new URL('http://10.20.3.4') },
      { target: new URL('http://[fd12::5]') },
      { target: new URL('http://[::ffff:10.20.0.9]') },
    ] satisfies PolicyQuestion[]) {
      expect(refusal(reporting, question), JSON.stringify(question)).toBeUndefined();
    }
  });

  it("resolves a host name the key's names do not list: every address must be in its CIDRs", async () => {
    const policy = policyOf({ targets: ['10.20.0.0/16'] });
    const target = new URL('http://erp.corp');
    const resolving = (addresses: string[]) => () => Promise.resolve(addresses);
    await expect(
      checkKeyPolicy(policy, { target }, resolving(['10.20.1.1', '10.20.9.9'])),
    ).resolves.toBeUndefined();
    for (const addresses of [['10.20.1.1', '10.30.0.1'], [], ['not-an-address']]) {
      await expect(checkKeyPolicy(policy, { target }, resolving(addresses))).rejects.toMatchObject({
        code: -32008,
        rule: 'target',
      });
    }
    await expect(
      checkKeyPolicy(policy, { target }, () => Promise.reject(new Error('ENOTFOUND'))),
    ).rejects.toMatchObject({ rule: 'target' });
    // With CIDR entries, a name its names do not list (nor match as a wildcard's apex) is resolved.
    for (const name of ['https://other.example.com', 'http://erp.internal']) {
      await expect(
        checkKeyPolicy(reporting, { target: new URL(name) }, resolving(['192.0.2.1'])),
      ).rejects.toThrow(`Refused by this key's policy: target ${name} is not in this key's targets`);
    }
    // Without CIDR entries a host name the list does not name is refused without asking DNS.
    const names = policyOf({ targets: ['erp.example.com'] });
    expect(() => checkKeyPolicy(names, { target }, () => Promise.reject(new Error('not asked')))).toThrow(
      KeyPolicyRefusedError,
    );
  });

  it('checks only what a question asks', () => {
    expect(refusal(reporting, {})).toBeUndefined();
    expect(refusal(policyOf({ access: 'read' }), { model: 'res.users', db: 'x' })).toBeUndefined();
    expect(refusal(policyOf({ models: ['res.partner'] }), { method: 'unlink' })).toBeUndefined();
  });
});

describe('the MCP tools of a key', () => {
  it('a read key gets no tool that changes data; other keys get the tools as they are', () => {
    const read = toolsForKey(TOOLS, policyOf({ access: 'read' })).map((tool) => tool.name);
    expect(read).toEqual(TOOLS.filter((tool) => tool.annotations.readOnlyHint).map((tool) => tool.name));
    expect(read).not.toContain('create');
    expect(read).toContain('search_read');
    expect(toolsForKey(TOOLS, policyOf({ models: ['res.partner'] }))).toBe(TOOLS);
    expect(toolsForKey(TOOLS, undefined)).toBe(TOOLS);
  });

  it("list_models' domain matches exactly the key's models, LIKE's wildcards escaped", () => {
    const policy = policyOf({ models: ['res.partner', 'res.country', 'x_a.*', 'sale.*'] });
    expect(modelListDomain(policy.models ?? { exact: new Set(), prefixes: [] })).toEqual([
      '|',
      '|',
      ['model', 'in', ['res.partner', 'res.country']],
      ['model', '=like', 'x\\_a.%'],
      ['model', '=like', 'sale.%'],
    ]);
    expect(modelListDomain(policyOf({ models: ['res.partner'] }).models!)).toEqual([
      ['model', 'in', ['res.partner']],
    ]);
  });
});

describe('what operators see', () => {
  it('a refusal is counted by key name and rule, and only a refusal', () => {
    const store = new LocalMetricsStore();
    const metrics = createMetrics(loadConfig({}), { store });
    recordRequest(
      metrics,
      {
        api: 'v1',
        outcome: 'proxy_error',
        errorCode: -32008,
        callerKeyName: 'reporting',
        policyRule: 'access',
      },
      1,
    );
    metrics.publishStoredMetrics();
    recordRequest(metrics, { api: 'v1', outcome: 'success', callerKeyName: 'reporting' }, 1);
    metrics.publishStoredMetrics();
    const family = store.families().find((entry) => entry.name === 'erp_proxy_policy_refusals');
    expect(family?.samples).toEqual([{ labels: { key: 'reporting', rule: 'access' }, value: 1 }]);
  });

  it('the CloudWatch source asks a SEARCH by key and rule, and reads its series back', () => {
    const plan = buildMetricDataQueries({
      metricsWindowSeconds: 300,
      metricsCacheSeconds: 60,
      metricsNamespace: 'ErpProxy',
      serviceName: 'erp-proxy',
      region: 'eu-central-1',
    });
    const search = plan.queries.find((query) => query.Id === plan.refusalsSearchId);
    expect(search?.Expression).toBe(
      `SEARCH('{"ErpProxy",key,rule,service} MetricName="PolicyRefusals" service="erp-proxy"', 'Sum', 300)`,
    );
    const families = familiesFromResults(
      plan,
      [
        { Id: `${plan.refusalsSearchId}_0`, Label: 'reporting|access', Values: [2, 1] },
        { Id: `${plan.refusalsSearchId}_1`, Label: 'a|b|model', Values: [1] },
        { Id: `${plan.refusalsSearchId}_2`, Label: 'agent|nonsense', Values: [5] },
      ],
      300,
    );
    expect(families.find((family) => family.name === 'erp_proxy_policy_refusals')?.samples).toEqual([
      { labels: { key: 'a|b', rule: 'model' }, value: 1 },
      { labels: { key: 'reporting', rule: 'access' }, value: 3 },
    ]);
  });
});
