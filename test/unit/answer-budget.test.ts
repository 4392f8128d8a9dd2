/**
 * The budget for ERP answers held at once (the local server's), and how an invocation's lease
 * travels to the HTTP client as a value. Over HTTP: test/integration/local-server-limits.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { buildContext } from '../../lambdas/local/server.ts';
import { toInboundCall } from '../../lambdas/middleware/inbound-edge.ts';
import { AnswerBudget, SMALL_ANSWER_BYTES } from '../../lambdas/platform/answer-budget.ts';
import { httpApiEvent } from '../support/http-api-event.ts';

const route = { method: 'POST', path: '/api/erp/execute' } as const;
/** What the `jsonBody` step returns for a request without a body. */
const noBody = { body: { ok: false as const }, envelopeId: null, callerName: 'test', policy: undefined };

describe('AnswerBudget', () => {
  // Sizes above what always fits, so that the budget decides.
  const U = 2 * SMALL_ANSWER_BYTES;

  it('grants what fits, refuses what does not beside others, and takes it back when a lease ends', () => {
    const budget = new AnswerBudget(10 * U);
    const a = budget.lease();
    const b = budget.lease();
    expect(a.reserve(6 * U)).toBe(true);
    expect(b.reserve(5 * U)).toBe(false);
    expect(b.reserve(4 * U)).toBe(true);
    expect(budget.heldBytes).toBe(10 * U);
    a.release();
    expect(budget.heldBytes).toBe(4 * U);
    expect(b.reserve(6 * U)).toBe(true);
    b.release();
    b.release();
    expect(budget.heldBytes).toBe(0);
  });

  it('lets one lease alone go over the budget (a call alone always fits)', () => {
    const budget = new AnswerBudget(10 * U);
    const alone = budget.lease();
    expect(alone.reserve(50 * U)).toBe(true);
    expect(alone.reserve(50 * U)).toBe(true);
    expect(budget.lease().reserve(U)).toBe(false);
    alone.release();
    expect(budget.lease().reserve(U)).toBe(true);
  });

  it("always grants an invocation's first SMALL_ANSWER_BYTES (a write's answer is never refused)", () => {
    const budget = new AnswerBudget(10 * U);
    const full = budget.lease();
    expect(full.reserve(10 * U)).toBe(true);
    const small = budget.lease();
    expect(small.reserve(10)).toBe(true);
    expect(small.reserve(SMALL_ANSWER_BYTES - 10)).toBe(true);
    // Counted per invocation: the next byte is a large answer's, and does not fit.
    expect(small.reserve(1)).toBe(false);
    expect(budget.heldBytes).toBe(10 * U + SMALL_ANSWER_BYTES);
  });

  it('does not count what a lease reserves after it ended', () => {
    const budget = new AnswerBudget(10 * U);
    const lease = budget.lease();
    lease.release();
    expect(lease.reserve(9 * U)).toBe(true);
    expect(budget.heldBytes).toBe(0);
  });
});

describe("an invocation's lease", () => {
  it('travels as a value: from the context the local server builds into the inbound call', () => {
    const lease = new AnswerBudget(1_000).lease();
    const context = { ...buildContext('execute-v1', 'req-1'), answerLease: lease };
    expect(toInboundCall(httpApiEvent(route), context, noBody).answerLease).toBe(lease);
    const onLambda = buildContext('execute-v1', 'req-2');
    expect(toInboundCall(httpApiEvent(route), onLambda, noBody).answerLease).toBeUndefined();
  });
});
