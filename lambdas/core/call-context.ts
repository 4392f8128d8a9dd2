/**
 * @module core/call-context
 * The call context of one request (its time budget, size limit and client identity), shared by
 * the execute and version endpoints (core/forward.ts) and the MCP tools (core/mcp/): what an ERP
 * request needs besides the call itself.
 */
import type { Config } from '../platform/config.ts';
import { type CallContext, type UpstreamFacts, UpstreamMeter } from '../upstream/erp-transport.ts';
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
 * Runs `call` with the request's call context: its time budget, size limit and client identity,
 * computed once. One signal serves the whole request, so every upstream exchange of it shares
 * the budget; its timer is cleared as soon as the call settles (`AbortSignal.timeout` would keep
 * a timer and a weak reference alive per request for the whole budget: tens of thousands of
 * them under load, each a little more work for the garbage collector). The upstream facts (status,
 * time, protocol) come back with the value, or ride on the error it throws. `stripDebug` is the
 * execute APIs' `ERP_STRIP_DEBUG`: only their answers carry the ERP's error data (the version
 * endpoints and the MCP tools never do, so their functions do not read the setting). `before`:
 * what an earlier phase of the same call measured (an MCP tool's lookups at the policy step), which
 * its upstream facts add up with.
 */
export async function withCallContext<T>(
  inbound: InboundCall,
  config: Config,
  call: (callContext: CallContext) => Promise<T>,
  stripDebug = false,
  before?: UpstreamFacts,
): Promise<Metered<T>> {
  const remaining = inbound.remainingMs?.();
  const timeoutMs = upstreamTimeoutMs({
    header: inbound.requestTimeout,
    defaultSeconds: config.defaultTimeoutSeconds,
    maxSeconds: config.maxTimeoutSeconds,
    remainingMs: remaining,
  });
  const compressed = inbound.responseEncoding !== undefined;
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new DOMException('The upstream time budget is spent.', 'TimeoutError')),
    timeoutMs,
  );
  const meter = new UpstreamMeter(before);
  try {
    const value = await call({
      signal: deadline.signal,
      timeoutMs,
      maxResponseBytes: compressed
        ? Math.min(config.maxResponseBytes * COMPRESSED_READ_FACTOR, COMPRESSED_READ_CEILING_BYTES)
        : config.maxResponseBytes,
      compressedResponse: compressed,
      clientIp: inbound.sourceIp,
      stripDebug,
      ...(inbound.answerLease ? { answerLease: inbound.answerLease } : {}),
      meter,
    });
    return { value, upstream: meter.facts() };
  } catch (error) {
    throw withFacts(error, meter.facts());
  } finally {
    clearTimeout(timer);
  }
}
