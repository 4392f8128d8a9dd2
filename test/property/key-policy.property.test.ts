/**
 * Key policies, fuzzed (README, "Key policies"): every API × every policy field, allowed and refused,
 * against a reference written independently of the check; and no v1 `call_method` name, v2 method
 * name or MCP tool argument slips a write or another model past the check: whatever a caller sends,
 * what reaches the ERP under a read key limited to some models is a read method on one of those
 * models (whitespace, case, path characters and NUL included).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generatedSealKeys } from '../../lambdas/core/confirm/keys.ts';
import { checkKeyPolicy, type PolicyQuestion } from '../../lambdas/core/key-policy-check.ts';
import type { McpDeps } from '../../lambdas/core/mcp/erp-access.ts';
import TOOL_INPUT_SCHEMAS from '../../lambdas/core/mcp/tool-schemas.json' with { type: 'json' };
import { TOOLS } from '../../lambdas/core/mcp/tools.ts';
import * as requests from '../../lambdas/core/requests.ts';
import { inboundBodyOf } from '../../lambdas/middleware/json-body.ts';
import { loadConfig, parseProxyKeys } from '../../lambdas/platform/config.ts';
import { KeyPolicyRefusedError, ProxyError } from '../../lambdas/platform/errors.ts';
import {
  KEY_POLICY_APIS,
  type KeyPolicy,
  type KeyPolicyApi,
  READ_METHODS,
} from '../../lambdas/platform/key-policy.ts';
import { serveMcp } from '../../lambdas/protocol/mcp/serve.ts';
import type { ErpCall, ErpTransport } from '../../lambdas/upstream/erp-transport.ts';
import { compileTargetPolicy } from '../../lambdas/upstream/target-policy.ts';
import type { VersionClient } from '../../lambdas/upstream/version-client.ts';
import { mcpInbound } from '../support/mcp-serve.ts';
import { TEST_PROXY_KEY } from '../support/test-secrets.ts';

const KEY = 'property-key-SECRET-0123456789';
const WRITES = [
  'create',
  'write',
  'unlink',
  'copy',
  'action_archive',
  'name_create',
  'onchange',
  'toggle_active',
];
const MODELS = [
  'res.partner',
  'res.users',
  'sale.order',
  'sale.order.line',
  'account.move',
  'ir.model',
  'sale',
];

function policyOf(policy: unknown): KeyPolicy {
  const [entry] = parseProxyKeys(JSON.stringify({ keys: [{ name: 'fuzzed', key: KEY, policy }] }));
  if (entry?.policy === undefined) throw new Error('no policy');
  return entry.policy;
}

/** The rule that refuses, or `allowed` (a question whose check would need DNS counts as refused by target). */
function verdict(policy: KeyPolicy | undefined, question: PolicyQuestion): string {
  try {
    const pending = checkKeyPolicy(policy, question, () => Promise.reject(new Error('no DNS')));
    if (pending === undefined) return 'allowed';
    // DNS decides (refused here: the resolver fails); only that it is asked matters.
    pending.catch(() => {});
    return 'pending';
  } catch (error) {
    if (!(error instanceof KeyPolicyRefusedError)) throw error;
    expect(error.code).toBe(-32008);
    expect(error.httpStatus).toBe(403);
    expect(error.message).not.toContain(KEY);
    return error.rule;
  }
}

/** Names a caller might send to get past a name: the name itself and near versions of it. */
function nearNames(names: readonly string[]): fc.Arbitrary<string> {
  const mangle = fc.constantFrom(
    (n: string) => n,
    (n: string) => ` ${n}`,
    (n: string) => `${n} `,
    (n: string) => `${n}\n`,
    (n: string) => `${n}\u0000`,
    (n: string) => `\u0000${n}`,
    (n: string) => n.toUpperCase(),
    (n: string) => n.charAt(0).toUpperCase() + n.slice(1),
    (n: string) => `${n}/../unlink`,
    (n: string) => `../${n}`,
    (n: string) => `${n}/`,
    (n: string) => `${n}.x`,
    (n: string) => `${n}%00`,
    (n: string) => n.replace('.', '/'),
    (n: string) => n.replace('_', '-'),
    (n: string) => `_${n}`,
  );
  return fc.oneof(
    fc.tuple(fc.constantFrom(...names), mangle).map(([name, how]) => how(name)),
    fc.string({ maxLength: 40 }),
    fc.stringMatching(/^[a-z_.]{1,20}$/),
  );
}

