/**
 * @module core/confirm/form
 * The form a person is shown before a write runs (an `elicitation/create` request in form mode,
 * MCP 2026-07-28): a message that says in plain words what will happen, where and to what, and no
 * field to fill in (the answers are accept, decline and cancel).
 *
 * - where: the ERP's URL and database;
 * - the model: its display name (read from the ERP) and its technical name;
 * - the operation: create, update, delete, or the method called;
 * - the records (update, delete, a method on records): ids with their display names read from
 *   the ERP, at most {@link MAX_LISTED_RECORDS}, then every other id;
 * - everything else the ERP will receive: the values (create, update), a method's arguments, each
 *   positional one on its own line, and the call's context, member by member.
 *
 * Nothing is cut: a call with a value longer than {@link MAX_VALUE_CHARS}, more than
 * {@link MAX_LISTED_VALUES} values or more than {@link MAX_CONFIRMED_IDS} records cannot be shown
 * whole, and is refused before a person is asked ({@link unconfirmableReason}), naming the value.
 *
 * Everything that comes from the call or the ERP (names, values, display names) is written as JSON
 * (`"…"`), with every character that does not show as itself escaped besides (controls, zero-width
 * and bidirectional marks, tags, line and paragraph separators: `\u202e`), so no value can pass for
 * the form's own wording or start a line of its own: the form's sentences are the only unquoted text.
 */
import { KeyPolicyRefusedError } from '../../platform/errors.ts';
import { withFacts } from '../request-facts.ts';

/** The most records a form lists by id and name (the other ids are listed after them). */
export const MAX_LISTED_RECORDS = 20;
/** The most records a call a person confirms may name. */
export const MAX_CONFIRMED_IDS = 1000;
/** The most characters of one value (as JSON) a form shows: a longer one is refused, never cut. */
export const MAX_VALUE_CHARS = 2000;
/** The most values (fields, arguments, context members) a form lists: more are refused. */
export const MAX_LISTED_VALUES = 100;

/** The call a form describes, with what was read from the ERP for it. */
export interface FormFacts {
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly erpUrl: string;
  readonly db: string;
  /** The model's display name (`ir.model`'s `name`), when the ERP told it. */
  readonly modelName: string | undefined;
  /** Display names by record id, as the ERP told them (missing: not readable). */
  readonly recordNames: ReadonlyMap<number, string>;
  /** The companies the proxy runs the call in (a key's `companies` rule sets them), if any. */
  readonly companies?: readonly number[] | undefined;
}

/** An `elicitation/create` request in form mode, as an `inputRequests` entry carries it. */
export interface ConfirmationForm {
  readonly method: 'elicitation/create';
  readonly params: {
    readonly mode: 'form';
    readonly message: string;
    readonly requestedSchema: { readonly type: 'object'; readonly properties: Record<string, never> };
  };
}

/**
 * The characters a form escapes besides JSON's own: C0 and C1 controls, format characters (zero-width
 * spaces and joiners, bidirectional marks and isolates, tags, the soft hyphen, the byte-order mark),
 * line and paragraph separators, private-use, surrogate and unassigned code points, and the blanks
 * that show as nothing (Hangul fillers, the braille blank, the combining grapheme joiner, variation
 * selectors).
 */
let unshown: RegExp | undefined;
/**
 * Built on first use: a Unicode property class costs about 0.15 ms to parse, at every cold start of
 * mcp otherwise. `Default_Ignorable_Code_Point` holds what renders as nothing (variation selectors,
 * Khmer's inherent vowels, Mongolian selectors, fillers); the look-alikes of `"` are escaped too, so
 * a value cannot seem to close its own quotes.
 */
function unshownCharacters(): RegExp {
  unshown ??=
    /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cs}\p{Cn}\p{Default_Ignorable_Code_Point}\u2800\u{1d159}\uff02\u201c-\u201f\u2033\u2036\u02ba\u02dd\u02ee\u05f4\u3003\u301d-\u301f]/gu;
  return unshown;
}

function unicodeEscape(character: string): string {
  let escaped = '';
  for (let index = 0; index < character.length; index += 1)
    escaped += `\\u${character.charCodeAt(index).toString(16).padStart(4, '0')}`;
  return escaped;
}

