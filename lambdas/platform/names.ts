/**
 * @module platform/names
 * The names that cross module boundaries, each defined once: the service name, the metric
 * namespace, the APIs, the Lambda functions, the request outcomes and the operator endpoints
 * `AUX_PUBLIC` may open. The runtime, the CDK stack (`lib/`) and the operator endpoints all
 * read them from here, so a rename is one edit. Metric names, units and dimensions are in
 * `metrics/catalogue.ts`; error codes in `error-table.ts`.
 */

/**
 * The service name: the default of `POWERTOOLS_SERVICE_NAME` (so the `service` field of every
 * log line and the `service` dimension of every metric), the stack's `service` tag and the
 * `name` of `GET /_/about`.
 */
export const SERVICE_NAME = 'erp-proxy';

/** The CloudWatch namespace of the service metrics (default of `POWERTOOLS_METRICS_NAMESPACE`). */
export const METRICS_NAMESPACE = 'ErpProxy';

/**
 * The APIs a request is counted under: the `api` field of the log line and metric dimension.
 * `mcp` is `POST /mcp`, the agents' endpoint (README, "Agents (MCP)").
 */
export const API_NAMES = Object.freeze(['v1', 'v2', 'version', 'aux', 'mcp'] as const);
export type ApiName = (typeof API_NAMES)[number];

/** How a request ended: the `outcome` field of the log line and metric dimension. */
export const OUTCOMES = Object.freeze(['success', 'erp_error', 'proxy_error'] as const);
export type Outcome = (typeof OUTCOMES)[number];

/**
 * The Lambda functions of the service (the local server emulates the same ones): the four of the
 * specification's routes, and `mcp` for `POST /mcp`.
 */
export const FUNCTION_NAMES = Object.freeze(['execute-v1', 'execute-v2', 'version', 'aux', 'mcp'] as const);
export type FunctionName = (typeof FUNCTION_NAMES)[number];

/**
 * The functions no route reaches, run by a schedule: the audit's sealer (docs/guide/audit.md,
 * "Sealed"), which seals the audit's closed windows and, once a day, verifies the last day's.
 */
export const SCHEDULED_FUNCTION_NAMES = Object.freeze(['audit-sealer'] as const);
export type ScheduledFunctionName = (typeof SCHEDULED_FUNCTION_NAMES)[number];
/** Every function a setting can be read by: the route functions, then the scheduled ones. */
export const SETTING_READERS = Object.freeze([...FUNCTION_NAMES, ...SCHEDULED_FUNCTION_NAMES] as const);
export type SettingReader = FunctionName | ScheduledFunctionName;

/**
 * `AUDIT_SEALING`: how sealed audit windows are kept (docs/guide/audit.md, "Sealed"): S3 Object
 * Lock in `compliance` mode (no one can delete them before their retention ends), `governance`
 * (a role with `s3:BypassGovernanceRetention` can, so a trial can be torn down), or `off` (no
 * sealer, no bucket, no signing key).
 */
export const AUDIT_SEALING_MODES = Object.freeze(['compliance', 'governance', 'off'] as const);
export type AuditSealingMode = (typeof AUDIT_SEALING_MODES)[number];

/**
 * The operator endpoints `AUX_PUBLIC` may make public (`/_/license`, `/_/metrics`); every
 * other aux route is either always public (`/_/about`) or always keyed.
 */
export const AUX_PUBLIC_NAMES = Object.freeze(['license', 'metrics'] as const);
export type AuxPublicName = (typeof AUX_PUBLIC_NAMES)[number];

/** Whether `name` is one of `AUX_PUBLIC_NAMES`. */
export function isAuxPublicName(name: string): name is AuxPublicName {
  return (AUX_PUBLIC_NAMES as readonly string[]).includes(name);
}

/** `AUDIT`: the audit of every call that can write (docs/guide/audit.md). */
export const AUDIT_MODES = Object.freeze(['on', 'best-effort', 'off'] as const);
export type AuditMode = (typeof AUDIT_MODES)[number];

/**
 * The ERP protocols a call can travel over: the `upstream_protocol` field of the request log and
 * the `protocol` dimension of `UpstreamCalls`.
 */
export const UPSTREAM_PROTOCOLS = Object.freeze(['jsonrpc', 'json2'] as const);
export type UpstreamProtocol = (typeof UPSTREAM_PROTOCOLS)[number];

/**
 * How v1 calls reach the ERP (`ERP_V1_TRANSPORT`, README "One envelope for every ERP version"):
 * `auto` (the default) over `/jsonrpc` except to ERP 22+, `json2` over JSON-2 to every ERP 19+,
 * `jsonrpc` never translated.
 */
export const V1_TRANSPORTS = Object.freeze(['auto', 'json2', 'jsonrpc'] as const);
export type V1TransportMode = (typeof V1_TRANSPORTS)[number];

/**
 * How v2 calls reach the ERP (`ERP_V2_TRANSPORT`): `json2` (the default, the spec's behaviour)
 * or `auto` (ERP 16-18 over `/jsonrpc` execute_kw when `user_id` is given).
 */
export const V2_TRANSPORTS = Object.freeze(['json2', 'auto'] as const);
export type V2TransportMode = (typeof V2_TRANSPORTS)[number];

/**
 * What an `Idempotency-Key` did to a call (the `idempotency` log field; README, "Retrying writes
 * safely"): `recorded` (ran, answer kept), `not_kept` (certainly no change: the key may run it
 * again), `kept_unknown` (may have run: kept as outcome unknown), `unrecorded` (ran, but its record
 * could not be written), `replayed`, `unknown_replayed` (answered "outcome unknown" from the
 * record), `in_progress` (-32010), `key_reused` (-32011), `store_unavailable` (-32004, nothing ran).
 */
export const IDEMPOTENCY_OUTCOMES = Object.freeze([
  'recorded',
  'not_kept',
  'kept_unknown',
  'unrecorded',
  'replayed',
  'unknown_replayed',
  'in_progress',
  'key_reused',
  'store_unavailable',
] as const);
export type IdempotencyOutcome = (typeof IDEMPOTENCY_OUTCOMES)[number];

/**
 * How a person's confirmation of an MCP write ended (the `confirmation` log field and the
 * `Confirmations` metric; docs/guide/confirmations.md): `asked` (a form sent), `accepted` (the call ran
 * on), `declined`, `cancelled`, `expired` (its state had expired: asked again), `invalid` (a state
 * that does not fit the call, a used one, a client that cannot be asked: nothing ran).
 */
export const CONFIRMATION_OUTCOMES = Object.freeze([
  'asked',
  'accepted',
  'declined',
  'cancelled',
  'expired',
  'invalid',
] as const);
export type ConfirmationOutcome = (typeof CONFIRMATION_OUTCOMES)[number];
