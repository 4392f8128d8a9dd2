/**
 * @module handlers/runtime-state
 * What the functions that keep state add to their runtime (execute-v1, execute-v2, mcp: docs/design.md,
 * "The proxy's state: the store"): the state store, the idempotency records' dependencies, the
 * limits' and the audit's writer. Apart from runtime-base.ts, so the version and aux functions,
 * which keep no state and write no audit record, bundle none of it.
 */
import { type AuditDeps, auditDeps } from '../core/audit/audit-call.ts';
import type { ForwardDeps } from '../core/forward.ts';
import type { IdempotencyDeps } from '../core/idempotency.ts';
import { erpLookupFor, type LimitsDeps } from '../core/limits-check.ts';
import { createAuditWriter } from '../platform/audit/audit-store-choice.ts';
import { createDigestKeySource } from '../platform/audit/digest-key.ts';
import type { Config } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import type { StateStore } from '../platform/state/state-store.ts';
import { createStateStore } from '../platform/state/state-store-choice.ts';
import { createPolicyLookup } from '../upstream/target-policy.ts';
import type { RuntimeOverrides } from './runtime-base.ts';

/** What the functions that keep state add (execute-v1, execute-v2, mcp: docs/design.md, "The proxy's state: the store"). */
export interface StateRuntime {
  /** The idempotency records' and limits' store; `undefined`: none configured (deployed without a table). */
  readonly store: StateStore | undefined;
  /** The store and `IDEMPOTENCY_TTL`: what `Idempotency-Key` needs (core/idempotency.ts). */
  readonly idempotency: IdempotencyDeps;
  /** The audit of the calls that can write (core/audit/audit-call.ts). */
  readonly audit: AuditDeps;
}

/**
 * The audit's part (the functions that write): `AUDIT`, its writer (the overrides' store or the
 * configuration's) and digest key. With `AUDIT=off`, said once at start, so the log shows when
 * nothing was recorded.
 */
export function createAuditDeps(config: Config, overrides: RuntimeOverrides = {}): AuditDeps {
  if (config.audit === 'off') {
    createLogger(config).warn(
      'audit off: AUDIT=off, no call that can write is recorded (docs/guide/audit.md)',
    );
  }
  return auditDeps({
    mode: config.audit,
    store: overrides.auditStore ?? createAuditWriter(config),
    digestKey: createDigestKeySource(config),
    retentionDays: config.auditRetentionDays,
  });
}

/**
 * What the limits need of a function's runtime (README, "Limits"): its store and
 * `ERP_TARGET_LIMITS`, and, only when an entry names an IP address, the lookup of an ERP's host
 * name through the target policy (the HTTP client's own). Built once per handler.
 */
export function limitsDeps(
  runtime: StateRuntime & {
    readonly config: Config;
    readonly forward: Pick<ForwardDeps, 'policy' | 'lookup'>;
  },
): LimitsDeps {
  const { config, forward } = runtime;
  const lookup = erpLookupFor(
    config.targetLimits,
    forward.lookup ?? createPolicyLookup(forward.policy),
    config,
  );
  return {
    store: runtime.store,
    targetLimits: config.targetLimits,
    ...(lookup === undefined ? {} : { lookup }),
  };
}

/** The state part: the overrides' store, or the configuration's (built on its first use). */
export function createStateRuntime(config: Config, overrides: RuntimeOverrides = {}): StateRuntime {
  const store = overrides.store ?? createStateStore(config);
  return {
    store,
    idempotency: { store, ttlSeconds: config.idempotencyTtlSeconds },
    audit: createAuditDeps(config, overrides),
  };
}
