/**
 * @module middleware/license-check
 * Refuses execute and version calls while the license is not valid (README, Operators; docs/operators-license.md): HTTP 403,
 * `error.code` 0, and a message that says why. The aux endpoints do not use it, so
 * `GET /_/license` keeps answering and operators can see what is wrong.
 */
import { LicenseError } from '../platform/errors.ts';
import type { LicenseSource, LicenseStatus } from '../platform/secrets.ts';
import type { Authenticated } from './api-key-auth.ts';
import { type Step, step } from './step.ts';

/** The client-facing message for an invalid license. */
export function licenseErrorMessage(reason: string | undefined): string {
  return `License invalid: ${reason ?? 'unknown reason'}. Operators: see GET /_/license.`;
}

/** What the step returns: the license was valid when the call came. */
export interface Licensed {
  readonly licensed: true;
}

/**
 * The license check as a step: throws a `LicenseError` when the license is not valid. A failure
 * to read the license (the secret cannot be fetched) propagates as it is and becomes an internal
 * error, because it says nothing about the license itself. It needs an authenticated caller: the
 * chain builder adds it after `apiKeyAuth` (a caller without a key learns nothing of the license).
 *
 * @example
 * bodyChain(...).step(licenseCheck(createLicenseSource(config)))
 */
export function licenseCheck(
  source: LicenseSource,
  options: { readonly onStatus?: (status: LicenseStatus) => void } = {},
): Step<Authenticated, Licensed> {
  return step('licenseCheck', async () => {
    const license = await source.getLicense();
    options.onStatus?.(license);
    if (!license.is_valid) throw new LicenseError(licenseErrorMessage(license.reason));
    return { values: { licensed: true } };
  });
}
