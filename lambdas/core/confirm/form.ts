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
 *   the ERP, at most {@link MAX_LISTED_RECORDS}, then how many more;
 * - the values (create, update; a method's arguments): each field and value, the value cut to
 *   {@link MAX_VALUE_CHARS} characters.
 *
 * Everything that comes from the call or the ERP (names, values, display names) is written as JSON
 * (`"…"`, escapes included), so no value can pass for the form's own wording or start a line of
 * its own: the form's sentences are the only unquoted text.
 */

/** The most records a form lists by id and name. */
export const MAX_LISTED_RECORDS = 20;
/** The most characters of one value a form shows. */
export const MAX_VALUE_CHARS = 200;
/** The most fields or arguments a form lists. */
export const MAX_LISTED_VALUES = 50;

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

/** A value as data: JSON, cut to {@link MAX_VALUE_CHARS} characters (with how long it was). */
export function quotedValue(value: unknown): string {
  const json = JSON.stringify(value) ?? 'null';
  if (json.length <= MAX_VALUE_CHARS) return json;
  return `${json.slice(0, MAX_VALUE_CHARS)}… (cut: ${json.length} characters in all)`;
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
      const method = JSON.stringify(facts.args.method);
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
    return `  - id ${id}: ${name === undefined ? '(no name could be read)' : JSON.stringify(name)}`;
  });
  if (ids.length > MAX_LISTED_RECORDS) lines.push(`  - and ${ids.length - MAX_LISTED_RECORDS} more`);
  return ['Records:', ...lines];
}

/** `name: value` lines of an object's members, at most {@link MAX_LISTED_VALUES}. */
function memberLines(title: string, members: unknown): string[] {
  if (members === null || typeof members !== 'object' || Array.isArray(members)) return [];
  const entries = Object.entries(members);
  if (entries.length === 0) return [];
  const lines = entries
    .slice(0, MAX_LISTED_VALUES)
    .map(([name, value]) => `  - ${JSON.stringify(name)}: ${quotedValue(value)}`);
  if (entries.length > MAX_LISTED_VALUES) lines.push(`  - and ${entries.length - MAX_LISTED_VALUES} more`);
  return [title, ...lines];
}

/** The values' lines: fields for create and update; a method's arguments. */
function valueLines(facts: FormFacts): string[] {
  const { args } = facts;
  if (facts.tool === 'create' || facts.tool === 'write') return memberLines('Values:', args.values);
  if (facts.tool !== 'call_method') return [];
  const positional =
    Array.isArray(args.args) && args.args.length > 0 ? [`Arguments: ${quotedValue(args.args)}`] : [];
  return [...positional, ...memberLines('Named arguments:', args.kwargs)];
}

/** The form's message: where, what, to which records, with which values, and what accepting does. */
export function confirmationMessage(facts: FormFacts): string {
  const technical = JSON.stringify(facts.args.model);
  const model =
    facts.modelName === undefined ? technical : `${JSON.stringify(facts.modelName)} (${technical})`;
  return [
    'An AI agent asks to change data in the ERP. Nothing is written unless you accept.',
    `ERP: ${JSON.stringify(facts.erpUrl)}, database ${JSON.stringify(facts.db)}`,
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
