/**
 * @module operator/audit-sealing
 * The sealer's two jobs (docs/guide/audit.md, "Sealed"), as the `audit-sealer` function runs them
 * from its schedules and a local run from its timer: `audit-seal` seals every closed window
 * (platform/audit/seal-windows.ts) and records `AuditWindowsSealed` and `AuditSealLag`;
 * `audit-verify` verifies the last day's windows (platform/audit/audit-verify.ts) with the
 * signer's own public key and records `AuditVerifyFailures`. Each logs one line saying what it
 * did; neither is a request.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { keyIdOf } from '../platform/audit/audit-chain.ts';
import { type ArchiveReport, describeFinding, verifyArchive } from '../platform/audit/audit-verify.ts';
import { publicKeyKey, SEAL_PREFIXES, sealDelayMs } from '../platform/audit/seal-layout.ts';
import {
  type SealerParts,
  type SealerSettings,
  type SealRun,
  sealClosedWindows,
} from '../platform/audit/seal-windows.ts';
import { recordAuditSealing } from '../platform/metrics/record.ts';
import { AUDIT_SEAL_JOB, AUDIT_VERIFY_HOURS, AUDIT_VERIFY_JOB } from '../platform/scheduled-jobs.ts';
import { withReadableStack } from '../platform/stack-trace.ts';

export interface AuditJobDeps {
  readonly parts: SealerParts;
  readonly settings: SealerSettings;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** Logs a run that sealed nothing not at all (the local timer's, every 30 s). */
  readonly quietWhenIdle?: boolean;
}

/** The message of the sealer's log lines. */
export const AUDIT_SEAL_LOG_MESSAGE = 'audit sealing';
export const AUDIT_VERIFY_LOG_MESSAGE = 'audit verification';

/** Seals every closed window; a failure is logged (ERROR) and thrown, so the function's error alarm fires. */
export async function runAuditSeal(deps: AuditJobDeps): Promise<SealRun> {
  try {
    const run = await sealClosedWindows(deps.parts, deps.settings);
    recordAuditSealing(deps.metrics, {
      sealed: run.sealed,
      ...(run.lagMinutes === undefined ? {} : { lagMinutes: run.lagMinutes }),
    });
    if (run.sealed === 0 && deps.quietWhenIdle === true) return run;
    deps.logger.info(AUDIT_SEAL_LOG_MESSAGE, {
      job: AUDIT_SEAL_JOB,
      sealed: run.sealed,
      sealed_to: run.head === undefined ? null : new Date(run.head.end).toISOString(),
      lag_minutes: run.lagMinutes ?? null,
      stopped: run.stopped,
    });
    return run;
  } catch (error) {
    recordAuditSealing(deps.metrics, { sealed: 0 });
    deps.logger.error(AUDIT_SEAL_LOG_MESSAGE, { job: AUDIT_SEAL_JOB, error: withReadableStack(error) });
    throw error;
  }
}

/** A late window: sealed more than two windows after it could first be. */
export function lateAfterMs(settings: Pick<SealerSettings, 'minutes' | 'pendingAfterMs'>): number {
  return sealDelayMs(settings.pendingAfterMs) + 2 * settings.minutes * 60_000;
}

/**
 * The public key stays locked as long as the newest seals that name it: once a day its lock is
 * moved to `AUDIT_LOCK_DAYS` from now (never shortened; locked once, it would end first).
 */
async function extendKeyLock(
  parts: SealerParts,
  settings: SealerSettings,
  key: string,
  now: number,
): Promise<void> {
  if (settings.lockDays === undefined || parts.archive.extendLock === undefined) return;
  const until = now + settings.lockDays * 86_400_000;
  const held = (await parts.archive.list(SEAL_PREFIXES.keys)).find((object) => object.key === key);
  if (held === undefined || held.deleted) return;
  if (held.lock !== undefined && Date.parse(held.lock.until) >= until) return;
  await parts.archive.extendLock(key, new Date(until));
}

/**
 * Verifies the windows of the last {@link AUDIT_VERIFY_HOURS} hours with the signer's public key
 * (and the archive's copy of it, which must be the same): records `AuditVerifyFailures`, logs
 * every finding (WARN when there are problems).
 */
export async function runAuditVerify(deps: AuditJobDeps): Promise<ArchiveReport> {
  const { parts, settings } = deps;
  const now = parts.now();
  const to = now - sealDelayMs(settings.pendingAfterMs);
  const from = to - AUDIT_VERIFY_HOURS * 3_600_000;
  try {
    const publicKey = await parts.signer.publicKey();
    const report = await verifyArchive(parts.archive, {
      from: Math.floor(from / 60_000) * 60_000,
      to,
      publicKey,
      lateAfterMs: lateAfterMs(settings),
      sealedUntil: now - lateAfterMs(settings),
      // The table too: a record edited, deleted or added after its window was sealed.
      table: { source: parts.source, retentionDays: settings.retentionDays ?? Number.POSITIVE_INFINITY, now },
    });
    const keyObject = publicKeyKey(keyIdOf(publicKey));
    const published = await parts.archive.read(keyObject);
    await extendKeyLock(parts, settings, keyObject, now);
    const expected = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const keyProblem =
      published?.toString('utf8') === expected
        ? []
        : ['the archive has no copy of the signing key, or another one'];
    const failures = report.problems.length + keyProblem.length;
    recordAuditSealing(deps.metrics, { verifyFailures: failures });
    const fields = {
      job: AUDIT_VERIFY_JOB,
      from: report.from,
      to: report.to,
      windows: report.windows,
      records: report.records,
      failures,
      findings: [...keyProblem, ...[...report.problems, ...report.notices].map(describeFinding)].slice(0, 50),
    };
    if (failures === 0) deps.logger.info(AUDIT_VERIFY_LOG_MESSAGE, fields);
    else deps.logger.warn(AUDIT_VERIFY_LOG_MESSAGE, fields);
    return report;
  } catch (error) {
    recordAuditSealing(deps.metrics, { verifyFailures: 1 });
    deps.logger.error(AUDIT_VERIFY_LOG_MESSAGE, { job: AUDIT_VERIFY_JOB, error: withReadableStack(error) });
    throw error;
  }
}