/**
 * A value as data: JSON, with every character that does not show as itself escaped as `\uXXXX`
 * (astral ones as their JSON surrogate pair), so the text shown is still the value's JSON.
 *
 * @example
 * quotedValue('Acme\u202e') // '"Acme\\u202e"'
 */
export function quotedValue(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(unshownCharacters(), unicodeEscape);
}

/** The first value of `args` a form cannot show whole, as the refusal's words; `undefined`: none. */
function tooLong(label: string, value: unknown): string | undefined {
  const shown = quotedValue(value);
  return shown.length > MAX_VALUE_CHARS
    ? `${label} is ${shown.length} characters long as shown, more than the ${MAX_VALUE_CHARS} a confirmation form shows whole`
    : undefined;
}

/** The values a form lists, each with the words that name it: fields, arguments, context members. */
function listedValues(
  tool: string,
  args: Readonly<Record<string, unknown>>,
): [label: string, value: unknown][] {
  const members = (what: string, object: unknown): [string, unknown][] =>
    object !== null && typeof object === 'object' && !Array.isArray(object)
      ? Object.entries(object).map(([name, value]) => [`${what} ${quotedValue(name)}`, value])
      : [];
  const listed: [string, unknown][] = [];
  if (tool === 'create' || tool === 'write') listed.push(...members('the value of', args.values));
  if (tool === 'call_method') {
    if (Array.isArray(args.args))
      listed.push(...args.args.map((value, index): [string, unknown] => [`argument ${index + 1}`, value]));
    listed.push(...members('the named argument', namedArguments(args)));
  }
  listed.push(...members('the context key', sentContext(tool, args)));
  return listed;
}

/**
 * Why a call of `tool` with `args` cannot be shown whole to a person (a value too long, too many
 * values or records), or `undefined` when its form shows everything the ERP will receive.
 */
