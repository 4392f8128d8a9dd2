/**
 * @module handlers/audit-sealer
 * The `audit-sealer` function (docs/guide/audit.md, "Sealed"): no route reaches it; two schedules
 * of the stack invoke it with their constant events (platform/scheduled-jobs.ts), `audit-seal`
 * every `AUDIT_SEAL_MINUTES` and `audit-verify` once a day. Reserved concurrency 1: one run at a
 * time (and the seal head's condition keeps a second delivery of a schedule from forking the
 * chain). Any other event is refused (thrown), never run.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { runAuditSeal, runAuditVerify } from '../operator/audit-sealing.ts';
import type { SealerParts, SealerSettings } from '../platform/audit/seal-windows.ts';
import { sealerSettings } from '../platform/audit/sealer-parts.ts';
import { awsSealerParts } from '../platform/audit/sealer-parts-aws.ts';
import { getConfig } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import { createMetrics } from '../platform/metrics/powertools.ts';
import { auditJobOf } from '../platform/scheduled-jobs.ts';

interface SealerRuntime {
  readonly parts: SealerParts;
  readonly settings: SealerSettings;
  readonly logger: Logger;
  readonly metrics: Metrics;
}

let runtime: SealerRuntime | undefined;

/** The function's parts, made on its first invocation (tests pass their own). */
export function sealerRuntime(): SealerRuntime {
  if (runtime === undefined) {
    const config = getConfig();
    runtime = {
      parts: awsSealerParts(config),
      settings: sealerSettings(config, true),
      logger: createLogger(config),
      metrics: createMetrics(config),
    };
  }
  return runtime;
}

/** Runs the job `event` names with `deps`; the metrics are published before it returns. */
export async function runAuditJob(event: unknown, deps: SealerRuntime, context?: Context) {
  const job = auditJobOf(event);
  if (job === undefined) throw new Error('audit-sealer: not an audit job event');
  deps.logger.removeKeys(['correlation_id']);
  if (context !== undefined) deps.logger.addContext(context);
  try {
    if (job === 'audit-seal') {
      const run = await runAuditSeal(deps);
      return { job, sealed: run.sealed, lag_minutes: run.lagMinutes ?? null, stopped: run.stopped };
    }
    const report = await runAuditVerify(deps);
    return { job, windows: report.windows, records: report.records, problems: report.problems.length };
  } finally {
    deps.metrics.publishStoredMetrics();
  }
}

export const handler = async (event: unknown, context: Context) =>
  runAuditJob(event, sealerRuntime(), context);
