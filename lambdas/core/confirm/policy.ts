/**
 * @module core/confirm/policy
 * Which calls a person confirms (docs/guide/confirmations.md): a key's or identity's policy `confirm`
 * (platform/key-policy.ts reads it: `"writes"` or a list of tool names) against the MCP tool
 * declarations (core/mcp/tools.ts: the one list of tools and of which ones write).
 *
 * - At load: every name in a `confirm` list must be a declared write tool, else the keys or the
 *   identity map fail whole, naming the key or entry ({@link confirmPolicyProblem}).
 * - Per MCP call: a write tool the policy names is confirmed, except a `call_method` of a method on
 *   the read list, which cannot change data ({@link needsConfirmation}).
 * - Per execute call: a policy with `confirm` (either form) may not write through execute at all,
 *   where no person can be asked: -32008, rule `confirm` ({@link refuseUnconfirmedWrite}).
 */
import { echoed } from '../../platform/bounded-text.ts';
import type { NamedKey } from '../../platform/config.ts';
import { KeyPolicyRefusedError } from '../../platform/errors.ts';
import { isReadMethod, type KeyPolicy } from '../../platform/key-policy.ts';
import type { ProxyKeySource } from '../../platform/secrets.ts';
import { withFacts } from '../request-facts.ts';

/**
 * What is wrong with a policy's `confirm`, as the end of a sentence (`confirm names "search_read",
 * which is not a write tool ...`); `undefined` when nothing is. `writeTools`: the names of the
 * declared write tools (core/mcp/write-tools.ts), where the function serves them (the mcp
 * function, `npm start`); without them (execute, version, aux: their bundles do not carry the tool
 * declarations, and they refuse every write of a confirming key anyway) the names go unchecked.
 */
export function confirmPolicyProblem(
  policy: KeyPolicy | undefined,
  writeTools?: readonly string[],
): string | undefined {
  const confirm = policy?.confirm;
  if (confirm === undefined) return undefined;
  if (policy?.access === 'read' || (policy?.apis !== undefined && !policy.apis.has('mcp'))) {
    return 'confirm has a person confirm writes made through /mcp, and this policy cannot make any (access "read", or apis without "mcp"): remove confirm, or let the policy write through /mcp';
  }
  if (confirm === 'writes' || writeTools === undefined) return undefined;
  const unknown = [...confirm].filter((name) => !writeTools.includes(name));
  if (unknown.length === 0) return undefined;
  const names = unknown.map((name) => JSON.stringify(name)).join(', ');
  return `confirm names ${names}, which ${unknown.length > 1 ? 'are not write tools' : 'is not a write tool'}; the write tools are ${writeTools.join(', ')} (or "writes" for all of them)`;
}

/**
 * Checks the `confirm` of every named policy (`label`: how a message names its owner, such as
 * `keys.2 (key "agent")`); throws an `Error` whose message starts with `what` and names the first
 * owner whose `confirm` names a tool that does not write. Never quotes a key.
 */
export function checkConfirmPolicies(
  what: string,
  policies: readonly { readonly label: string; readonly policy: KeyPolicy | undefined }[],
  writeTools?: readonly string[],
): void {
  for (const { label, policy } of policies) {
    const problem = confirmPolicyProblem(policy, writeTools);
    if (problem !== undefined) throw new Error(`${what}: ${label}: ${problem}`);
  }
}

/** Whether a policy has a person confirm some writes (`/_/about`, `tools/list`). */
export function policyConfirms(policy: KeyPolicy | undefined): boolean {
  return policy?.confirm !== undefined;
}

/**
 * An execute call of `method` by a caller whose policy has `confirm`: refused -32008 (rule
 * `confirm`) unless the method only reads, so a confirmation cannot be bypassed through another
 * route than `/mcp`, where a person can be asked.
 */
export function refuseUnconfirmedWrite(
  policy: KeyPolicy | undefined,
  method: string,
  writes: boolean = !isReadMethod(method),
): void {
  if (policy?.confirm === undefined || !writes) return;
  throw withFacts(
    new KeyPolicyRefusedError(
      `this key's writes are confirmed by a person, which only POST /mcp can ask (a 2026-07-28 client with elicitation); ${JSON.stringify(echoed(method))} ${isReadMethod(method) ? 'writes here' : 'is not a read method'}`,
      'confirm',
    ),
    { policyRule: 'confirm' },
  );
}

/** The `confirm` of every key of a proxy-keys document (`keys.<index>.policy.confirm (key "<name>")`). */
export function checkKeysConfirm(keys: readonly NamedKey[], writeTools?: readonly string[]): void {
  checkConfirmPolicies(
    'proxy keys',
    keys.map((key, index) => ({
      label: `keys.${index}.policy.confirm (key ${JSON.stringify(key.name.slice(0, 64))})`,
      policy: key.policy,
    })),
    writeTools,
  );
}

/**
 * `source` with every document it reads checked by {@link checkKeysConfirm} once (a document is
 * the same array until its secret changes): a `confirm` that names no write tool fails the keys as
 * a document that does not parse does, and every call is refused until it is fixed (fail closed).
 */
export function withKeysConfirmChecked(
  source: ProxyKeySource,
  writeTools?: readonly string[],
): ProxyKeySource {
  const checked = new WeakSet<readonly NamedKey[]>();
  return {
    async getKeys() {
      const keys = await source.getKeys();
      if (!checked.has(keys)) {
        checkKeysConfirm(keys, writeTools);
        checked.add(keys);
      }
      return keys;
    },
  };
}
