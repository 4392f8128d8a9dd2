/**
 * The budget for ERP answers held at once (the local server's) and the lease found through the
 * async context. Over HTTP: test/integration/local-server-limits.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  AnswerBudget,
  currentAnswerLease,
  runWithAnswerLease,
} from '../../lambdas/platform/answer-budget.ts';

describe('AnswerBudget', () => {
  it('grants what fits, refuses what does not beside others, and takes it back when a lease ends', () => {
    const budget = new AnswerBudget(1_000);
    const a = budget.lease();
    const b = budget.lease();
    expect(a.reserve(600)).toBe(true);
    expect(b.reserve(500)).toBe(false);
    expect(b.reserve(400)).toBe(true);
    expect(budget.heldBytes).toBe(1_000);
    a.release();
    expect(budget.heldBytes).toBe(400);
    expect(b.reserve(600)).toBe(true);
    b.release();
    b.release();
    expect(budget.heldBytes).toBe(0);
  });

  it('lets one lease alone go over the budget (a call alone always fits)', () => {
    const budget = new AnswerBudget(1_000);
    const alone = budget.lease();
    expect(alone.reserve(5_000)).toBe(true);
    expect(alone.reserve(5_000)).toBe(true);
    expect(budget.lease().reserve(1)).toBe(false);
    alone.release();
    expect(budget.lease().reserve(1)).toBe(true);
  });

  it('does not count what a lease reserves after it ended', () => {
    const budget = new AnswerBudget(1_000);
    const lease = budget.lease();
    lease.release();
    expect(lease.reserve(900)).toBe(true);
    expect(budget.heldBytes).toBe(0);
  });
});

describe('the current lease', () => {
  it('is the one the invocation runs with, across awaits; none outside', async () => {
    const lease = new AnswerBudget(1_000).lease();
    expect(currentAnswerLease()).toBeUndefined();
    const seen = await runWithAnswerLease(lease, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return currentAnswerLease();
    });
    expect(seen).toBe(lease);
  });
});
