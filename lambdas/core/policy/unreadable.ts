/**
 * @module core/policy/unreadable
 * What the proxy cannot read is refused, not passed (docs/guide/policies.md, "What each rule
 * reads"). For a key whose policy reads a call's content (`fields`, `companies`; `confirm` for the
 * calls that write), a call is refused (-32008, naming the rule and what it could not read) when it
 * carries:
 *
 * - a context key outside {@link READABLE_CONTEXT}, or of another type, in any `context` object at
 *   any depth of its arguments (a 17+ specification's nested contexts included): Odoo reads many
 *   more (`default_<field>` gives a new record a value, here and in the records a delegation
 *   creates; `show_email` puts an address into every partner's `display_name`; `tracking_disable`
 *   drops the chatter's trace), and a deny-list of the dangerous ones only holds against callers
 *   who know no other;
 * - a method off the read list (platform/key-policy.ts) whose values the rules do not parse (not
 *   one of `CALL_SHAPES`' methods) called with any argument besides its ids and context: `load`,
 *   `update` (public on 16-18, a `write()`), a model's own methods that take values;
 * - `export_data` with a column that asks for external ids (it writes `ir.model.data` rows:
 *   core/policy/odoo-arguments.ts `exportWrites`), a read-list method that writes.
 *
 * A key without such rules is never asked: its calls go as they are.
 */
import { KeyPolicyRefusedError } from '../../platform/errors.ts';
import { isReadMethod, type KeyPolicy, type KeyPolicyRule } from '../../platform/key-policy.ts';
import {
  isLosslessObject,
  type LosslessValue,
  losslessInteger,
  parseLossless,
} from '../../platform/lossless-json.ts';
import { withFacts } from '../request-facts.ts';
import { CALL_SHAPES, type CallShape, callArguments } from './call-shapes.ts';
import { exportWrites } from './odoo-arguments.ts';

/**
 * The context keys a key with content rules may send, with the values each takes: the language and
 * time zone a read is shown in, archived records in a search, binary fields as their size, and the
 * companies (which the company rule scopes further). Nothing else in Odoo 16-19's base and web reads
 * as harmlessly (odoo/addons/base, addons/web: docs/guide/policies.md lists what was read).
 */
export const READABLE_CONTEXT: ReadonlyMap<string, (value: LosslessValue) => boolean> = new Map<
  string,
  (value: LosslessValue) => boolean
>([
  ['lang', (value) => typeof value === 'string' || value === false],
  ['tz', (value) => typeof value === 'string' || value === false],
  ['active_test', (value) => typeof value === 'boolean'],
  ['bin_size', (value) => typeof value === 'boolean'],
  [
    'allowed_company_ids',
    (value) =>
      value === null ||
      value === false ||
      (Array.isArray(value) && value.every((id) => losslessInteger(id) !== undefined)),
  ],
]);

/** The names of {@link READABLE_CONTEXT}, as messages and the docs list them. */
export const READABLE_CONTEXT_KEYS: readonly string[] = Object.freeze([...READABLE_CONTEXT.keys()]);

/** Which of a policy's rules reads content, for a call that writes or not; `undefined`: none. */
function contentRule(policy: KeyPolicy, writes: boolean): KeyPolicyRule | undefined {
  if (policy.fields !== undefined) return 'field';
  if (policy.companies !== undefined) return 'company';
  if (policy.confirm !== undefined && writes) return 'confirm';
  return undefined;
}

const RULE_WORDS: Readonly<Partial<Record<KeyPolicyRule, string>>> = {
  field: 'field rules',
  company: 'company rule',
  confirm: 'confirmations',
};

class Unreadable {
  constructor(readonly message: string) {}
}

