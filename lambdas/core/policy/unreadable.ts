/**
 * @module core/policy/unreadable
 * What the proxy cannot read is refused, not passed (docs/guide/policies.md, "What each rule
 * reads"). For a key whose policy reads a call's content (`fields`, `companies`), a call is
 * refused (-32008, naming the rule and what it could not read) when it carries:
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
 * - a named argument the rules do not read for a method they read (Odoo binds it by name:
 *   `res.users.write(values)` on 16-18), or more positional arguments than they read;
 * - `export_data` with a column that asks for external ids (it writes `ir.model.data` rows:
 *   core/policy/odoo-arguments.ts `exportWrites`), a read-list method that writes.
 *
 * A key whose only content rule is `confirm` has its write tools' contexts read before the person is
 * asked ({@link checkToolContexts}: the form must explain everything the call sends), and its
 * `export_data` asking for external ids refused (a write no person confirms).
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
import { CALL_SHAPES, type CallShape, callArguments, carriesArguments } from './call-shapes.ts';
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
  // In every context the web client sends (res.users.context_get); the RPC's user is the key's.
  ['uid', (value) => losslessInteger(value) !== undefined || value === false],
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

/** Which of a policy's rules reads every call's content; `undefined`: none. */
function contentRule(policy: KeyPolicy): KeyPolicyRule | undefined {
  if (policy.fields !== undefined) return 'field';
  if (policy.companies !== undefined) return 'company';
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
    const path = at === '' ? name : `${at}.${name}`;
    if (name === 'context' && isLosslessObject(item)) checkContext(item, path);
    // Odoo takes a context through dict(): a list of pairs would be read as one.
    else if (name === 'context' && Array.isArray(item))
      throw new Unreadable(`${path} is a list, which the ERP would read as pairs`);
    else checkContexts(item, path);
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
    readonly model: string;
    readonly method: string;
    readonly args?: readonly LosslessValue[] | undefined;
    readonly kwargs: { readonly [name: string]: LosslessValue };
  },
  shape: CallShape | undefined = CALL_SHAPES.get(call.method),
): void {
  const read = isReadMethod(call.method);
  const rule = contentRule(policy);
  if (rule === undefined) {
    // A confirming key's writes are confirmed through its MCP write tools (their contexts are read
    // at the policy step: checkToolContexts); a read-list method that writes is confirmed by no one.
    if (policy.confirm !== undefined && shape !== undefined && exportsExternalIds(shape, call))
      refusingUnread('confirm', () => {
        throw new Unreadable(EXPORTS_IDS);
      });
    return;
  }
  refusingUnread(rule, () => {
    if (Object.hasOwn(call.kwargs, 'context')) {
      const context = call.kwargs.context;
      if (context !== null && !isLosslessObject(context))
        throw new Unreadable('the context is not an object, so the proxy cannot read it');
    }
    checkContexts(call.args as LosslessValue[] | undefined, 'args');
    checkContexts(call.kwargs, '');
    if (shape !== undefined) checkArgumentNames(call.method, shape, call);
    if (!read && CODE_MODELS.has(call.model))
      throw new Unreadable(
        `${shown(call.model)} holds code or access rules the ERP runs (which read any field of any model); this key may not change it`,
      );
    if (!read && shape === undefined && carriesArguments(call))
      throw new Unreadable(
        `${shown(call.method)} takes values the proxy does not read; call it with its ids (and context) only, or use a method the proxy reads (create, write, copy, web_save)`,
      );
    if (shape !== undefined && exportsExternalIds(shape, call)) throw new Unreadable(EXPORTS_IDS);
  });
}

/**
 * Models whose records are code or access rules the ERP runs with its own rights: a server action's
 * Python, a scheduled action, a computed or related field definition, a view, a record rule, an
 * access right, an automation, a window action's evaluated domain and context, a system parameter.
 * A key whose rules read content may read them, never change them: once written, they read any field
 * of any model, whatever the key's rules say.
 */
export const CODE_MODELS: ReadonlySet<string> = new Set([
  'ir.actions.server',
  'ir.cron',
  'ir.model.fields',
  'ir.model',
  'ir.ui.view',
  'ir.rule',
  'ir.model.access',
  'base.automation',
  'ir.actions.act_window',
  'ir.actions.report',
  'ir.config_parameter',
  'ir.default',
  'res.groups',
]);

const EXPORTS_IDS =
  'an export_data column asks for external ids ("id", "x/id", "x:id"), which makes the ERP write them; export ".id" (database ids) instead';

function exportsExternalIds(
  shape: CallShape,
  call: {
    readonly args?: readonly LosslessValue[] | undefined;
    readonly kwargs: { readonly [name: string]: LosslessValue };
  },
): boolean {
  return callArguments(shape, call.args, call.kwargs).some(
    ({ role, value }) => role === 'export' && exportWrites(value),
  );
}

/**
 * The arguments of a method the rules read must be the ones they read: Odoo binds a named argument
 * by its name (`res.users.write(values)` on 16-18, where the shape knows `vals`), so a name the shape
 * does not list, or more positional arguments than it has, would reach the method unread.
 */
function checkArgumentNames(
  method: string,
  shape: CallShape,
  call: {
    readonly args?: readonly LosslessValue[] | undefined;
    readonly kwargs: { readonly [name: string]: LosslessValue };
  },
): void {
  const places = (shape.record ? 1 : 0) + shape.params.length;
  if (call.args !== undefined && call.args.length > places)
    throw new Unreadable(
      `${shown(method)} is given ${call.args.length} positional arguments, more than the ${places} the proxy reads`,
    );
  for (const name of Object.keys(call.kwargs)) {
    if (name === 'context' || name === 'ids') continue;
    if (shape.params.some(([param]) => param === name) || shape.aliases?.some(([alias]) => alias === name))
      continue;
    throw new Unreadable(`argument ${shown(name)} of ${shown(method)} is not one the proxy reads`);
  }
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
 * asked to confirm it or a limit counts it, as each of its ERP requests would be. `confirmed`: a
 * person confirms this call (a key whose only content rule is `confirm` reads only those: the
 * form shows what the call sends, and a context key the form cannot explain is refused).
 */
export function checkToolContexts(policy: KeyPolicy, args: unknown, confirmed: boolean): void {
  const rule = contentRule(policy) ?? (confirmed && policy.confirm !== undefined ? 'confirm' : undefined);
  if (rule === undefined) return;
  refusingUnread(rule, () => checkContexts(parseLossless(JSON.stringify(args ?? {})), ''));
}