/** Reference: whether `model` is listed by entries (exact, or `prefix.*` followed by a valid tail). */
function referenceModelListed(entries: readonly string[], model: string): boolean {
  return entries.some((entry) => {
    if (!entry.endsWith('.*')) return entry === model;
    const prefix = entry.slice(0, -1);
    const tail = model.slice(prefix.length);
    return model.startsWith(prefix) && /^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/.test(tail);
  });
}

/** Every declared tool's name. */
const MCP_TOOL_NAMES = TOOLS.map((tool) => tool.name);

describe('every API × every policy field, against a reference', () => {
  const apisArb = fc.subarray([...KEY_POLICY_APIS], { minLength: 1 });
  const modelsArb = fc.uniqueArray(
    fc.constantFrom('res.partner', 'sale.*', 'account.move', 'res.*', 'x_a.*'),
    {
      minLength: 1,
    },
  );
  const dbsArb = fc.uniqueArray(fc.constantFrom('prod', 'test', 'erp_a'), { minLength: 1 });
  const targetsArb = fc.uniqueArray(fc.constantFrom('erp.example.com', '*.erp.internal', '10.20.0.0/16'), {
    minLength: 1,
  });

  it('a question is allowed exactly when every field the policy has allows it; the first refusing rule is named', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(
        fc.record(
          {
            apis: apisArb,
            access: fc.constantFrom('read', 'write'),
            models: modelsArb,
            databases: dbsArb,
            targets: targetsArb,
          },
          { requiredKeys: [] },
        ),
        fc.record(
          {
            api: fc.constantFrom<KeyPolicyApi>(...KEY_POLICY_APIS),
            method: fc.oneof(fc.constantFrom(...READ_METHODS, ...WRITES), nearNames(['read', 'search_read'])),
            model: fc.oneof(fc.constantFrom(...MODELS), nearNames(MODELS)),
            db: fc.constantFrom('prod', 'test', 'erp_a', 'Prod', ' prod'),
            target: fc.constantFrom(
              'https://erp.example.com',
              'https://ERP.example.com',
              'http://a.erp.internal:8069',
              'http://erp.internal',
              'http://10.20.1.2',
              'http://10.21.1.2',
              'http://[::ffff:10.20.0.1]',
            ),
          },
          { requiredKeys: [] },
        ),
        (document, asked) => {
          const policy = policyOf(document);
          const { target, ...rest } = asked;
          const question: PolicyQuestion = {
            ...rest,
            ...(target === undefined ? {} : { target: new URL(target) }),
          };
          const expected = (() => {
            // The audit and the brakes are a key's only when its policy lists them.
            if (
              (asked.api === 'audit' || asked.api === 'brakes') &&
              document.apis?.includes(asked.api) !== true
            )
              return 'api';
            if (asked.api !== undefined && document.apis !== undefined && !document.apis.includes(asked.api))
              return 'api';
            if (
              asked.method !== undefined &&
              document.access === 'read' &&
              !READ_METHODS.includes(asked.method)
            )
              return 'access';
            if (
              asked.model !== undefined &&
              document.models !== undefined &&
              !referenceModelListed(document.models, asked.model)
            )
              return 'model';
            if (
              asked.db !== undefined &&
              document.databases !== undefined &&
              !(document.databases as readonly string[]).includes(asked.db)
            )
              return 'database';
            if (asked.target !== undefined && document.targets !== undefined) {
              const listed: readonly string[] = document.targets;
              const cidr = listed.includes('10.20.0.0/16');
              const name = (allowedBy: string | undefined): string =>
                allowedBy !== undefined && listed.includes(allowedBy)
                  ? 'allowed'
                  : cidr
                    ? 'pending'
                    : 'target';
              const byTarget: Record<string, string> = {
                'https://erp.example.com': name('erp.example.com'),
                'https://ERP.example.com': name('erp.example.com'),
                'http://a.erp.internal:8069': name('*.erp.internal'),
                'http://erp.internal': name(undefined),
                'http://10.20.1.2': cidr ? 'allowed' : 'target',
                'http://[::ffff:10.20.0.1]': cidr ? 'allowed' : 'target',
                'http://10.21.1.2': 'target',
              };
              return byTarget[asked.target];
            }
            return 'allowed';
          })();
          const got = verdict(policy, question);
          seen.add(got);
          expect(got).toBe(expected);
          // A key without a policy, or with an empty one, is never refused, but for the audit and the
          // brakes, which only a policy that lists them has.
          const unlisted = question.api === 'audit' || question.api === 'brakes' ? 'api' : 'allowed';
          expect(verdict(undefined, question)).toBe(unlisted);
          expect(verdict(policyOf({}), question)).toBe(unlisted);
        },
      ),
      { numRuns: 2000 },
    );
    // Every outcome came up: the reference was compared on each rule, not on one.
    expect([...seen].sort()).toEqual(['access', 'allowed', 'api', 'database', 'model', 'pending', 'target']);
  });

  it('an unknown field or value anywhere in a policy fails the whole document, naming the key, never the key', () => {
    const field = fc
      .stringMatching(/^[a-z_]{1,12}$/)
      .filter((name) => !['apis', 'access', 'models', 'targets', 'databases'].includes(name));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.tuple(field, fc.jsonValue()).map(([name, value]) => ({ [name]: value })),
          fc
            .string()
            .filter((v) => v !== 'read' && v !== 'write')
            .map((access) => ({ access })),
          fc
            .array(
              fc.string().filter((v) => !(KEY_POLICY_APIS as readonly string[]).includes(v)),
              { minLength: 1 },
            )
            .map((apis) => ({ apis })),
          fc.jsonValue().filter((v) => typeof v !== 'object' || v === null || Array.isArray(v)),
        ),
        (policy) => {
          let message = '';
          try {
            parseProxyKeys(JSON.stringify({ keys: [{ name: 'fuzzed', key: KEY, policy }] }));
          } catch (error) {
            message = (error as Error).message;
          }
          expect(message).toMatch(/^proxy keys: keys\.0\.policy[.\w]* \(key "fuzzed"\): /);
          expect(message).not.toContain(KEY);
        },
      ),
    );
  });
});

