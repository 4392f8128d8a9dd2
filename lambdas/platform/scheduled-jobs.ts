/**
 * @module platform/scheduled-jobs
 * The one invocation the aux function gets from a schedule instead of API Gateway: the hourly
 * license check, which records `LicenseDaysLeft` whether or not calls come (docs/deployment.md,
 * step 9). The CDK stack (`lib/`) sends {@link LICENSE_CHECK_EVENT} from an EventBridge rule
 * every {@link LICENSE_CHECK_INTERVAL_HOURS} hour; the handler recognizes it with
 * {@link isLicenseCheckEvent}, so the two cannot drift apart.
 *
 * The event is a constant of the stack's own, never a request: API Gateway invokes the function
 * with its payload 2.0 event (`version`, `routeKey`, `rawPath`, `headers`, `requestContext`...),
 * in which a caller chooses values but no top-level key, so no HTTP request can take this shape,
 * and this event has none of those keys.
 */

/** The field that names a scheduled job in its event. */
export const SCHEDULED_JOB_FIELD = 'erp_proxy_job';

/** The name of the license check job. */
export const LICENSE_CHECK_JOB = 'license-days-left';

/** The whole event of the license check, exactly as the schedule sends it. */
export const LICENSE_CHECK_EVENT: Readonly<Record<typeof SCHEDULED_JOB_FIELD, typeof LICENSE_CHECK_JOB>> =
  Object.freeze({ [SCHEDULED_JOB_FIELD]: LICENSE_CHECK_JOB });

/** How often the schedule runs the license check: the period of the `LicenseExpiring` alarm. */
export const LICENSE_CHECK_INTERVAL_HOURS = 1;

/**
 * Whether an invocation event is the license check: a plain object with exactly
 * {@link SCHEDULED_JOB_FIELD} set to {@link LICENSE_CHECK_JOB}, and nothing else.
 *
 * @example
 * isLicenseCheckEvent({ erp_proxy_job: 'license-days-left' }) // true
 * isLicenseCheckEvent({ erp_proxy_job: 'license-days-left', version: '2.0' }) // false
 */
export function isLicenseCheckEvent(event: unknown): boolean {
  return isJobEvent(event, LICENSE_CHECK_JOB);
}

/** Whether `event` is exactly `{ erp_proxy_job: job }`. */
function isJobEvent(event: unknown, job: string): boolean {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) return false;
  const keys = Object.keys(event);
  return (
    keys.length === 1 &&
    keys[0] === SCHEDULED_JOB_FIELD &&
    (event as Record<string, unknown>)[SCHEDULED_JOB_FIELD] === job
  );
}

/**
 * The aux function's brakes report (docs/operators.md, "Stop an agent now"): every
 * {@link BRAKES_AGE_INTERVAL_MINUTES} minutes it reads the brakes and records `OldestBrakeAge`, so
 * the `BrakeForgotten` alarm sees a brake left in force, whether or not calls come.
 */
export const BRAKES_AGE_JOB = 'brakes-age';
export const BRAKES_AGE_EVENT: Readonly<Record<typeof SCHEDULED_JOB_FIELD, typeof BRAKES_AGE_JOB>> =
  Object.freeze({ [SCHEDULED_JOB_FIELD]: BRAKES_AGE_JOB });
export const BRAKES_AGE_INTERVAL_MINUTES = 5;

/** Whether an invocation event is the brakes report. */
export function isBrakesAgeEvent(event: unknown): boolean {
  return isJobEvent(event, BRAKES_AGE_JOB);
}

/**
 * The audit sealer's two jobs (docs/guide/audit.md, "Sealed"), each a constant event of the stack's
 * own schedules, sent to the sealer function (no route reaches it): `audit-seal` every
 * `AUDIT_SEAL_MINUTES` seals every closed window, `audit-verify` once a day verifies the last day's.
 */
export const AUDIT_SEAL_JOB = 'audit-seal';
export const AUDIT_VERIFY_JOB = 'audit-verify';
export type AuditJob = typeof AUDIT_SEAL_JOB | typeof AUDIT_VERIFY_JOB;
export const AUDIT_SEAL_EVENT: Readonly<Record<typeof SCHEDULED_JOB_FIELD, AuditJob>> = Object.freeze({
  [SCHEDULED_JOB_FIELD]: AUDIT_SEAL_JOB,
});
export const AUDIT_VERIFY_EVENT: Readonly<Record<typeof SCHEDULED_JOB_FIELD, AuditJob>> = Object.freeze({
  [SCHEDULED_JOB_FIELD]: AUDIT_VERIFY_JOB,
});
/** How far back the daily verification reads: the last day's windows. */
export const AUDIT_VERIFY_HOURS = 24;

/** The audit job an event names (exactly one field, one of the two jobs), or `undefined`. */
export function auditJobOf(event: unknown): AuditJob | undefined {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) return undefined;
  const keys = Object.keys(event);
  const job = (event as Record<string, unknown>)[SCHEDULED_JOB_FIELD];
  return keys.length === 1 && (job === AUDIT_SEAL_JOB || job === AUDIT_VERIFY_JOB) ? job : undefined;
}
