/**
 * The gate (core/gate.ts): its steps' names are docs/design.md's "The order of checks", and a call
 * the policy step refuses reaches no later step.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GATE_STEPS, type GateStep, gateOrder, passGate } from '../../lambdas/core/gate.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';
import { KeyPolicyRefusedError } from '../../lambdas/platform/errors.ts';
import type { KeyPolicy } from '../../lambdas/platform/key-policy.ts';
import { compileTargetPolicy } from '../../lambdas/upstream/target-policy.ts';

/** The steps before the gate, the chain's (handlers/chain.ts). */
const CHAIN_STEPS = ['route-and-key', 'license', 'body'];

/** The step names of the numbered list under "### The order of checks". */
function documentedOrder(): string[] {
  const text = readFileSync(new URL('../../docs/design.md', import.meta.url), 'utf8');
  const start = text.indexOf('### The order of checks');
  expect(start).toBeGreaterThan(0);
  const section = text.slice(start, text.indexOf('\n### ', start + 1));
  return [...section.matchAll(/^\d+\. `([a-z-]+)`/gm)].map((match) => match[1] as string);
}

const config = loadConfig({ PROXY_API_KEY: 'k'.repeat(32) });
const deps = {
  config,
  policy: compileTargetPolicy({
    allowedTargets: config.allowedTargets,
    allowedDatabases: config.allowedDatabases,
  }),
  idempotency: { store: undefined, ttlSeconds: 60 },
};

/** The steps up to and with the policy step, and the steps after it (a spy goes between). */
const POLICY_AT = GATE_STEPS.findIndex((step) => step.name === 'policy');
const UP_TO_POLICY = GATE_STEPS.slice(0, POLICY_AT + 1);
const AFTER_POLICY = GATE_STEPS.slice(POLICY_AT + 1);

describe('the gate', () => {
  it("names its steps as docs/design.md's order of checks does, in the same order", () => {
    expect(gateOrder()).toEqual([
      'audit',
      'policy',
      'brakes',
      'idempotency-lookup',
      'confirmation',
      'limits',
      'audit-pending',
      'idempotency-sent',
      'run',
      'release',
      'record',
      'audit-outcome',
    ]);
    expect(documentedOrder()).toEqual([...CHAIN_STEPS, ...gateOrder()]);
  });

  it('takes a new step in one place: its name lands in the order where it is inserted', () => {
    const another: GateStep = {
      name: 'another',
      applies: () => true,
      pass: (call, _deps, rest) => rest(call),
    };
    const steps = [...GATE_STEPS.slice(0, 5), another, ...GATE_STEPS.slice(5)];
    expect(gateOrder(steps)).toEqual([
      'audit',
      'policy',
      'brakes',
      'idempotency-lookup',
      'confirmation',
      'another',
      'limits',
      'audit-pending',
      'idempotency-sent',
      'run',
      'release',
      'record',
      'audit-outcome',
    ]);
  });

  it('a call the policy refuses reaches no later step; one it allows passes the steps that apply, in order', async () => {
    const seen: string[] = [];
    const spy = (name: string): GateStep => ({
      name,
      applies: () => true,
      pass: (call, _deps, rest) => {
        seen.push(name);
        return rest(call);
      },
    });
    const steps = [...UP_TO_POLICY, spy('later'), ...AFTER_POLICY];
    const run = async () => {
      seen.push('run');
      return 'ran';
    };
    const inbound = {
      identity: { kind: 'key', name: 'k' } as const,
      keyPolicy: {
        apis: undefined,
        access: 'write',
        models: { exact: new Set(['res.partner']), prefixes: [] },
        targets: undefined,
        databases: undefined,
        limits: undefined,
        confirm: undefined,
        methods: undefined,
        fields: undefined,
        companies: undefined,
      } as KeyPolicy | undefined,
      remainingMs: undefined,
    };
    const question = { model: 'res.users', method: 'read', target: new URL('http://127.0.0.1:9'), db: 'a' };
    await expect(passGate({ inbound, question, once: undefined, run }, deps, steps)).rejects.toBeInstanceOf(
      KeyPolicyRefusedError,
    );
    expect(seen).toEqual([]);
    const passed = await passGate(
      { inbound: { ...inbound, keyPolicy: undefined }, question, once: undefined, run },
      deps,
      steps,
    );
    // No key and no limits: the idempotency and limits steps are passed over.
    expect(passed).toEqual({ value: 'ran' });
    expect(seen).toEqual(['later', 'run']);
  });

  const question = { model: 'res.partner', method: 'read', target: new URL('http://127.0.0.1:9'), db: 'a' };
  const inbound = {
    identity: { kind: 'key', name: 'k' } as const,
    keyPolicy: undefined,
    remainingMs: undefined,
  };

  it('a step that passes the call on twice throws, and the call runs once (a second pass would run a write twice)', async () => {
    let runs = 0;
    const twice: GateStep = {
      name: 'twice',
      applies: () => true,
      pass: async (call, _deps, rest) => {
        await rest(call);
        return rest(call);
      },
    };
    const steps = [...UP_TO_POLICY, twice, ...AFTER_POLICY];
    const run = async () => {
      runs += 1;
      return 'ran';
    };
    await expect(passGate({ inbound, question, once: undefined, run }, deps, steps)).rejects.toThrow(
      "The gate's step twice passed the call on twice.",
    );
    expect(runs).toBe(1);
  });

  it("names each step's pass after its step, so a stack trace says which step it is in", () => {
    const names = GATE_STEPS.map((step) => step.pass.name);
    expect(names).toEqual([
      'passAudit',
      'passPolicy',
      'passBrakes',
      'passIdempotency',
      'passConfirmationStep',
      'passLimits',
      'passAuditPending',
      'passSent',
      'passRun',
    ]);
  });

  it("every later step sees the call's ERP requests as the policy step's rule left them", async () => {
    const seen: unknown[] = [];
    const later: GateStep = {
      name: 'later',
      applies: () => true,
      pass: (call, _deps, rest) => {
        seen.push(call.requests);
        return rest(call);
      },
    };
    const ruled = [{ model: 'res.partner', method: 'read' }] as never;
    const passed = await passGate(
      {
        inbound,
        question,
        once: undefined,
        run: async () => 'declared',
        rule: async (call) => ({ ...call, requests: ruled, run: async () => 'ruled' }),
      },
      deps,
      [...UP_TO_POLICY, later, ...AFTER_POLICY],
    );
    expect(passed.value).toBe('ruled');
    expect(seen).toEqual([ruled]);
  });
});
