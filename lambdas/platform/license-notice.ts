/**
 * @module platform/license-notice
 * The warning a process gives about its license before any call is refused: the local server
 * prints it when it starts (bin/serve.ts), a deployed function logs it once per execution
 * environment, the first time it reads its license (the cold start's first call that needs it).
 * It says what `GET /_/license` says, never more: the licensee, the date, the days left and the
 * reason; never the document's signature or a key.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Config } from './config.ts';
import type { LicenseSource, LicenseStatus } from './secrets.ts';

/**
 * What to warn about: a license that is not valid (missing, malformed, expired, a bad signature),
 * or one that expires in fewer than `warningDays` days (as the `LicenseExpiring` alarm counts
 * them); `undefined` when there is nothing to say.
 *
 * @example
 * licenseWarning({ licensee: 'ACME', valid_until: '2026-12-01', is_valid: true, days_left: 5 }, 14)
 * // 'the license of ACME expires on 2026-12-01 (in 5 days); ...'
 */
export function licenseWarning(status: LicenseStatus, warningDays: number): string | undefined {
  if (!status.is_valid) {
    return (
      `the license is not valid (${status.reason ?? 'unknown reason'}): every execute and version ` +
      'call is refused (HTTP 403, code 0) until a valid one is in place; GET /_/license says the same'
    );
  }
  if (status.days_left === null || status.days_left >= warningDays) return undefined;
  const when =
    status.days_left === 0
      ? 'today is its last day'
      : `in ${status.days_left} day${status.days_left === 1 ? '' : 's'}`;
  return (
    `the license of ${status.licensee} expires on ${status.valid_until} (${when}); renew it before ` +
    'then: afterwards every execute and version call is refused (HTTP 403, code 0)'
  );
}

/** The fields of a license warning's log line: what `GET /_/license` shows, and the days left. */
export function licenseLogFields(status: LicenseStatus): Record<string, unknown> {
  const { licensee, valid_until, is_valid, reason, days_left } = status;
  return { license: { licensee, valid_until, is_valid, days_left, ...(reason ? { reason } : {}) } };
}

/**
 * `source`, which warns once (through `warn`) with the first license it reads, when there is
 * something to say. A read that fails (the secret cannot be fetched) says nothing about the
 * license itself and does not use up the warning.
 */
export function warnOnceAboutLicense(
  source: LicenseSource,
  warningDays: number,
  warn: (message: string, fields: Record<string, unknown>) => void,
): LicenseSource {
  let warned = false;
  return {
    async getLicense() {
      const status = await source.getLicense();
      if (!warned) {
        warned = true;
        const warning = licenseWarning(status, warningDays);
        if (warning !== undefined) warn(`license: ${warning}`, licenseLogFields(status));
      }
      return status;
    },
  };
}

/**
 * The license source a runtime uses: deployed, one that logs the warning once per execution
 * environment (a WARN line, `license` fields); locally `source` itself, since the local server
 * prints the warning when it starts (bin/serve.ts).
 */
export function withLicenseWarning(
  config: Pick<Config, 'runtime' | 'licenseWarningDays'>,
  logger: Pick<Logger, 'warn'>,
  source: LicenseSource,
): LicenseSource {
  if (config.runtime !== 'lambda') return source;
  return warnOnceAboutLicense(source, config.licenseWarningDays, (message, fields) =>
    logger.warn(message, fields),
  );
}