/** A read key limited to res.partner and sale.* (every API). */
const READ_KEY = policyOf({ access: 'read', models: ['res.partner', 'sale.*'] });

function allowedCall(call: ErpCall): boolean {
  return READ_METHODS.includes(call.method) && referenceModelListed(['res.partner', 'sale.*'], call.model);
}

/** How many fuzzed calls passed and were refused (neither may be none: the properties are not vacuous). */
const tally = { passed: 0, refused: 0 };

/** Runs a parsed call through the check as forwarding does; `true` when it would reach the ERP. */
async function passes(call: ErpCall): Promise<boolean> {
  try {
    await checkKeyPolicy(READ_KEY, {
      model: call.model,
      method: call.method,
      target: call.baseUrl,
      db: call.db,
    });
    tally.passed += 1;
    return true;
  } catch (error) {
    if (!(error instanceof KeyPolicyRefusedError)) throw error;
    tally.refused += 1;
    return false;
  }
}

function expectBothOutcomes(): void {
  expect(tally.passed).toBeGreaterThan(20);
  expect(tally.refused).toBeGreaterThan(20);
  tally.passed = 0;
  tally.refused = 0;
}

/** The call a body becomes, or `undefined` when the body is refused before the policy. */
async function parsed(
  parse: (body: Awaited<ReturnType<typeof inboundBodyOf>>) => ErpCall,
  body: unknown,
): Promise<ErpCall | undefined> {
  try {
    return parse(await inboundBodyOf(JSON.stringify(body)));
  } catch (error) {
    if (error instanceof ProxyError) return undefined;
    throw error;
  }
}

const ERP_INSTANCE = { url: 'http://127.0.0.1:8069', db: 'erp_a', api_key: 'e'.repeat(40), user_id: 2 };

