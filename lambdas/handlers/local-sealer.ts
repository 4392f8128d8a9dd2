/**
 * @module handlers/local-sealer
 * The sealer in the `npm start` process (docs/guide/audit.md, "Locally"): on a timer, it seals
 * every closed window of the process's audit (the embedded ring, or the audit table on DynamoDB
 * Local) into `AUDIT_DIR`, signed with the local key, so a local proxy's audit outlives the process
 * and `npm run audit-log -- verify` checks it as it checks the bucket. One run at a time; a run
 * that reached its bound is followed at once by the next; a failure is logged, never thrown.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { runAuditSeal } from '../operator/audit-sealing.ts';
import type { AuditStore } from '../platform/audit/audit-store.ts';
import {
  localSealerParts,
  type SealerConfig,
  sealerSettings,
  sealsLocally,
} from '../platform/audit/sealer-parts.ts';

/**
 * How often the timer looks for a closed window (a run without one reads nothing but the head):
 * every 30 s, or a quarter of a window when windows are shorter than 2 minutes.
 */
export function localSealTickMs(minutes: number): number {
  return Math.min(30_000, minutes * 15_000);
}

/** Starts the local sealer; `undefined` when this configuration does not seal. Returns its stop. */
export async function startLocalSealer(
  config: SealerConfig,
  ring: AuditStore | undefined,
  deps: { readonly logger: Logger; readonly metrics: Metrics; readonly tickMs?: number },
): Promise<(() => Promise<void>) | undefined> {
  if (!sealsLocally(config)) return undefined;
  const parts = await localSealerParts(config, ring);
  if (parts === undefined) return undefined;
  const settings = sealerSettings(config, false);
  let running: Promise<void> | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    if (running !== undefined || stopped) return;
    running = runAuditSeal({
      parts,
      settings,
      metrics: deps.metrics,
      logger: deps.logger,
      quietWhenIdle: true,
    })
      .then((run) => {
        if (run.stopped === 'bound' && !stopped) setImmediate(tick);
      })
      .catch(() => undefined) // logged by runAuditSeal
      .finally(() => {
        running = undefined;
      });
  };
  timer = setInterval(tick, deps.tickMs ?? localSealTickMs(config.auditSealMinutes));
  timer.unref();
  tick();
  return async () => {
    stopped = true;
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
    await running;
  };
}