export function unconfirmableReason(
  tool: string,
  args: Readonly<Record<string, unknown>>,
): string | undefined {
  const ids = recordIds(args);
  if (ids.length > MAX_CONFIRMED_IDS)
    return `the call names ${ids.length} records, more than the ${MAX_CONFIRMED_IDS} a confirmation form lists`;
  const listed = listedValues(tool, args);
  if (listed.length > MAX_LISTED_VALUES)
    return `the call sends ${listed.length} values, more than the ${MAX_LISTED_VALUES} a confirmation form lists`;
  for (const [label, value] of listed) {
    const reason = tooLong(label, value);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

/**
 * Refuses (-32008, rule `confirm`) a call a person would confirm without seeing all of it
 * ({@link unconfirmableReason}), before the person is asked: nothing is cut from a form.
 */
export function checkConfirmable(tool: string, args: Readonly<Record<string, unknown>>): void {
  const reason = unconfirmableReason(tool, args);
  if (reason === undefined) return;
  throw withFacts(
    new KeyPolicyRefusedError(
      `a person confirms this call, and its form cannot show all of it: ${reason}. Send it in smaller calls, or shorter values`,
      'confirm',
    ),
    { policyRule: 'confirm' },
  );
}

/** The record ids a call works on (`ids`), when it has them. */
export function recordIds(args: Readonly<Record<string, unknown>>): readonly number[] {
  const { ids } = args;
  return Array.isArray(ids) ? ids.filter((id): id is number => typeof id === 'number') : [];
}

function plural(count: number, one: string): string {
  return `${count} ${one}${count === 1 ? '' : 's'}`;
}

/** The sentence of the operation, by tool. */
function operation(facts: FormFacts, model: string): string {
  const ids = recordIds(facts.args);
  switch (facts.tool) {
    case 'create':
      return `Create 1 record of ${model}.`;
    case 'write':
      return `Update ${plural(ids.length, 'record')} of ${model}.`;
    case 'unlink':
      return `Delete ${plural(ids.length, 'record')} of ${model}, for good.`;
    default: {
      const method = quotedValue(facts.args.method);
      return ids.length === 0
        ? `Call the method ${method} of ${model}.`
        : `Call the method ${method} on ${plural(ids.length, 'record')} of ${model}.`;
    }
  }
}

/** The records' lines: id and display name, at most {@link MAX_LISTED_RECORDS}, then how many more. */
function recordLines(facts: FormFacts): string[] {
  const ids = recordIds(facts.args);
  if (ids.length === 0) return [];
  const lines = ids.slice(0, MAX_LISTED_RECORDS).map((id) => {
    const name = facts.recordNames.get(id);
    return `  - id ${id}: ${name === undefined ? '(no name could be read)' : quotedValue(name)}`;
  });
  if (ids.length > MAX_LISTED_RECORDS)
    lines.push(
      `  - and ${ids.length - MAX_LISTED_RECORDS} more: ids ${ids.slice(MAX_LISTED_RECORDS).join(', ')}`,
    );
  return ['Records:', ...lines];
}

/** `name: value` lines of an object's members (every one: {@link checkConfirmable} bounds them). */
function memberLines(title: string, members: unknown): string[] {
  if (members === null || typeof members !== 'object' || Array.isArray(members)) return [];
  const entries = Object.entries(members);
  if (entries.length === 0) return [];
  return [title, ...entries.map(([name, value]) => `  - ${quotedValue(name)}: ${quotedValue(value)}`)];
}

/**
 * The context the call sends: the tool's `context`, else (`call_method`) its `kwargs`' own, as the
 * tool sends it (core/mcp/tools.ts).
 */
function sentContext(tool: string, args: Readonly<Record<string, unknown>>): unknown {
  if (args.context !== undefined || tool !== 'call_method') return args.context;
  const kwargs = args.kwargs;
  return kwargs !== null && typeof kwargs === 'object'
    ? (kwargs as { context?: unknown }).context
    : undefined;
}

/** A `call_method`'s named arguments but its context (shown as the context) and ids (shown as the records). */
function namedArguments(args: Readonly<Record<string, unknown>>): unknown {
  const kwargs = args.kwargs;
  if (kwargs === null || typeof kwargs !== 'object' || Array.isArray(kwargs)) return kwargs;
  // The tool sends its own `ids` and context, whatever kwargs say (core/mcp/tools.ts).
  const { context: _context, ids: _ids, ...named } = kwargs as Record<string, unknown>;
  return named;
}

/** The line of the companies the proxy sets, when the call's context does not name its own. */
function companyLines(facts: FormFacts): string[] {
  const context = sentContext(facts.tool, facts.args) as { allowed_company_ids?: unknown } | undefined;
  const asked = context?.allowed_company_ids;
  // An empty list, false or null is replaced by the key's list (core/policy/company-rule.ts).
  const replaced =
    asked === undefined || asked === null || asked === false || (Array.isArray(asked) && asked.length === 0);
  if (facts.companies === undefined || !replaced) return [];
  return [`Companies (this key's policy sets them): ${quotedValue(facts.companies)}`];
}

/** The values' lines: fields for create and update; a method's arguments, one a line; the context. */
function valueLines(facts: FormFacts): string[] {
  const { args } = facts;
  const context = [
    ...memberLines('Context (the ERP reads these too):', sentContext(facts.tool, args)),
    ...companyLines(facts),
  ];
  if (facts.tool === 'create' || facts.tool === 'write')
    return [...memberLines('Values:', args.values), ...context];
  if (facts.tool !== 'call_method') return context;
  const positional =
    Array.isArray(args.args) && args.args.length > 0
      ? ['Arguments:', ...args.args.map((value, index) => `  - ${index + 1}: ${quotedValue(value)}`)]
      : [];
  return [...positional, ...memberLines('Named arguments:', namedArguments(args)), ...context];
}

/**
 * The form's message: where, what, to which records, with which values, and what accepting does.
 * Throws the refusal of {@link checkConfirmable} for a call it cannot show whole.
 */
export function confirmationMessage(facts: FormFacts): string {
  checkConfirmable(facts.tool, facts.args);
  const technical = quotedValue(facts.args.model);
  const model = facts.modelName === undefined ? technical : `${quotedValue(facts.modelName)} (${technical})`;
  return [
    'An AI agent asks to change data in the ERP. Nothing is written unless you accept.',
    `ERP: ${quotedValue(facts.erpUrl)}, database ${quotedValue(facts.db)}`,
    operation(facts, model),
    ...recordLines(facts),
    ...valueLines(facts),
    'Accept to run this change once; decline or cancel to write nothing.',
  ].join('\n');
}

/** The form: {@link confirmationMessage}, and nothing to fill in. */
export function confirmationForm(facts: FormFacts): ConfirmationForm {
  return {
    method: 'elicitation/create',
    params: {
      mode: 'form',
      message: confirmationMessage(facts),
      requestedSchema: { type: 'object', properties: {} },
    },
  };
}
