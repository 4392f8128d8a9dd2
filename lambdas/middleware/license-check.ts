/**
 * @module middleware/license-check
 * Refuses execute and version calls while the license is not valid (README, Operators; docs/operators-license.md): HTTP 403,
 * `error.code` 0, and a message that says why. The aux endpoints do not use it, so
 * `GET /_/license` keeps answering and operators can see what is wrong.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import type { ProxyContext } from '../core/request-state.ts';
import { LicenseError } from '../platform/errors.ts';
import type { LicenseSource, LicenseStatus } from '../platform/secrets.ts';

/** The client-facing message for an invalid license. */
export function licenseErrorMessage(reason: string | undefined): string {
  return `License invalid: ${reason ?? 'unknown reason'}. Operators: see GET /_/license.`;
}

/**
 * Middy middleware: throws a `LicenseError` from `before` when the license is not valid.
 * A failure to read the license (the secret cannot be fetched) propagates as it is and becomes
 * an internal error, because it says nothing about the license itself.
 *
 * @example
 * middy(handler).use(envelope()).use(licenseCheck(createLicenseSource(config)))
 */
export function licenseCheck(
  source: LicenseSource,
  options: { readonly onStatus?: (status: LicenseStatus) => void } = {},
): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyResultV2, Error, ProxyContext> {
  return {
    before: async function licenseCheckBefore() {
      const license = await source.getLicense();
      options.onStatus?.(license);
      if (!license.is_valid) throw new LicenseError(licenseErrorMessage(license.reason));
    },
  };
}
