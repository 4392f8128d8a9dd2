/**
 * @module core/brakes-addresses
 * The resolver an `erp` brake of an IP address uses (core/brakes-check.ts): a host name's addresses,
 * through the target policy's connect-time lookup. Apart from brakes-check.ts, so the aux function,
 * whose key check reads the brakes but which calls no ERP, bundles no upstream code.
 */
import { addressHost } from '../platform/limits.ts';
import { type PolicyLookup, resolveTarget } from '../upstream/target-policy.ts';
import type { ErpAddresses } from './brakes-check.ts';

/** How long the brakes wait for a host name's addresses: a DNS failure binds by name only. */
const BRAKES_LOOKUP_TIMEOUT_MS = 2_000;

/** {@link ErpAddresses} over the target policy's connect-time lookup; `undefined` without one (tests). */
export function erpAddresses(lookup: PolicyLookup | undefined): ErpAddresses | undefined {
  if (lookup === undefined) return undefined;
  return async (hostname) => {
    const answer = await resolveTarget(lookup, hostname, BRAKES_LOOKUP_TIMEOUT_MS);
    if ('failure' in answer) return [];
    return answer.addresses.flatMap((entry) => addressHost(entry.address) ?? []);
  };
}
