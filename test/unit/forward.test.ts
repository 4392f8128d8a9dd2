/**
 * The call context of one request (lambdas/core/forward.ts): its upstream deadline fires when the
 * budget is spent, and its timer is gone as soon as the call settles (no timer per request left
 * behind for the rest of the budget).
 */

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { withCallContext, withLazyCallContext } from '../../lambdas/core/call-context.ts';
import type { InboundCall } from '../../lambdas/core/inbound-call.ts';
import { negotiateEncoding } from '../../lambdas/core/response-encoding.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';
import type { CallContext } from '../../lambdas/upstream/erp-transport.ts';
import { LAMBDA_SAFETY_MARGIN_MS } from '../../lambdas/upstream/time-budget.ts';
import { TEST_PROXY_KEY } from '../support/test-secrets.ts';

const config = loadConfig({
  PROXY_API_KEY: TEST_PROXY_KEY,
  ERP_DEFAULT_TIMEOUT: '10',
  ERP_MAX_TIMEOUT: '25',
});

/** One call as the edge hands it to the core: headers, source address, time left. No event. */
function inbound(headers: Record<string, string> = {}, functionTimeoutMs = 28_000): InboundCall {
  return {
    body: { ok: false },
    identity: { kind: 'key', name: 'test' },
    envelopeId: null,
    keyPolicy: undefined,
    presentedProxyKey: TEST_PROXY_KEY,
    requestTimeout: headers['x-request-timeout'],
    responseEncoding: negotiateEncoding(headers['accept-encoding']),
    sourceIp: '192.0.2.7',
    remainingMs: () => functionTimeoutMs,
  };
}

describe('withCallContext', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('aborts the signal with a TimeoutError once the budget is spent, not a millisecond before', async () => {
    // Prepare
    let seen: CallContext | undefined;
    const pending = withCallContext(inbound({ 'x-request-timeout': '3' }), config, (call) => {
      seen = call;
      return new Promise<string>((_resolve, reject) => {
        call.signal.addEventListener('abort', () => reject(call.signal.reason));
      });
    });
    const outcome = pending.then(
      () => 'resolved',
      (error: unknown) => error,
    );
    // Act
    await vi.advanceTimersByTimeAsync(2_999);
    const abortedEarly = seen?.signal.aborted;
    await vi.advanceTimersByTimeAsync(1);
    // Assess
    expect(seen?.timeoutMs).toBe(3_000);
    expect(abortedEarly).toBe(false);
    expect(await outcome).toMatchObject({ name: 'TimeoutError' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it.each([
    ['resolves', () => Promise.resolve('ok')],
    ['rejects', () => Promise.reject(new Error('upstream failed'))],
  ])('leaves no timer behind when the call %s', async (_label, settle) => {
    // Prepare
    let signal: AbortSignal | undefined;
    // Act
    await withCallContext(inbound(), config, (call) => {
      signal = call.signal;
      return settle();
    }).catch(() => undefined);
    // Assess
    expect(vi.getTimerCount()).toBe(0);
    expect(signal?.aborted).toBe(false);
  });

  it('computes the budget, read limit and client identity once for the call', async () => {
    // Prepare
    const calls: CallContext[] = [];
    const record = (call: CallContext): Promise<void> => {
      calls.push(call);
      return Promise.resolve();
    };
    // Act
    await withCallContext(inbound(), config, record);
    await withCallContext(inbound({ 'x-request-timeout': '60' }), config, record);
    await withCallContext(inbound({ 'x-request-timeout': '20' }, 5_000), config, record);
    await withCallContext(inbound({ 'accept-encoding': 'gzip' }), config, record);
    // Assess
    expect(calls.map((c) => c.timeoutMs)).toEqual([10_000, 25_000, 5_000 - LAMBDA_SAFETY_MARGIN_MS, 10_000]);
    expect(calls[0]).toMatchObject({
      maxResponseBytes: config.maxResponseBytes,
      compressedResponse: false,
      clientIp: '192.0.2.7',
    });
    expect(calls[3]).toMatchObject({
      maxResponseBytes: config.maxResponseBytes * 10,
      compressedResponse: true,
    });
  });
});

describe("withLazyCallContext (an MCP tool's policy step)", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('opens no budget for a phase that never asks for it: no timer, no upstream facts', async () => {
    let timers = -1;
    const { value, upstream } = await withLazyCallContext(inbound(), config, async () => {
      timers = vi.getTimerCount();
      return 'ruled';
    });
    expect(value).toBe('ruled');
    expect(timers).toBe(0);
    expect(upstream).toBeUndefined();
  });

  it('opens one budget on the first ask, keeps it for the phase, and leaves no timer behind', async () => {
    const seen: CallContext[] = [];
    const { upstream } = await withLazyCallContext(
      inbound({ 'x-request-timeout': '3' }),
      config,
      async (context) => {
        seen.push(context(), context());
        expect(vi.getTimerCount()).toBe(1);
        context().meter.exchanged(200, 5);
        return undefined;
      },
    );
    expect(seen[0]).toBe(seen[1]);
    expect(seen[0]?.timeoutMs).toBe(3_000);
    expect(upstream).toEqual({ upstreamStatus: 200, upstreamMs: 5 });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("adds an earlier phase's upstream facts to the next phase's (the lookups' time to the run's)", async () => {
    const { upstream } = await withCallContext(
      inbound(),
      config,
      async (call) => {
        call.meter.exchanged(200, 7);
        return undefined;
      },
      false,
      { upstreamStatus: 200, upstreamMs: 5, upstreamProtocol: 'json2' },
    );
    expect(upstream).toEqual({ upstreamStatus: 200, upstreamMs: 12, upstreamProtocol: 'json2' });
  });
});
