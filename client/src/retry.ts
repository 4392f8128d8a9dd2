/**
 * @module retry
 * When to send a call again, and how long to wait first. A call is sent again only when it
 * certainly did not run (-32004) or the ERP reported a lock conflict (409): never after -32003,
 * whose call may have run, nor after any other error.
 */
import { ErpError, ErpProxyError } from './errors.js';

/** The first wait; each further retry doubles it (before jitter). */
export const BASE_DELAY_MS = 250;
/** The longest wait the back-off itself chooses. */
export const MAX_BACKOFF_MS = 8_000;
/**
 * The default of `maxRetryWaitSeconds`: a `Retry-After` longer than this is not waited for (the
 * error is thrown instead), and no wait is longer.
 */
export const MAX_RETRY_AFTER_SECONDS = 60;

/** What `onRetry` sees before each wait: which retry comes, after how long, and why. */
export interface RetryEvent {
  /** The retry about to be sent: 1 for the first. */
  readonly retry: number;
  /** How long the client waits before sending it, in milliseconds. */
  readonly waitMs: number;
  /** The error of the attempt before (its `code`, `retryAfterSeconds`...). */
  readonly error: ErpProxyError | ErpError;
  /** The envelope id of the call (the same on every retry). */
  readonly id: string;
  /** The call's `Idempotency-Key`, when it has one (the same on every retry). */
  readonly idempotencyKey: string | undefined;
}

/** Whether `error` is one a retry may cure without running the call twice. */
export function isRetryable(error: unknown): boolean {
  return (error instanceof ErpProxyError || error instanceof ErpError) && error.retryable;
}

/**
 * How long to wait before retry number `attempt` (0 for the first retry): exponential back-off
 * with jitter (half fixed, half random, so retries of many callers spread out but never come at
 * once), at most `maxWaitSeconds`, and never sooner than the answer's `Retry-After`. `undefined`
 * when `Retry-After` asks for more than `maxWaitSeconds`: then the caller gets the error rather
 * than a call that hangs for longer than it chose to wait.
 */
export function retryDelayMs(
  attempt: number,
  retryAfterSeconds: number | undefined,
  random: () => number = Math.random,
  maxWaitSeconds: number = MAX_RETRY_AFTER_SECONDS,
): number | undefined {
  if (retryAfterSeconds !== undefined && retryAfterSeconds > maxWaitSeconds) return undefined;
  const backoff = Math.min(MAX_BACKOFF_MS, BASE_DELAY_MS * 2 ** attempt);
  const jittered = Math.min(backoff / 2 + random() * (backoff / 2), maxWaitSeconds * 1000);
  return Math.round(Math.max(jittered, (retryAfterSeconds ?? 0) * 1000));
}

/**
 * `Retry-After` in seconds: delta-seconds (`120`) or an HTTP date. `undefined` when absent or
 * unreadable; a date in the past is 0.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  // An HTTP date names its day and month (`Sat, 21 Nov 2026 10:00:30 GMT`); `Date.parse` alone
  // would also take `-1` as a year.
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
