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