function shown(name: string): string {
  return JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}...` : name);
}

/** Every `context` object in `value`, at any depth (`at`: the path shown in a message). */
function checkContexts(value: LosslessValue | undefined, at: string): void {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) checkContexts(item, `${at}[${index}]`);
    return;
  }
  if (!isLosslessObject(value)) return;
  for (const [name, item] of Object.entries(value)) {
    if (name === 'context' && isLosslessObject(item))
      checkContext(item, at === '' ? 'context' : `${at}.context`);
    else checkContexts(item, at === '' ? name : `${at}.${name}`);
  }
}

function checkContext(context: { readonly [name: string]: LosslessValue }, at: string): void {
  for (const [name, value] of Object.entries(context)) {
    const valid = READABLE_CONTEXT.get(name);
    if (valid === undefined)
      throw new Unreadable(
        `${at} key ${shown(name)} is not one the proxy reads (it may send ${READABLE_CONTEXT_KEYS.join(', ')})`,
      );
    if (!valid(value))
      throw new Unreadable(`${at} key ${shown(name)} has a value of a type the proxy does not read`);
  }
}

/** Ids as a record method's first argument takes them: an id, or a list of ids. */
function isIds(value: LosslessValue | undefined): boolean {
  if (losslessInteger(value) !== undefined) return true;
  return Array.isArray(value) && value.every((id) => losslessInteger(id) !== undefined);
}

/** Whether a call of a method the rules do not parse carries anything but its ids and context. */
function carriesValues(
  args: readonly LosslessValue[] | undefined,
  kwargs: { readonly [name: string]: LosslessValue },
): boolean {
  if (args !== undefined && (args.length > 1 || (args.length === 1 && !isIds(args[0])))) return true;
  return Object.keys(kwargs).some((name) => name !== 'context' && !(name === 'ids' && isIds(kwargs.ids)));
}

/**
 * Refuses what the proxy cannot read of `call` for `policy` (see the module header); returns
 * nothing when every part of it is read. `shape` is the method's, from `CALL_SHAPES`.
 *
 * @example
 * checkReadable(policy, { method: 'create', kwargs: { vals_list: [{ name: 'A' }], context: { default_email: 'x' } } })
 * // throws: Refused by this key's policy: context key "default_email" is not one the proxy reads (...)
 */
export function checkReadable(
  policy: KeyPolicy,
  call: {
    readonly method: string;
    readonly args?: readonly LosslessValue[] | undefined;
    readonly kwargs: { readonly [name: string]: LosslessValue };
  },
  shape: CallShape | undefined = CALL_SHAPES.get(call.method),
): void {
  const read = isReadMethod(call.method);
  const rule = contentRule(policy, !read || call.method === 'export_data');
  if (rule === undefined) return;
  refusingUnread(rule, () => {
    if (Object.hasOwn(call.kwargs, 'context')) {
      const context = call.kwargs.context;
      if (context !== null && !isLosslessObject(context))
        throw new Unreadable('the context is not an object, so the proxy cannot read it');
    }
    checkContexts(call.args as LosslessValue[] | undefined, 'args');
    checkContexts(call.kwargs, '');
    if (!read && shape === undefined && carriesValues(call.args, call.kwargs))
      throw new Unreadable(
        `${shown(call.method)} takes values the proxy does not read; call it with its ids (and context) only, or use a method the proxy reads (create, write, copy, web_save)`,
      );
    if (shape !== undefined && call.method === 'export_data') {
      for (const { role, value } of callArguments(shape, call.args, call.kwargs))
        if (role === 'export' && exportWrites(value))
          throw new Unreadable(
            'an export_data column asks for external ids ("id", "x/id", "x:id"), which makes the ERP write them; export ".id" (database ids) instead',
          );
    }
  });
}

/** Runs `check`; what it could not read becomes the refusal of `rule` (-32008). */
function refusingUnread(rule: KeyPolicyRule, check: () => void): void {
  try {
    check();
  } catch (error) {
    if (!(error instanceof Unreadable)) throw error;
    throw withFacts(
      new KeyPolicyRefusedError(
        `${error.message}, so this key's ${RULE_WORDS[rule] ?? 'rules'} cannot check it`,
        rule,
      ),
      { policyRule: rule },
    );
  }
}

/**
 * The contexts of an MCP tool call's arguments (its `context`, and any nested in its `kwargs`), at
 * the gate's policy step: a call whose context the proxy cannot read is refused before a person is
 * asked to confirm it or a limit counts it, as each of its ERP requests would be. `writes`: the call
 * can write (a key whose only content rule is `confirm` reads only those).
 */
export function checkToolContexts(policy: KeyPolicy, args: unknown, writes: boolean): void {
  const rule = contentRule(policy, writes);
  if (rule === undefined) return;
  refusingUnread(rule, () => checkContexts(parseLossless(JSON.stringify(args ?? {})), ''));
}
