/**
 * @module core/mcp/tool-run
 * The values of one tool call (core/mcp/run-tool.ts): the call as the protocol layer parsed it,
 * and how it ended, with what the request log line and the metrics learn of it.
 */
import type { ConfirmRefusal, ConfirmRequest } from '../confirm/decide.ts';
import type { ConfirmationForm } from '../confirm/form.ts';
import type { RequestFacts } from '../request-facts.ts';
import type { ToolAnswer } from './answers.ts';
import type { McpTool } from './tools.ts';

/** A call the protocol layer has parsed: the declared tool and its checked arguments. */
export interface ToolCall {
  readonly tool: McpTool;
  readonly args: unknown;
  /**
   * What the request says for a person's confirmation (its revision, the client's elicitation,
   * the state and answer it sent back: protocol/mcp/confirmation.ts); used only when the caller's
   * policy has the tool confirmed. Absent: treated as a client that cannot be asked.
   */
  readonly confirm?: ConfirmRequest;
  /** The MCP client's name and version as its request said them (self-reported; the audit records them). */
  readonly client?: { readonly name: string; readonly version?: string };
}

/**
 * Where a person's confirmation left a call that did not run (core/confirm/): asking (a form and
 * its sealed state), the person's no, or a refusal the protocol answers as a JSON-RPC error.
 */
export type ConfirmationAnswer =
  | { readonly kind: 'ask'; readonly form: ConfirmationForm; readonly requestState: string }
  | { readonly kind: 'answered'; readonly outcome: 'declined' | 'cancelled' }
  | { readonly kind: 'refused'; readonly refusal: Exclude<ConfirmRefusal, { kind: 'legacy' }> };

/**
 * How a tool call ended: its answer (without its facts), its failure as the JSON text its error
 * result shows, or a confirmation's answer (the tool did not run).
 */
export type ToolOutcome =
  | { readonly ok: true; readonly answer: Omit<ToolAnswer, 'facts'> }
  | { readonly ok: false; readonly text: string }
  | { readonly ok: 'confirmation'; readonly confirmation: ConfirmationAnswer };

/** A tool call's outcome and what the request log line and the metrics learn of it. */
export interface ToolRun {
  readonly outcome: ToolOutcome;
  readonly facts: RequestFacts;
}
