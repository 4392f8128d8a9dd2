/**
 * @module core/key-policy-check
 * The one place a key's policy decides (README, "Key policies"): {@link checkKeyPolicy} is asked
 * once per call about what the caller asked for (the API, the model and method exactly as they will
 * be sent to the ERP, the target and the database), before any ERP traffic and whatever transport
 * then carries the call: a v1 call translated to JSON-2, a v2 call sent over `/jsonrpc` and every MCP
 * tool's ERP call are asked the same questions. The chain asks about the API as soon as the caller
 * is known (handlers/chain.ts), the forwarding code and the MCP tools about the rest.
 *
 * A refusal is a {@link KeyPolicyRefusedError} (-32008, HTTP 403) whose message names the rule,
 * never the key, and which carries the rule for the request log line and the metrics.
 */
import { lookup } from 'node:dns/promises';
import { echoed } from '../platform/bounded-text.ts';
import { MODEL_NAME } from '../platform/erp-names.ts';
import { KeyPolicyRefusedError } from '../platform/errors.ts';
import { cidrContains, embeddedIPv4, type IpAddress, parseIp } from '../platform/ip-address.ts';
import {
  isReadMethod,
  type KeyPolicy,
  type KeyPolicyApi,
  type KeyPolicyRule,
  modelListed,
  PRIVILEGED_APIS,
} from '../platform/key-policy.ts';
import { listsHostName, normalizeHostName, type TargetList } from '../platform/target-list.ts';
import { methodRule } from './policy/method-rule.ts';
import { withFacts } from './request-facts.ts';

/** What a call asks for; each field given is checked, the others are not part of the question. */
export interface PolicyQuestion {
  readonly api?: KeyPolicyApi;
  /** The model, exactly as it will be sent to the ERP. */
  readonly model?: string;
  /** The method, exactly as it will be sent to the ERP (a v1 action, `fn_name`, a v2 method). */
  readonly method?: string;
  /**
   * Whether the call can write, where its arguments tell more than its method (core/policy/call-writes.ts:
   * `export_data` asking for external ids writes); `undefined`: the method alone tells.
   */
  readonly writes?: boolean;
  readonly target?: URL;
  /** The database the call selects; `undefined` when it selects none. */
  readonly db?: string;
  /** An MCP tool the caller calls, and whether it changes data (its own ERP calls are asked too). */
  readonly tool?: { readonly name: string; readonly writes: boolean };
}

/** Every address a host name resolves to (the key's CIDR entries must contain them all). */
export type ResolveAll = (hostname: string) => Promise<readonly string[]>;

const resolveAll: ResolveAll = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

const API_LABELS: Readonly<Record<KeyPolicyApi, string>> = {
  v1: 'the v1 execute API',
  v2: 'the v2 execute API',
  version: 'the version endpoints',
  mcp: 'POST /mcp',
  operator: 'the operator endpoints (/_/license, /_/metrics)',
  audit: 'the audit (GET /_/audit)',
  brakes: "the operators' brakes (/_/brakes)",
};

/** A name in a message: as it is when it is a plain name, else quoted with control characters escaped. */
function shown(name: string): string {
  return MODEL_NAME.test(name) && name.length <= 100 ? name : JSON.stringify(echoed(name));
}

function refused(rule: KeyPolicyRule, message: string): KeyPolicyRefusedError {
  return withFacts(new KeyPolicyRefusedError(message, rule), { policyRule: rule });
}

function cidrsContain(list: TargetList, ip: IpAddress): boolean {
  const carried = embeddedIPv4(ip);
  return list.cidrs.some(
    (cidr) => cidrContains(cidr, ip) || (carried !== undefined && cidrContains(cidr, carried)),
  );
}

/**
 * Whether the key's `targets` list the URL's host: an IP literal must be in a CIDR entry; a host
 * name must match a name or wildcard entry, or (when the list has CIDR entries) resolve only to
 * addresses they contain. The proxy's own target policy is checked besides, as for every call,
 * and again at connect time.
 */
