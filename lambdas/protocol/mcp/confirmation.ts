/**
 * @module protocol/mcp/confirmation
 * A person's confirmation of a write tool's call (docs/guide/confirmations.md), as the MCP protocol
 * carries it (2026-07-28, "input required" results): what a `tools/call` request tells the
 * confirmation step (its revision, the client's declared elicitation, the `requestState` and
 * `inputResponses` it sent back), and what the step's end becomes:
 *
 * - asking: a result with `resultType: "input_required"`, one `inputRequests` entry keyed `confirm`
 *   (an `elicitation/create` form) and the sealed `requestState`;
 * - declined or cancelled: a tool result, not an error (`isError: false`), with
 *   `{"confirmed": false, "outcome": ...}` and a sentence that nothing was written;
 * - a state that does not fit the call, or a malformed answer: JSON-RPC -32602 naming which;
 * - a 2026-07-28 request without elicitation: -32021 (HTTP 400) with `data.requiredCapabilities`.
 *
 * `tools/list` marks the tools a caller's policy confirms in their description, so an agent knows
 * before it calls.
 */
import {
  CONFIRM_INPUT_KEY,
  type ConfirmRefusal,
  type ConfirmRequest,
  declaresFormElicitation,
} from '../../core/confirm/decide.ts';
import type { ConfirmationForm } from '../../core/confirm/form.ts';
import type { StateMismatch } from '../../core/confirm/state.ts';
import { isJsonObject } from '../../platform/json.ts';
import { META_KEYS } from './eras.ts';
import { type JsonObject, RPC, RpcFailure } from './messages.ts';

/** What `tools/call`'s params tell the confirmation step, in the era the request is served in. */
export function confirmRequestOf(params: JsonObject, era: 'modern' | 'legacy'): ConfirmRequest {
  const meta = params._meta;
  const capabilities = isJsonObject(meta) ? meta[META_KEYS.clientCapabilities] : undefined;
  const { requestState, inputResponses } = params;
  if (requestState !== undefined && typeof requestState !== 'string') {
    throw new RpcFailure({
      code: RPC.invalidParams,
      message: 'Invalid params: requestState must be the string a previous result gave, sent back unchanged',
    });
  }
  return {
    era,
    formElicitation: era === 'modern' && declaresFormElicitation(capabilities),
    requestState,
    inputResponses,
  };
}

/** The sentence of a tool a caller's policy confirms, added to its `tools/list` description. */
export const CONFIRMED_TOOL_NOTE =
  ' A person confirms each call of this tool before it runs (the policy of this connection asks for it): the MCP client shows them what will change, and nothing is written unless they accept. This needs an MCP client on revision 2026-07-28 that supports elicitation (form mode).';

/** An input-required result asking the person with `form`. */
export function inputRequired(form: ConfirmationForm, requestState: string): JsonObject {
  return { resultType: 'input_required', inputRequests: { [CONFIRM_INPUT_KEY]: form }, requestState };
}

/** The tool result of a confirmation the person declined or cancelled: not an error, nothing written. */
export function unconfirmedResult(outcome: 'declined' | 'cancelled'): JsonObject {
  const text =
    outcome === 'declined'
      ? 'The person declined this change: nothing was written. Do not call it again unless they ask for it.'
      : 'The person cancelled without deciding: nothing was written. Ask them before calling it again.';
  return {
    content: [{ type: 'text', text }],
    structuredContent: { confirmed: false, outcome },
    isError: false,
  };
}

const MISMATCH_WORDS: Readonly<Record<StateMismatch | 'used' | 'answer', string>> = {
  tampered: 'the requestState was changed or is not one this server issued',
  caller: 'the requestState was issued to another caller',
  erp: 'the requestState was issued for another ERP connection (URL, database, user or key)',
  arguments: 'the requestState was issued for another tool or other arguments',
  used: 'the requestState was already used: the confirmed call ran once',
  answer: `inputResponses.${CONFIRM_INPUT_KEY} is not an elicitation result (action "accept", "decline" or "cancel")`,
};

/** The JSON-RPC error of a confirmation refused at the protocol level (a legacy client's is a tool error). */
export function confirmationFailure(refusal: Exclude<ConfirmRefusal, { kind: 'legacy' }>): RpcFailure {
  if (refusal.kind === 'capability') {
    return new RpcFailure(
      {
        code: RPC.missingClientCapability,
        message:
          "Missing required client capability: elicitation (form mode). This tool's calls need a person's confirmation, which the client asks through an elicitation form",
        data: { requiredCapabilities: { elicitation: { form: {} } } },
      },
      400,
    );
  }
  return new RpcFailure({
    code: RPC.invalidParams,
    message: `Invalid params: ${MISMATCH_WORDS[refusal.why]}; nothing was run. Call the tool again without requestState to be asked anew.`,
  });
}
