/**
 * @module core/mcp/confirm-tool
 * A write tool's call whose caller's policy has a person confirm it (docs/guide/confirmations.md): its
 * confirmation at the gate (core/confirm/gate-step.ts) in the terms of a tool call, a {@link ToolRun}
 * with its facts (the `confirmation` log field and metric):
 *
 * - the binding of its state: the caller (the idempotency scope), the tool and all its arguments,
 *   the request's ERP connection (URL, database, user and key);
 * - the asking round's run: the form's reads of the ERP (core/mcp/display-names.ts), lookups of the
 *   proxy's own that send read methods only, and the input-required answer;
 * - a legacy client's refusal: the tool error of -32008 rule `confirm` (its advice says what client
 *   is needed); the other refusals and the person's no: a confirmation answer the protocol layer
 *   turns into a JSON-RPC error or a tool result.
 */
import { createHash } from 'node:crypto';
import { KeyPolicyRefusedError } from '../../platform/errors.ts';
import { canonicalJson } from '../../platform/json.ts';
import { withCallContext } from '../call-context.ts';
import { type ConfirmationRef, decideConfirmation, useConfirmation } from '../confirm/decide.ts';
import { confirmationForm } from '../confirm/form.ts';
import type { ConfirmationEnd, ConfirmGate } from '../confirm/gate-step.ts';
import { type ConfirmBinding, confirmationIdOf } from '../confirm/state.ts';
import { idempotencyScope } from '../idempotency.ts';
import { type RequestFacts, withFacts } from '../request-facts.ts';
import { erpConnection, type McpInbound } from './connection.ts';
import { readFormFacts } from './display-names.ts';
import { ErpAccess, type McpDeps } from './erp-access.ts';
import type { ToolCall, ToolRun } from './tool-run.ts';
import { needsConfirmation } from './write-tools.ts';

/** The JSON-RPC codes of the refusals the protocol layer answers (protocol/mcp/messages.ts's RPC). */
const INVALID_PARAMS = -32602;
const MISSING_CLIENT_CAPABILITY = -32021;

/** A request that says nothing of a confirmation: a client that cannot be asked. */
const CANNOT_ASK = Object.freeze({
  era: 'legacy',
  formElicitation: false,
  requestState: undefined,
  inputResponses: undefined,
} as const);

/** What a call's state binds (core/confirm/state.ts). */
function bindingOf(call: ToolCall, request: McpInbound): ConfirmBinding {
  const connection = erpConnection(request.erp, request.presentedProxyKey);
  return {
    caller: idempotencyScope(request.identity),
    tool: call.tool.name,
    args: call.args,
    erp: { url: connection.baseUrl.href, db: connection.db, uid: connection.uid, apiKey: connection.apiKey },
  };
}

/** The facts that name a confirmation (its audit record's `confirmation`). */
function confirmationFacts(ref: ConfirmationRef): Pick<RequestFacts, 'confirmationId' | 'formDigest'> {
  return { confirmationId: ref.id, ...(ref.formDigest === undefined ? {} : { formDigest: ref.formDigest }) };
}

/** The digest of a form as shown: its canonical JSON's SHA-256. */
function formDigestOf(form: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(JSON.stringify(form)), 'utf8')
    .digest('base64url');
}

/** The run of a call the confirmation step ended. */
function endedRun(call: ToolCall, end: ConfirmationEnd, failed: (error: unknown) => ToolRun): ToolRun {
  const tool = call.tool.name;
  if (end.kind === 'answered') {
    return {
      outcome: { ok: 'confirmation', confirmation: { kind: 'answered', outcome: end.outcome } },
      facts: { tool, outcome: 'success', confirmation: end.outcome, ...confirmationFacts(end.confirmation) },
    };
  }
  const { refusal } = end;
  if (refusal.kind === 'legacy') {
    const run = failed(
      new KeyPolicyRefusedError(
        "a person confirms this tool's calls before they run, and this client cannot be asked: it needs an MCP client on revision 2026-07-28 that supports elicitation (form mode)",
        'confirm',
      ),
    );
    return { outcome: run.outcome, facts: { ...run.facts, policyRule: 'confirm', confirmation: 'invalid' } };
  }
  const errorCode = refusal.kind === 'capability' ? MISSING_CLIENT_CAPABILITY : INVALID_PARAMS;
  return {
    outcome: { ok: 'confirmation', confirmation: { kind: 'refused', refusal } },
    facts: {
      tool,
      outcome: 'proxy_error',
      errorCode,
      confirmation: 'invalid',
      ...(end.confirmation === undefined ? {} : confirmationFacts(end.confirmation)),
    },
  };
}

/**
 * The call's confirmation at the gate, or `undefined` when its caller's policy does not have a
 * person confirm it. `failed` turns a refusal into the tool's error run (core/mcp/run-tool.ts).
 */
export function toolConfirmation(
  call: ToolCall,
  request: McpInbound,
  deps: McpDeps,
  failed: (error: unknown) => ToolRun,
): ConfirmGate<ToolRun> | undefined {
  if (!needsConfirmation(request.keyPolicy, call.tool, call.args)) return undefined;
  const confirmDeps = deps.confirm;
  const binding = bindingOf(call, request);
  const facts = (run: RequestFacts, confirmation: RequestFacts['confirmation']): RequestFacts => ({
    ...run,
    confirmation,
  });
  return {
    decide: () => decideConfirmation(call.confirm ?? CANNOT_ASK, binding, confirmDeps),
    ended: (end) => endedRun(call, end, failed),
    async ask(decision, pinned) {
      const where = { erpUrl: binding.erp.url, db: binding.erp.db };
      const { value, upstream } = await withCallContext(
        request,
        deps.config,
        (context) =>
          readFormFacts(
            new ErpAccess(request, deps, context, call.tool),
            {
              tool: call.tool.name,
              args: call.args as Readonly<Record<string, unknown>>,
            },
            where,
          ),
        false,
        undefined,
        pinned,
      );
      // The companies a key's `companies` rule runs the call in, shown with what the call sends.
      const companies = request.keyPolicy?.companies?.get(binding.erp.db);
      const form = confirmationForm({ ...value, companies });
      // The state names the form it was shown with: the answer's audit record names the same.
      const formDigest = formDigestOf(form);
      const state = decision.seal(formDigest);
      return {
        outcome: {
          ok: 'confirmation',
          confirmation: { kind: 'ask', form, requestState: state.requestState },
        },
        facts: {
          ...facts({ tool: call.tool.name, ...upstream, outcome: 'success' }, decision.outcome),
          confirmationId: confirmationIdOf(state.nonce),
          formDigest,
        },
      };
    },
    use: (decision) => {
      // Counted as the call's store time (`Server-Timing`'s `store`).
      const used = useConfirmation(decision, confirmDeps);
      return request.storeMeter?.timed(used) ?? used;
    },
    acceptedFailure: (error, decision) =>
      withFacts(error, { confirmation: 'accepted', ...confirmationFacts(decision.confirmation) }),
    accepted: (run, decision) => ({
      outcome: run.outcome,
      facts: { ...facts(run.facts, 'accepted'), ...confirmationFacts(decision.confirmation) },
    }),
  };
}
