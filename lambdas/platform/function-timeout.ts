/**
 * @module platform/function-timeout
 * The local server's emulated function timeout, which the local server enforces and the audit reads
 * (a record still `pending` after the writing function's timeout reads as `unknown`).
 */
import type { Config } from './config.ts';

/** The emulated function timeout (the deployed execute functions default to 28 s). */
export const LOCAL_FUNCTION_TIMEOUT_MS = 28_000;
/** How far the deployed defaults keep the Lambda timeout above `ERP_MAX_TIMEOUT` (28 s vs 25 s). */
const FUNCTION_TIMEOUT_HEADROOM_MS = 3_000;

/**
 * The emulated function timeout for a configuration: 28 s as deployed, or longer when
 * `ERP_MAX_TIMEOUT` asks for more. Locally no API Gateway limit applies, so a configured maximum
 * of 60 s must give 60 s, not the 26.5 s a 28 s function would leave.
 */
export function localFunctionTimeoutMs(config: Pick<Config, 'maxTimeoutSeconds'>): number {
  return Math.max(LOCAL_FUNCTION_TIMEOUT_MS, config.maxTimeoutSeconds * 1000 + FUNCTION_TIMEOUT_HEADROOM_MS);
}

/** The time after a writing function's timeout before its `pending` audit record reads `unknown`. */
export const PENDING_MARGIN_SECONDS = 30;

/**
 * How long an audit record may stay `pending` before it reads `unknown` and the sealer completes it
 * (ms): `AUDIT_PENDING_AFTER` as the stack sets it, or locally the emulated timeout and the margin.
 */
export function pendingMaxMs(config: Pick<Config, 'auditPendingAfterSeconds' | 'maxTimeoutSeconds'>): number {
  const seconds =
    config.auditPendingAfterSeconds ??
    Math.ceil(localFunctionTimeoutMs(config) / 1000) + PENDING_MARGIN_SECONDS;
  return seconds * 1000;
}