describe('no name slips a write or another model past the check', () => {
  const methodArb = fc.oneof(
    nearNames([...READ_METHODS.slice(0, 6), ...WRITES]),
    fc.constantFrom(...READ_METHODS),
  );
  const modelArb = fc.oneof(nearNames(MODELS), fc.constantFrom(...MODELS));

  it('v1: any action, call_method fn_name and model_id', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('search_read', 'read', 'create', 'write', 'unlink', 'call_method', 'search_count'),
        methodArb,
        modelArb,
        async (action, fnName, model) => {
          const call = await parsed(requests.parseV1Call, {
            id: 'fuzz',
            erp_instance: ERP_INSTANCE,
            action,
            fn_name: fnName,
            model_id: model,
            params: [[]],
          });
          if (call === undefined) return;
          // Allowed exactly when what is sent is a read method on a listed model.
          expect(await passes(call)).toBe(allowedCall(call));
          if (action === 'call_method') expect(call.method).toBe(fnName.trim());
        },
      ),
      { numRuns: 1500 },
    );
    expectBothOutcomes();
  });

  it('v2: any method and model_id', async () => {
    await fc.assert(
      fc.asyncProperty(methodArb, modelArb, async (method, model) => {
        const call = await parsed(requests.parseV2Call, {
          id: 'fuzz',
          erp_instance: ERP_INSTANCE,
          model_id: model,
          method,
          kwargs: {},
        });
        if (call === undefined) return;
        expect(call.method).toBe(method);
        expect(call.model).toBe(model);
        expect(await passes(call)).toBe(allowedCall(call));
      }),
      { numRuns: 1500 },
    );
    expectBothOutcomes();
  });

  it('MCP: whatever tool and arguments, only read methods on listed models reach the ERP', async () => {
    const config = loadConfig({ PROXY_API_KEY: TEST_PROXY_KEY });
    const sent: ErpCall[] = [];
    const mcpTally = { reached: 0, refused: 0 };
    const transport: ErpTransport = {
      call: async (call) => {
        sent.push(call);
        return {
          kind: 'result',
          value: call.method === 'search_read' ? [{ id: 1, model: 'res.partner', name: 'P' }] : 1,
        };
      },
    };
    const deps: McpDeps = {
      config,
      policy: compileTargetPolicy({ allowedTargets: config.allowedTargets, allowedDatabases: [] }),
      versions: {
        cached: () => ({ version: '19.0', version_info: [19, 0, 0, 'final', 0, ''] }),
        version: async () => ({ version: '19.0', version_info: [19, 0, 0, 'final', 0, ''] }),
      } as unknown as VersionClient,
      named: transport,
      positional: transport,
      writeTools: true,
      idempotency: { store: undefined, ttlSeconds: 60 },
      confirm: { keys: generatedSealKeys(), store: undefined, ttlSeconds: 60 },
    };
    const argumentsArb = fc.record(
      {
        model: modelArb,
        method: methodArb,
        ids: fc.constant([1]),
        values: fc.constant({ name: 'x' }),
        args: fc.constantFrom([], ['x']),
        kwargs: fc.constantFrom({}, { name: 'x' }),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...MCP_TOOL_NAMES), argumentsArb, async (name, generated) => {
        sent.length = 0;
        // Only the arguments the tool takes (its input schema is strict: another is a tool error
        // before any ERP call, which would prove nothing here).
        const accepted =
          (TOOL_INPUT_SCHEMAS as Record<string, { properties?: Record<string, unknown> }>)[name]
            ?.properties ?? {};
        const args = Object.fromEntries(Object.entries(generated).filter(([key]) => key in accepted));
        const inbound = mcpInbound(
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
          {
            accept: 'application/json, text/event-stream',
            'content-type': 'application/json',
            'mcp-protocol-version': '2025-11-25',
          },
          {
            erp: {
              from: 'headers',
              headers: { url: 'http://127.0.0.1:8069', db: 'erp_a', apiKey: 'b'.repeat(40), userId: '2' },
            },
            keyPolicy: READ_KEY,
          },
        );
        const { response } = await serveMcp(inbound, deps);
        if (sent.length > 0) mcpTally.reached += 1;
        for (const call of sent) {
          // list_models' own read of ir.model is narrowed to the key's models instead.
          if (name === 'list_models') {
            expect(call).toMatchObject({ model: 'ir.model', method: 'search_read' });
            continue;
          }
          expect(allowedCall(call), `${name} sent ${call.model}.${call.method}`).toBe(true);
        }
        const result = (
          JSON.parse(response.body) as { result?: { isError?: boolean; content: { text: string }[] } }
        ).result;
        if (
          result?.isError &&
          sent.length === 0 &&
          /Refused by this key/.test(result.content[0]?.text ?? '')
        ) {
          mcpTally.refused += 1;
          expect(JSON.parse(result.content[0]?.text ?? '{}')).toMatchObject({
            error: { source: 'proxy', code: -32008 },
          });
        }
      }),
      { numRuns: 400 },
    );
    expect(mcpTally.reached).toBeGreaterThan(20);
    expect(mcpTally.refused).toBeGreaterThan(20);
  });
});
