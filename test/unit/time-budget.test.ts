/**
 * The upstream time budget: `x-request-timeout` parsing (README, Limits), the caps by
 * `ERP_MAX_TIMEOUT` and by the Lambda time left.
 */
import { describe, expect, it } from 'vitest';
import {
  LAMBDA_SAFETY_MARGIN_MS,
  parseRequestTimeoutHeader,
  upstreamTimeoutMs,
} from '../../lambdas/upstream/time-budget.ts';

describe('parseRequestTimeoutHeader', () => {
  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['blank', '   '],
    ['non-numeric', 'abc'],
    ['negative', '-1'],
    ['zero', '0'],
    ['zeros', '000'],
    ['fractional', '1.5'],
    ['exponent', '1e3'],
    ['hex', '0x10'],
    ['number with a unit', '10s'],
    ['two numbers', '1 2'],
    ['beyond int64', '99999999999999999999'],
    ['just beyond int64', '9223372036854775808'],
  ])('%s (%j) means "use the default"', (_label, header) => {
    // Prepare / Act
    const parsed = parseRequestTimeoutHeader(header);
    // Assess
    expect(parsed).toBeUndefined();
  });

  it.each([
    ['1', 1],
    ['30', 30],
    [' 7 ', 7],
    ['+3', 3],
    ['007', 7],
    ['999999999999', 999_999_999_999],
  ])('%j is %d seconds', (header, seconds) => {
    const parsed = parseRequestTimeoutHeader(header);
    expect(parsed).toBe(seconds);
  });
});

describe('upstreamTimeoutMs', () => {
  const base = { defaultSeconds: 15, maxSeconds: 25 };

  it('uses the default when the header is missing or unusable', () => {
    expect(upstreamTimeoutMs({ ...base, header: undefined })).toBe(15_000);
    expect(upstreamTimeoutMs({ ...base, header: '0' })).toBe(15_000);
    expect(upstreamTimeoutMs({ ...base, header: 'soon' })).toBe(15_000);
  });

  it('caps any int64 value at the maximum, however long', () => {
    expect(upstreamTimeoutMs({ ...base, header: '9999999999999' })).toBe(25_000);
    expect(upstreamTimeoutMs({ ...base, header: '9223372036854775807' })).toBe(25_000);
  });

  it('uses the requested seconds when they are within the maximum', () => {
    expect(upstreamTimeoutMs({ ...base, header: '3' })).toBe(3_000);
  });

  it('caps the requested seconds at the maximum', () => {
    expect(upstreamTimeoutMs({ ...base, header: '60' })).toBe(25_000);
    expect(upstreamTimeoutMs({ ...base, header: '999999999999' })).toBe(25_000);
  });

  it('caps the default at the maximum too', () => {
    expect(upstreamTimeoutMs({ defaultSeconds: 30, maxSeconds: 10, header: undefined })).toBe(10_000);
  });

  it('keeps the safety margin back from the remaining Lambda time', () => {
    // Prepare: 10 s left in the invocation, 20 s asked for.
    const remainingMs = 10_000;
    // Act
    const budget = upstreamTimeoutMs({ ...base, header: '20', remainingMs });
    // Assess
    expect(budget).toBe(remainingMs - LAMBDA_SAFETY_MARGIN_MS);
    expect(LAMBDA_SAFETY_MARGIN_MS).toBeGreaterThan(0);
  });

  it('ignores the remaining time when it leaves more than the request needs', () => {
    expect(upstreamTimeoutMs({ ...base, header: '2', remainingMs: 28_000 })).toBe(2_000);
  });

  it('ignores a non-finite remaining time', () => {
    expect(upstreamTimeoutMs({ ...base, header: '2', remainingMs: Number.POSITIVE_INFINITY })).toBe(2_000);
    expect(upstreamTimeoutMs({ ...base, header: '2', remainingMs: Number.NaN })).toBe(2_000);
  });

  it('never goes below the floor, even with no Lambda time left', () => {
    const nearlyGone = upstreamTimeoutMs({ ...base, header: '5', remainingMs: 100 });
    const gone = upstreamTimeoutMs({ ...base, header: '5', remainingMs: 0 });
    expect(nearlyGone).toBe(50);
    expect(gone).toBe(50);
  });

  it('returns whole milliseconds', () => {
    const budget = upstreamTimeoutMs({ ...base, header: '20', remainingMs: 9_999.7 });
    expect(budget).toBe(8_499);
  });

  it("takes off what the call already spent (the limits' lookup of its ERP), not twice from the time left", () => {
    expect(upstreamTimeoutMs({ ...base, header: '5', spentMs: 1_200 })).toBe(3_800);
    // The time left was read after the lookup: it has the lookup spent already.
    expect(upstreamTimeoutMs({ ...base, header: '20', remainingMs: 10_000, spentMs: 1_200 })).toBe(8_500);
    expect(upstreamTimeoutMs({ ...base, header: '5', spentMs: 60_000 })).toBe(50);
  });
});
