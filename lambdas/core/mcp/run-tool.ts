/**
 * @module core/mcp/run-tool
 * One tool call against the ERP, once the protocol layer has found the tool and checked its
 * arguments: the ERP calls within the request's time budget, and every failure turned into the
 * tool's error result (core/mcp/answers.ts). It takes and returns plain values: the protocol
 * layer (protocol/mcp/) turns the outcome into an MCP result of its revision.
 */
import { InternalError, ProxyError } from '../../platform/errors.ts';
import { withCallContext } from '../forward.ts';
import { checkKeyPolicy } from '../key-policy-check.ts';
import { type FactSheet, factsOf } from '../request-facts.ts';
import { erpFailure, failureJson, proxyFailure, type ToolAnswer, type ToolFailure } from './answers.ts';
import { inConnectionWords, type McpErp, type McpInbound } from './connection.ts';
import { ErpAccess, ErpCallError, type McpDeps } from './erp-access.ts';
import type { ToolDefinition } from './tools.ts';

/** How a tool call ended: its answer, or its failure as the JSON text its error result shows. */
export type ToolOutcome =
  | { readonly ok: true; readonly answer: ToolAnswer }
  | { readonly ok: false; readonly text: string };

/** A failure: what the request log and metrics record, and its text. */
function failed(state: FactSheet, failure: ToolFailure, erp: McpErp): ToolOutcome {
  state.outcome = failure.source === 'erp' ? 'erp_error' : 'proxy_error';
  state.errorCode = failure.code;
  // A token caller is told of the operator's identity map, never of a header.
  const { message, retry } = failure;
  const text = failureJson({
    ...failure,
    message: inConnectionWords(message, erp),
    retry: inConnectionWords(retry, erp),
  });
  return { ok: false, text };
}

/** Runs one tool (its arguments checked) within the request's time budget; every failure becomes its outcome. */
export async function runTool(
  definition: ToolDefinition,
  args: unknown,
  inbound: McpInbound,
  state: FactSheet,
  deps: McpDeps,
): Promise<ToolOutcome> {
  state.tool = definition.name;
  const readOnly = !definition.writes;
  try {
    // The caller key's policy: a tool that changes data is refused to a read key (-32008).
    checkKeyPolicy(inbound.keyPolicy, { tool: definition });
    const { value: answer, upstream } = await withCallContext(inbound, deps.config, (context) =>
      definition.run(args as never, new ErpAccess(inbound, state, deps, context)),
    );
    Object.assign(state, upstream);
    state.outcome = 'success';
    return { ok: true, answer };
  } catch (error) {
    Object.assign(state, factsOf(error));
    if (error instanceof ErpCallError) {
      return failed(state, erpFailure(error.code, error.erpMessage, error.data), inbound.erp);
    }
    if (error instanceof ProxyError) return failed(state, proxyFailure(error, readOnly), inbound.erp);
    // A bug: logged with its stack (observe reads it), shown as -32603 without details.
    state.internalError = error;
    return failed(state, proxyFailure(new InternalError(error), readOnly), inbound.erp);
  }
}
