/**
 * @module operator/scheduled-license-check
 * The aux function's hourly license check (an EventBridge rule sends `LICENSE_CHECK_EVENT`,
 * platform/scheduled-jobs.ts): reads the license as `GET /_/license` does and records
 * `LicenseDaysLeft` with the name, namespace and dimensions the `LicenseExpiring` alarm reads, so
 * the alarm works on a proxy that gets no calls. It is not a request: no API Gateway event, no
 * middleware chain, no key check and no request log line, only one line saying it ran.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { licenseDaysLeftValue, recordLicenseDaysLeft } from '../platform/metrics/record.ts';
import { LICENSE_CHECK_JOB } from '../platform/scheduled-jobs.ts';
import type { LicenseSource, LicenseStatus } from '../platform/secrets.ts';
import { withReadableStack } from '../platform/stack-trace.ts';

/** What the license check reads and writes. */
export interface LicenseCheckDeps {
  readonly license: LicenseSource;
  readonly metrics: Metrics;
  readonly logger: Logger;
}

/** What the check found, as its log line says it (and the invocation's result). */
export interface LicenseCheckResult {
  readonly job: typeof LICENSE_CHECK_JOB;
  readonly is_valid: boolean;
  /** The value recorded as `LicenseDaysLeft` (see `licenseDaysLeftValue`). */
  readonly license_days_left: number;
}

/** The `message` of the check's log line. */
export const LICENSE_CHECK_LOG_MESSAGE = 'scheduled license check';

/**
 * Runs the license check: one `LicenseDaysLeft` record (0 for a license that serves no call, see
 * `licenseDaysLeftValue`) and one log line, INFO for a valid license, WARN otherwise (with the
 * reason `GET /_/license` gives), never the license text or a key. A license secret that cannot be
 * read records nothing: the check logs an ERROR and throws, so the invocation fails and the
 * `AuxErrors` alarm fires.
 *
 * @example
 * await runScheduledLicenseCheck({ license: runtime.license, metrics: runtime.metrics, logger: runtime.logger }, context);
 */
export async function runScheduledLicenseCheck(
  deps: LicenseCheckDeps,
  context?: Context,
): Promise<LicenseCheckResult> {
  const { logger } = deps;
  // Not a request: no correlation id, in particular not the one of the last request this
  // execution environment served.
  logger.removeKeys(['correlation_id']);
  if (context !== undefined) logger.addContext(context);
  let status: LicenseStatus;
  try {
    status = await deps.license.getLicense();
  } catch (error) {
    logger.error(LICENSE_CHECK_LOG_MESSAGE, { job: LICENSE_CHECK_JOB, error: withReadableStack(error) });
    throw error;
  }
  const result: LicenseCheckResult = {
    job: LICENSE_CHECK_JOB,
    is_valid: status.is_valid,
    license_days_left: licenseDaysLeftValue(status),
  };
  recordLicenseDaysLeft(deps.metrics, result.license_days_left);
  const fields = { ...result, valid_until: status.valid_until || null, reason: status.reason ?? null };
  if (status.is_valid) logger.info(LICENSE_CHECK_LOG_MESSAGE, fields);
  else logger.warn(LICENSE_CHECK_LOG_MESSAGE, fields);
  return result;
}