function targetListed(list: TargetList, url: URL, resolve: ResolveAll): boolean | Promise<boolean> {
  const ip = parseIp(url.hostname);
  if (ip !== undefined) return cidrsContain(list, ip);
  const name = normalizeHostName(url.hostname);
  if (listsHostName(list, name)) return true;
  if (list.cidrs.length === 0) return false;
  return resolve(name).then(
    (addresses) =>
      addresses.length > 0 &&
      addresses.every((address) => {
        const resolved = parseIp(address);
        return resolved !== undefined && cidrsContain(list, resolved);
      }),
    () => false,
  );
}

/**
 * Checks `question` against the caller's key policy (`undefined`: a key without one). Throws (or, when
 * a host name must be resolved for the key's CIDR entries, rejects with) a {@link KeyPolicyRefusedError}
 * naming the first rule that refuses, in the order api, access, model, method, database, target
 * (the rules that read a call's content come after: core/policy/call-rules.ts).
 *
 * @example
 * checkKeyPolicy(caller.policy, { api: 'v1', model: 'res.partner', method: 'create' });
 * // throws: Refused by this key's policy: this key may only read; create is not a read method
 */
export function checkKeyPolicy(
  policy: KeyPolicy | undefined,
  question: PolicyQuestion,
  resolve: ResolveAll = resolveAll,
): void | Promise<void> {
  const { api, model, method, target, db, tool, writes } = question;
  if (api !== undefined && PRIVILEGED_APIS.has(api) && policy?.apis?.has(api) !== true) {
    throw refused(
      'api',
      `this key may not use ${API_LABELS[api]}: only a key whose policy lists "${api}" in its apis may`,
    );
  }
  if (policy === undefined) return;
  if (api !== undefined && policy.apis !== undefined && !policy.apis.has(api)) {
    throw refused('api', `this key may not use ${API_LABELS[api]}`);
  }
  if (tool?.writes === true && policy.access === 'read') {
    throw refused('access', `this key may only read; the tool ${shown(tool.name)} can change data`);
  }
  if (method !== undefined && policy.access === 'read' && (writes ?? !isReadMethod(method))) {
    throw refused(
      'access',
      isReadMethod(method)
        ? `this key may only read; this ${shown(method)} call writes (an export_data column asking for external ids creates them)`
        : `this key may only read; ${shown(method)} is not a read method`,
    );
  }
  if (model !== undefined && policy.models !== undefined && !modelListed(policy.models, model)) {
    throw refused('model', `model ${shown(model)} is not in this key's models`);
  }
  const methodRefusal =
    model === undefined || method === undefined ? undefined : methodRule(policy, model, method);
  if (methodRefusal !== undefined) throw methodRefusal;
  if (db !== undefined && policy.databases !== undefined && !policy.databases.has(db)) {
    throw refused('database', `database ${JSON.stringify(echoed(db))} is not in this key's databases`);
  }
  if (target === undefined || policy.targets === undefined) return;
  const targetRefusal = (): KeyPolicyRefusedError =>
    refused('target', `target ${echoed(`${target.protocol}//${target.host}`)} is not in this key's targets`);
  const listed = targetListed(policy.targets, target, resolve);
  if (listed === true) return;
  if (listed === false) throw targetRefusal();
  return listed.then((ok) => {
    if (!ok) throw targetRefusal();
  });
}

/**
 * The tools of `tools` a key may call: all of them, except the tools that change data for a key
 * that may only read (`tools/list` shows these; {@link checkKeyPolicy} refuses a call to another).
 */
export function toolsForKey<T extends { readonly writes: boolean }>(
  tools: readonly T[],
  policy: KeyPolicy | undefined,
): readonly T[] {
  return policy?.access === 'read' ? tools.filter((tool) => !tool.writes) : tools;
}
