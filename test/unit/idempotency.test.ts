/**
 * `core/idempotency.ts` over the embedded store (the same conditions as the table), on a clock of
 * its own: what no integration test can wait for.
 */
import { describe, expect, it, vi } from 'vitest';
import type { Answer } from '../../lambdas/core/envelope.ts';
import { type IdempotentCall, runOnce } from '../../lambdas/core/idempotency.ts';
import { runTool } from '../../lambdas/core/mcp/run-tool.ts';
import { TOOLS } from '../../lambdas/core/mcp/tools.ts';
import { EmbeddedStateStore } from '../../lambdas/platform/state/state-store-embedded.ts';
import type { ErpCall, ErpOutcome } from '../../lambdas/upstream/erp-transport.ts';
import { mcpDeps, mcpInbound } from '../support/mcp-serve.ts';

const ANSWER: Answer = {
  response: {
    statusCode: 200,
    headers: { 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":"a","result":7,"error":null}',
  },
  facts: { outcome: 'success' },
};

describe('runOnce', () => {
  it('never runs a call again while its first attempt runs, even past IDEMPOTENCY_TTL (a lease longer than the TTL)', async () => {
    let clock = 1_700_000_000_000;
    const deps = { store: new EmbeddedStateStore(), ttlSeconds: 60, now: () => clock };
    // ERP_MAX_TIMEOUT may be up to 900 s, IDEMPOTENCY_TTL as low as 60 s.
    const call: IdempotentCall = {
      key: 'k-1',
      scope: 'key:billing',
      fingerprint: 'fp',
      envelopeId: 'a',
      leaseMs: 300_000,
    };
    let runs = 0;
    let finish: ((answer: Answer) => void) | undefined;
    const first = runOnce(deps, call, async (sent) => {
      runs += 1;
      // It reached the ERP (its record says so), and does not answer.
      await sent();
      return new Promise<Answer>((resolve) => {
        finish = resolve;
      });
    });
    await vi.waitFor(() => expect(runs).toBe(1));
    clock += 61_000;
    const retry = runOnce(deps, call, async () => {
      runs += 1;
      return ANSWER;
    });
    await expect(retry).rejects.toMatchObject({ code: -32010 });
    // Past the lease: "outcome unknown" (the record is kept for the TTL after it), never run.
    clock += 240_000; // the lease (300 s) has just passed
    await expect(runOnce(deps, call, async () => ANSWER)).rejects.toMatchObject({ code: -32003 });
    clock += 58_000; // within the TTL counted from the end of the lease
    await expect(runOnce(deps, call, async () => ANSWER)).rejects.toMatchObject({ code: -32003 });
    expect(runs).toBe(1);
    finish?.(ANSWER);
    await first;
  });

  it('takes over a claim never marked sent once its lease passes: the call runs once, never "outcome unknown"', async () => {
    let clock = 1_700_000_000_000;
    const deps = { store: new EmbeddedStateStore(), ttlSeconds: 600, now: () => clock };
    const call: IdempotentCall = {
      key: 'k-2',
      scope: 'key:billing',
      fingerprint: 'fp',
      envelopeId: 'a',
      leaseMs: 30_000,
    };
    // The first attempt's claim was written, and its call never reached the ERP (its function
    // stopped before: the record was never marked sent, and never abandoned).
    void runOnce(deps, call, () => new Promise<Answer>(() => undefined));
    await vi.waitFor(() => expect(deps.store.recordsHeld.records).toBe(1));

    let runs = 0;
    const retry = (): Promise<Answer> =>
      runOnce(deps, call, async (sent) => {
        runs += 1;
        await sent();
        return ANSWER;
      });
    // Within the lease: still answered "in progress".
    clock += 10_000;
    await expect(retry()).rejects.toMatchObject({ code: -32010 });
    // Past it: taken over and run, once; then replayed.
    clock += 21_000;
    await expect(retry()).resolves.toMatchObject({ facts: { idempotency: 'recorded' } });
    await expect(retry()).resolves.toMatchObject({ facts: { idempotency: 'replayed' } });
    expect(runs).toBe(1);
  });

  it('a record that cannot be marked sent refuses the call before the ERP (-32004), and a retry after the lease runs it', async () => {
    let clock = 1_700_000_000_000;
    const store = new EmbeddedStateStore();
    const deps = { store, ttlSeconds: 600, now: () => clock };
    const call: IdempotentCall = {
      key: 'k-3',
      scope: 'key:billing',
      fingerprint: 'fp',
      envelopeId: 'a',
      leaseMs: 30_000,
    };
    const markSent = store.markSent.bind(store);
    const abandon = store.abandonAttempt.bind(store);
    // The store stops answering right after the claim: the mark and the clean-up both fail.
    store.markSent = async () => {
      throw new Error('unreachable');
    };
    store.abandonAttempt = async () => {
      throw new Error('unreachable');
    };
    let erp = 0;
    const run = (): Promise<Answer> =>
      runOnce(deps, call, async (sent) => {
        await sent();
        erp += 1;
        return ANSWER;
      });
    const refused = await run().catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: -32004 });
    expect((refused as Error).message).toMatch(
      /^Nothing was sent to the ERP: the idempotency store could not be reached/,
    );
    expect(erp).toBe(0);
    store.markSent = markSent;
    store.abandonAttempt = abandon;
    clock += 31_000;
    await expect(run()).resolves.toMatchObject({ facts: { idempotency: 'recorded' } });
    expect(erp).toBe(1);
  });

  it("an MCP write tool's record is marked sent before its request reaches the ERP", async () => {
    const order: string[] = [];
    const store = new EmbeddedStateStore();
    const markSent = store.markSent.bind(store);
    store.markSent = async (key, token) => {
      order.push('marked sent');
      return markSent(key, token);
    };
    const deps = {
      ...mcpDeps(true, {
        call: async (call: ErpCall): Promise<ErpOutcome> => {
          order.push(call.method);
          return { kind: 'result', value: [7] };
        },
      }),
    };
    const create = TOOLS.find((tool) => tool.name === 'create');
    if (create === undefined) throw new Error('create is declared');
    const run = await runTool(
      { tool: create, args: { model: 'res.partner', values: { name: 'A' }, idempotency_key: 'mcp-1' } },
      mcpInbound(
        {},
        {},
        {
          erp: {
            from: 'headers',
            headers: { url: 'http://127.0.0.1:9', db: 'erp_a', apiKey: 'b'.repeat(40), userId: '2' },
          },
        },
      ),
      { ...deps, idempotency: { store, ttlSeconds: 60 } },
    );
    expect(run.outcome.ok).toBe(true);
    expect(order).toEqual(['marked sent', 'create']);
  });
});
