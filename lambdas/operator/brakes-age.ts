/**
 * @module operator/brakes-age
 * The aux function's brakes report (platform/scheduled-jobs.ts, `BRAKES_AGE_EVENT`): reads the
 * brakes (strongly consistent) and records `OldestBrakeAge`, the minutes the oldest brake in force
 * has been set (0: none), which the `BrakeForgotten` alarm reads. Idle instances emit nothing: only
 * this schedule does. One log line names the brakes in force (ids, scope kinds, modes, ages).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { type Brake, brakesInForce, scopeKind } from '../platform/brakes/brakes.ts';
import type { BrakesStore } from '../platform/brakes/brakes-source.ts';
import { recordOldestBrakeAge } from '../platform/metrics/record.ts';
import { BRAKES_AGE_JOB } from '../platform/scheduled-jobs.ts';
import { withReadableStack } from '../platform/stack-trace.ts';

export interface BrakesAgeDeps {
  readonly brakesStore: BrakesStore | undefined;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly now?: () => number;
}

export interface BrakesAgeResult {
  readonly job: typeof BRAKES_AGE_JOB;
  readonly brakes_in_force: number;
  /** Whole minutes; 0 when none is in force. */
  readonly oldest_brake_minutes: number;
}

/** Reads the brakes and records the oldest one's age; a store that cannot be read fails the run (AuxErrors). */
export async function runBrakesAge(deps: BrakesAgeDeps): Promise<BrakesAgeResult> {
  const { logger } = deps;
  logger.removeKeys(['correlation_id']);
  const now = (deps.now ?? Date.now)();
  let inForce: readonly Brake[] = [];
  if (deps.brakesStore !== undefined) {
    try {
      inForce = brakesInForce((await deps.brakesStore.read()).brakes, now);
    } catch (error) {
      logger.error('scheduled brakes report', { job: BRAKES_AGE_JOB, error: withReadableStack(error) });
      throw error;
    }
  }
  const oldest = inForce.reduce((min, brake) => Math.min(min, Date.parse(brake.set_at)), now);
  const result: BrakesAgeResult = {
    job: BRAKES_AGE_JOB,
    brakes_in_force: inForce.length,
    oldest_brake_minutes: Math.max(0, Math.floor((now - oldest) / 60_000)),
  };
  recordOldestBrakeAge(deps.metrics, result.oldest_brake_minutes);
  const brakes = inForce.map((brake) => ({
    id: brake.id,
    scope: scopeKind(brake.scope),
    mode: brake.mode,
    set_at: brake.set_at,
  }));
  if (inForce.length === 0) logger.info('scheduled brakes report', { ...result });
  else logger.warn('scheduled brakes report', { ...result, brakes });
  return result;
}
