/**
 * @module core/call-context
 * The call context of one request (its time budget, size limit and client identity), shared by
 * the execute and version endpoints (core/forward.ts) and the MCP tools (core/mcp/): what an ERP
 * request needs besides the call itself.
 */
import type { Config } from '../platform/config.ts';
import { type CallContext, type UpstreamFacts, UpstreamMeter } from '../upstream/erp-transport.ts';
import type { ConnectTo } from '../upstream/http-client.ts';
import { upstreamTimeoutMs } from '../upstream/time-budget.ts';
import type { InboundCall } from './inbound-call.ts';
import { withFacts } from './request-facts.ts';

/** Compressed responses may carry roughly ten times more JSON; memory still bounds the read. */
const COMPRESSED_READ_FACTOR = 10;
const COMPRESSED_READ_CEILING_BYTES = 64 * 1024 * 1024;

/** What a call returned, and what its upstream exchanges add up to. */
export interface Metered<T> {
  readonly value: T;
  readonly upstream: UpstreamFacts;
}

/**
 * Where a call's ERP requests connect, as the gate's limits step resolved its ERP's host name
 * (core/limits-check.ts: the address it counted the call against, or the answer), and how long
 * that lookup took: the call's time budget is that much shorter.
 */
export interface PinnedErp {
  readonly connectTo: ConnectTo;
  readonly lookupMs: number;
}

/** A call context and what closes it. */
interface OpenBudget {
  readonly context: CallContext;
  readonly meter: UpstreamMeter;
  close(): void;
}

/** The request's time budget, size limit and client identity, computed once; its timer runs until `close`. */
function openBudget(
  inbound: InboundCall,
  config: Config,
  stripDebug: boolean,
  before: UpstreamFacts | undefined,
  pinned?: PinnedErp,
): OpenBudget {
  const remaining = inbound.remainingMs?.();
  const timeoutMs = upstreamTimeoutMs({
    header: inbound.requestTimeout,
    defaultSeconds: config.defaultTimeoutSeconds,
    maxSeconds: config.maxTimeoutSeconds,
    remainingMs: remaining,
    spentMs: pinned?.lookupMs,
  });
  const compressed = inbound.responseEncoding !== undefined;
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new DOMException('The upstream time budget is spent.', 'TimeoutError')),
    timeoutMs,
  );
  const meter = new UpstreamMeter(before);
  const context: CallContext = {
    signal: deadline.signal,
    timeoutMs,
    maxResponseBytes: compressed
      ? Math.min(config.maxResponseBytes * COMPRESSED_READ_FACTOR, COMPRESSED_READ_CEILING_BYTES)
      : config.maxResponseBytes,
    compressedResponse: compressed,
    clientIp: inbound.sourceIp,
    trace: inbound.trace,
    stripDebug,
    ...(inbound.answerLease ? { answerLease: inbound.answerLease } : {}),
    ...(pinned ? { connectTo: pinned.connectTo } : {}),
    meter,
  };
  return { context, meter, close: () => clearTimeout(timer) };
}

/**
 * Runs `call` with the request's call context: its time budget, size limit and client identity,
 * computed once. One signal serves the whole request, so every upstream exchange of it shares
 * the budget; its timer is cleared as soon as the call settles (`AbortSignal.timeout` would keep
 * a timer and a weak reference alive per request for the whole budget: tens of thousands of
 * them under load, each a little more work for the garbage collector). The upstream facts (status,
 * time, protocol) come back with the value, or ride on the error it throws. `stripDebug` is the
 * execute APIs' `ERP_STRIP_DEBUG`: only their answers carry the ERP's error data (the version
 * endpoints and the MCP tools never do, so their functions do not read the setting). `before`:
 * what an earlier phase of the same call measured (an MCP tool's lookups at the policy step), which
 * its upstream facts add up with. `pinned`: where the limits found the call's ERP (its requests
 * connect there; the lookup's time is off its budget).
 */
export async function withCallContext<T>(
  inbound: InboundCall,
  config: Config,
  call: (callContext: CallContext) => Promise<T>,
  stripDebug = false,
  before?: UpstreamFacts,
  pinned?: PinnedErp,
): Promise<Metered<T>> {
  const budget = openBudget(inbound, config, stripDebug, before, pinned);
  try {
    const value = await call(budget.context);
    return { value, upstream: budget.meter.facts() };
  } catch (error) {
    throw withFacts(error, budget.meter.facts());
  } finally {
    budget.close();
  }
}

/**
 * {@link withCallContext} for a phase that may send nothing (an MCP tool's policy step: its
 * lookups and rules send only what they need): the budget is opened on the first `context()`,
 * so a phase that never asks costs no timer. Its upstream facts are `undefined` when it never asked.
 */
export async function withLazyCallContext<T>(
  inbound: InboundCall,
  config: Config,
  call: (context: () => CallContext) => Promise<T>,
): Promise<{ readonly value: T; readonly upstream: UpstreamFacts | undefined }> {
  let budget: OpenBudget | undefined;
  const context = (): CallContext => {
    budget ??= openBudget(inbound, config, false, undefined);
    return budget.context;
  };
  try {
    const value = await call(context);
    return { value, upstream: budget?.meter.facts() };
  } catch (error) {
    throw budget === undefined ? error : withFacts(error, budget.meter.facts());
  } finally {
    budget?.close();
  }
}
