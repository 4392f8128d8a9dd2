/**
 * @module local/banner
 * Lines of the `npm start` banner (bin/serve.ts) that say how this run keeps its state, whether
 * limits are on, whether writes are audited and which brakes are in force: what a person trying the proxy cannot see from outside. Built from the
 * configuration only, and never with a secret: a DynamoDB endpoint is shown without user info,
 * keys by their names.
 */

import { EMBEDDED_AUDIT_RECORDS } from '../platform/audit/audit-store-embedded.ts';
import type { SealerConfig } from '../platform/audit/sealer-parts.ts';
import { type Brake, brakesInForce, shownText } from '../platform/brakes/brakes.ts';
import type { BrakesStore } from '../platform/brakes/brakes-source.ts';
import type { Config } from '../platform/config.ts';
import { storeLocation } from '../platform/state/store-location.ts';

/** The state store in use: embedded in this process, or a DynamoDB table at its endpoint. */
export function stateStoreLine(config: Pick<Config, 'runtime' | 'stateTable' | 'dynamodbEndpoint'>): string {
  const location = storeLocation(config);
  if (location.kind === 'dynamodb') {
    return `State store: DynamoDB table ${location.table} at ${shownEndpoint(location.endpoint)}`;
  }
  if (location.kind === 'none') return 'State store: none';
  return (
    'State store: embedded in this process (idempotency records and limit counters, lost on restart; ' +
    'STATE_TABLE with AWS_ENDPOINT_URL_DYNAMODB for DynamoDB)'
  );
}

/**
 * Whether the audit is on, and where its records go (docs/guide/audit.md): the audit table at its
 * endpoint, or the embedded ring; `off` says no call is recorded.
 */
export function auditLine(config: Pick<Config, 'audit' | 'auditTable' | 'dynamodbEndpoint'>): string {
  if (config.audit === 'off') return 'Audit: off (AUDIT=off): no write is recorded';
  const mode =
    config.audit === 'on' ? 'on (a write whose record cannot be written is refused)' : 'best-effort';
  if (config.auditTable !== undefined && config.dynamodbEndpoint !== undefined) {
    return `Audit: ${mode}; records in DynamoDB table ${config.auditTable} at ${shownEndpoint(config.dynamodbEndpoint)}`;
  }
  return `Audit: ${mode}; records in an embedded ring of the last ${EMBEDDED_AUDIT_RECORDS.toLocaleString('en-US')} (the oldest dropped, never refused for room; lost on restart; AUDIT_TABLE with AWS_ENDPOINT_URL_DYNAMODB for DynamoDB)`;
}

/** An endpoint as shown: without user info (a password never reaches the terminal). */
function shownEndpoint(endpoint: string | undefined): string {
  if (endpoint === undefined) return "the region's endpoint";
  try {
    const url = new URL(endpoint);
    url.username = '';
    url.password = '';
    return url.href.replace(/\/$/, '');
  } catch {
    return 'AWS_ENDPOINT_URL_DYNAMODB';
  }
}

/**
 * Whether limits are on, and which: the keys whose policy sets `limits` (by name), the keys'
 * secret and the OAuth identity map (read later, per call), and the ERPs of `ERP_TARGET_LIMITS`.
 */
export function limitsLine(config: Pick<Config, 'localKeys' | 'proxyKeysSecretId' | 'targetLimits'>): string {
  const limitedKeys = config.localKeys.filter((key) => (key.policy?.limits?.length ?? 0) > 0);
  const parts = [
    ...(limitedKeys.length > 0 ? [`key policies of ${limitedKeys.map((key) => key.name).join(', ')}`] : []),
    ...(config.proxyKeysSecretId === undefined
      ? []
      : ["the key policies of the keys' secret, if they set any"]),
    ...(config.targetLimits.size > 0
      ? [`ERP_TARGET_LIMITS for ${[...config.targetLimits.keys()].join(', ')}`]
      : []),
  ];
  return parts.length > 0
    ? `Limits: on: ${parts.join('; ')}`
    : 'Limits: off (no key policy sets limits, ERP_TARGET_LIMITS is not set)';
}

/** The banner's line on sealing the audit (docs/guide/audit.md, "Locally"). */
export function sealLine(config: SealerConfig, sealing: boolean): string {
  if (!sealing) {
    return config.auditSealing === 'off'
      ? 'Audit sealing: off (AUDIT_SEALING=off)'
      : 'Audit sealing: off (no audit store)';
  }
  return `Audit sealing: every ${config.auditSealMinutes} min into ${config.auditDir}, signed with ${config.auditSealKeyFile} (check: npm run audit-log -- verify)`;
}

/**
 * The banner's line on the operators' brakes (docs/operators.md, "Stop an agent now"): each
 * brake in force with its id, scope, mode and reason, or none; `undefined`: no store.
 */
export async function brakesLine(store: BrakesStore | undefined, now: number = Date.now()): Promise<string> {
  if (store === undefined) return 'Brakes: no state store';
  let brakes: readonly Brake[];
  try {
    brakes = brakesInForce((await store.read()).brakes, now);
  } catch (error) {
    return `Brakes: could not be read (${error instanceof Error ? error.message : String(error)})`;
  }
  if (brakes.length === 0) return 'Brakes: none in force (npm run brakes -- set ... stops writes or calls)';
  const shown = brakes.map(
    (brake) =>
      `  ${shownText(`${brake.id}: ${brake.mode === 'all' ? 'every call' : 'writes'} of ${scopeText(brake)}, by ${brake.set_by} since ${brake.set_at}${brake.expires === undefined ? '' : ` until ${brake.expires}`}: ${brake.reason}`)}`,
  );
  return [`Brakes: ${brakes.length} in force (npm run brakes -- release <id>):`, ...shown].join('\n');
}

function scopeText(brake: Brake): string {
  const { scope } = brake;
  if (scope === 'all') return 'every caller';
  if ('key' in scope) return `key ${scope.key}`;
  if ('identity' in scope) return `identity ${scope.identity}`;
  return `ERP ${scope.erp}`;
}
