/**
 * @module upstream/time-budget
 * The upstream deadline of one request, computed once from `x-request-timeout`, the configured
 * default and maximum, and the Lambda time left, then passed down to the HTTP client.
 */

/** Time kept back from the Lambda's remaining time so the proxy answers -32003 itself. */
export const LAMBDA_SAFETY_MARGIN_MS = 1_500;

const INT64_MAX = 2n ** 63n - 1n;

/** Never hand the client less than this, even when Lambda time is nearly gone. */
const MINIMUM_BUDGET_MS = 50;

export interface TimeBudgetInput {
  /** Raw `x-request-timeout` header value, if any. */
  readonly header: string | undefined;
  readonly defaultSeconds: number;
  readonly maxSeconds: number;
  /** `context.getRemainingTimeInMillis()`, when running under a (real or emulated) Lambda. */
  readonly remainingMs?: number | undefined;
  /**
   * What the call already spent of its budget before its first request: the limits' DNS lookup of
   * its ERP (core/limits-check.ts). (The Lambda time left, read later, has it spent already.)
   */
  readonly spentMs?: number | undefined;
}

/**
 * Parses `x-request-timeout`: integer seconds. Missing, non-numeric, negative or 0 means "use the
 * default" (README, Limits). Returns `undefined` in those cases.
 */
export function parseRequestTimeoutHeader(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  // The header is an int64 (README, Limits): anything that fits is a number (and is capped later).
  if (!/^\+?\d{1,19}$/.test(text) || BigInt(text.replace('+', '')) > INT64_MAX) return undefined;
  const seconds = Number(text);
  return seconds > 0 ? seconds : undefined;
}

/** The upstream timeout in milliseconds for one request. */
export function upstreamTimeoutMs(input: TimeBudgetInput): number {
  const requested = parseRequestTimeoutHeader(input.header) ?? input.defaultSeconds;
  let budget = Math.min(requested, input.maxSeconds) * 1000 - (input.spentMs ?? 0);
  if (input.remainingMs !== undefined && Number.isFinite(input.remainingMs)) {
    budget = Math.min(budget, input.remainingMs - LAMBDA_SAFETY_MARGIN_MS);
  }
  return Math.max(MINIMUM_BUDGET_MS, Math.floor(budget));
}
