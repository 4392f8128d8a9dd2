/**
 * @module core/mcp/tool-requests
 * What an MCP tool declares before it runs (docs/design.md, "The tools/call pipeline"): the ERP
 * requests its run may send, as values the gate's `policy` step rules on exactly as it rules on an
 * execute call's request, and the proxy's own lookups the declaration reads to build them.
 *
 * - A {@link ToolRequest} is `model.method(*args, **kwargs)`, the context inside `kwargs` as
 *   JSON-2 takes it: the request an execute call would make (core/mcp/erp-access.ts builds its
 *   `ErpCall` on the request's connection).
 * - A {@link ToolLookups} is what a declaration may read of the ERP, and only the lookups the tool
 *   names ({@link LookupName}): the ERP's version, and on ERP 20+ the read tools' field list. They
 *   are made at the policy step, after the target and database rules, in a time budget of their
 *   own; they are the proxy's own reads, never counted as calls.
 */
import type { ErpVersion } from '../../upstream/erp-answer.ts';

/** One ERP request a tool's run may send. */
export interface ToolRequest {
  readonly model: string;
  readonly method: string;
  /** Positional arguments (a record method's ids first): sent with the positional transport. */
  readonly args?: readonly unknown[];
  /** Named arguments, the context among them. */
  readonly kwargs: Readonly<Record<string, unknown>>;
  /**
   * `list_models`' read of `ir.model`: not asked of the key's `models` rule (it is the list of
   * models), its domain and answer narrowed to the models the key may use instead.
   */
  readonly catalogue?: true;
  /**
   * Sent only when the run needs it (aggregate's read_group after formatted_read_group's 404 on an
   * ERP 19.0 build without it): ruled with the others, but a rule's refusal of it does not refuse
   * the call; it is thrown only if the run sends it.
   */
  readonly conditional?: true;
}

/** The proxy's lookups a declaration may read. */
export interface ToolLookups {
  /** The ERP's version (the URL header is enough; the database travels when given). */
  version(): Promise<ErpVersion>;
  /**
   * The `fields` a read tool sends (core/mcp/binary-fields.ts): `given` when the caller named
   * fields, else every field below ERP 20 and every field but the binary ones from 20 on (a
   * `fields_get` of the model, kept per target, without the key's denied fields).
   */
  fieldsToRead(model: string, given: readonly string[] | undefined): Promise<readonly string[] | undefined>;
}

/** The name of a lookup, as a tool's declaration names it. */
export type LookupName = keyof ToolLookups;

/**
 * The lookups of a tool that names `names`: the others throw (a declaration reading a lookup it
 * does not name is a bug in it, found by test/unit/declared-requests.test.ts).
 */
export function namedLookups(all: ToolLookups, names: readonly LookupName[], tool: string): ToolLookups {
  const unnamed = (lookup: LookupName) => (): never => {
    throw new Error(`The tool ${tool} reads the ${lookup} lookup, which its declaration does not name.`);
  };
  return {
    version: names.includes('version') ? () => all.version() : unnamed('version'),
    fieldsToRead: names.includes('fieldsToRead')
      ? (model, given) => all.fieldsToRead(model, given)
      : unnamed('fieldsToRead'),
  };
}
