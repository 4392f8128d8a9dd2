/**
 * @module platform/audit/audit-record
 * One audit record (docs/guide/audit.md, "What a record holds"): the documented, versioned JSON a
 * call that can write leaves in the audit table, whatever its end. This module is the schema's one
 * statement (`schema: 1`), with the names every other part reads: the outcomes, the store's item
 * layout (partition by UTC day and shard, sorted by `audit_id`), the ids (time-ordered, unique).
 *
 * A record holds who, where, what, why and how it ended: never a value written, a key, a token or a
 * secret (values and ERP keys appear only as HMACs under the audit's digest key).
 */
import { randomBytes } from 'node:crypto';

/** The record format's version: a reader checks it, a new field that changes a meaning raises it. */
export const AUDIT_SCHEMA_VERSION = 1;

/**
 * How a call ended, for its record (docs/guide/audit.md, "Outcomes"): `ok` (it ran), `erp_error`
 * (the ERP refused it), `refused` (a step of the gate said no), `asked` (an MCP asking round),
 * `not_run` (failed after every check, before the ERP), `ran` (ran, its answer not passed on:
 * -32009), `unknown` (may have run), `replayed` (a kept answer replayed).
 */
export const AUDIT_OUTCOMES = Object.freeze([
  'ok',
  'erp_error',
  'refused',
  'asked',
  'not_run',
  'ran',
  'unknown',
  'replayed',
] as const);
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/** A record's state: `pending` (written before the ERP, its end not yet known) or `done`. */
export type AuditState = 'pending' | 'done';

/** The routes a record comes from. */
export type AuditApi = 'v1' | 'v2' | 'mcp';

/** What an idempotency key did to the call (`first_run`: it ran under the key). */
export type AuditIdempotency =
  | 'first_run'
  | 'replay'
  | 'conflict'
  | 'in_progress'
  | 'unknown_replay'
  | 'store_unavailable';

/** Who made the call. Never a key, a token or a secret. */
export interface AuditActor {
  /** The proxy key's name (a key caller). */
  readonly key?: string;
  /** The person signed in with OAuth: the token's issuer and `sub`, and the identity-map entry. */
  readonly oauth?: {
    readonly issuer: string;
    readonly sub?: string;
    readonly client_id?: string;
    readonly entry: string;
  };
  /** The MCP client's name and version as the client said them (self-reported, not proven). */
  readonly client?: { readonly name: string; readonly version?: string; readonly self_reported: true };
  /** The ERP user id the call names (v1 `user_id`, `x-erp-user-id`, the identity entry). */
  readonly erp_user?: number;
  /** Without a user id: an HMAC of the ERP API key, so two keys can be told apart. */
  readonly erp_key_digest?: string;
}

/** One audit record as stored and as `GET /_/audit` answers it (`schema: 1`). */
export interface AuditRecord {
  readonly schema: typeof AUDIT_SCHEMA_VERSION;
  readonly audit_id: string;
  /** UTC, milliseconds: when the gate's `audit` step opened. */
  readonly time: string;
  /** The request log line's `request_id` (a correlation id, not a key). */
  readonly request_id?: string;
  /** A caller's W3C trace id (optional in schema 1). */
  readonly trace_id?: string;
  readonly api: AuditApi;
  /** The MCP tool. */
  readonly tool?: string;
  /** `actor`'s index value: `key:<name>`, `oauth:<issuer> <sub>`, `oauth-entry:<issuer> <entry>`. */
  readonly actor_id: string;
  readonly actor: AuditActor;
  readonly erp: {
    /** The ERP's host as the limits name it. */
    readonly host: string;
    readonly db: string;
    readonly scheme: 'http' | 'https';
    /** The port, when the ERP's URL names one. */
    readonly port?: number;
    /** The ERP's version, when the call learned it. */
    readonly version?: string;
    /** The ERP protocol that served the call (`jsonrpc`, `json2`). */
    readonly protocol?: string;
  };
  readonly model?: string;
  readonly method?: string;
  /** The ids the call names (at most {@link AUDIT_LIST_MAX}), with their count and an HMAC of the full list. */
  readonly record_ids?: readonly number[];
  readonly record_ids_count?: number;
  readonly record_ids_digest?: string;
  /** The ids a create's answer gave. */
  readonly created_ids?: readonly number[];
  readonly created_ids_count?: number;
  /** The field names the call writes (at most {@link AUDIT_LIST_MAX}), with their count. */
  readonly fields?: readonly string[];
  readonly fields_count?: number;
  /** HMAC-SHA-256 (base64url) of the written values' canonical JSON, under `digest_key_id`'s key. */
  readonly values_digest?: string;
  readonly digest_key_id?: string;
  /** The policy that allowed (or refused) it: its name (the key's, or the identity entry's) and digest. */
  readonly policy?: { readonly name: string; readonly digest: string };
  /** A person's confirmation: the answer, the confirmation's id, the digest of the form shown. */
  readonly confirmation?: {
    readonly answer: string;
    readonly id?: string;
    readonly form_digest?: string;
  };
  /** An `Idempotency-Key`: a digest of it and what it did. */
  readonly idempotency?: { readonly key_digest: string; readonly did: AuditIdempotency };
  /** A replay: the `audit_id` of the run it replays. */
  readonly replay_of?: string;
  readonly outcome: AuditOutcome | 'pending';
  /** A failure: the proxy's code and the rule or limit, or the ERP's code and exception name. */
  readonly error?: { readonly code?: number; readonly rule?: string; readonly name?: string };
  readonly duration_ms?: number;
}

/** At most this many record ids, created ids and field names are kept in a record. */
export const AUDIT_LIST_MAX = 1_000;
/** At most this many record ids (named, then created) get a pointer item, so `record=` finds the call. */
export const AUDIT_POINTERS_MAX = 100;
/** Shards of a day's partition: writes spread over them; a window is read with one Query per shard. */
export const AUDIT_SHARDS = 4;

/** The audit table's attributes (the stack, `npm run state:local` and the tests create it from these). */
export const AUDIT_TABLE = Object.freeze({
  partitionKey: 'pk',
  sortKey: 'sk',
  /** The index `actor=` reads: partition `actor`, sort `sk`. */
  actorIndex: 'by-actor',
  actorAttribute: 'actor',
  ttlAttribute: 'expires_at',
});

/**
 * The DynamoDB operations the writing functions (execute, mcp) make on the audit table, and those
 * of the reading one (aux): the stack grants exactly these, so a new one here is a new grant there.
 */
export const AUDIT_WRITE_OPERATIONS = Object.freeze(['PutItem', 'UpdateItem'] as const);
export const AUDIT_READ_OPERATIONS = Object.freeze(['Query', 'GetItem', 'BatchGetItem'] as const);
/**
 * Those of the audit's sealer (docs/guide/audit.md, "Sealed"), on the base table only (never an
 * index): strongly consistent `Query` of a window, `GetItem` and `UpdateItem` of the seal head (and
 * the completion of a record left pending as `unknown`).
 */
export const AUDIT_SEALER_OPERATIONS = Object.freeze(['Query', 'GetItem', 'UpdateItem'] as const);
export type AuditOperation = (typeof AUDIT_WRITE_OPERATIONS)[number] | (typeof AUDIT_READ_OPERATIONS)[number];

// --- Ids ------------------------------------------------------------------------------------

/** Crockford's base 32 (ULID's alphabet): sorts as text in the order of the values. */
const BASE32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;

function timePart(ms: number): string {
  let text = '';
  let rest = Math.max(0, Math.floor(ms));
  for (let i = 0; i < TIME_CHARS; i += 1) {
    text = BASE32[rest % 32] + text;
    rest = Math.floor(rest / 32);
  }
  return text;
}

/** A new `audit_id` for `ms` (epoch ms): a ULID, time-ordered as text, 80 random bits. */
export function newAuditId(ms: number): string {
  const bytes = randomBytes(RANDOM_CHARS);
  let random = '';
  for (const byte of bytes) random += BASE32[byte % 32];
  return timePart(ms) + random;
}

/** Whether `text` is an `audit_id`. */
export function isAuditId(text: string): boolean {
  return /^[0-9A-HJKMNP-TV-Z]{26}$/.test(text);
}

/** The epoch ms an `audit_id` was made at. */
export function auditIdTime(id: string): number {
  let ms = 0;
  for (const char of id.slice(0, TIME_CHARS)) ms = ms * 32 + BASE32.indexOf(char);
  return ms;
}

/** The lowest id of `ms` (ids of that millisecond sort at or after it). */
export function lowestAuditId(ms: number): string {
  return timePart(ms) + '0'.repeat(RANDOM_CHARS);
}

/** The highest id of `ms`. */
export function highestAuditId(ms: number): string {
  return timePart(ms) + 'Z'.repeat(RANDOM_CHARS);
}

/** The shard of a record: from its id's last character, so any reader finds it from the id alone. */
export function auditShard(id: string): number {
  return BASE32.indexOf(id.charAt(id.length - 1)) % AUDIT_SHARDS;
}

/** The UTC day (`YYYY-MM-DD`) of epoch ms. */
export function auditDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The partition of a record: its UTC day and shard. */
export function recordPartition(id: string): string {
  return dayPartition(auditDay(auditIdTime(id)), auditShard(id));
}

/** The partition of one shard of one day. */
export function dayPartition(day: string, shard: number): string {
  return `t#${day}#${shard}`;
}

/**
 * The partitions the writing functions may write (IAM's `dynamodb:LeadingKeys`): records
 * ({@link recordPartition}) and pointers ({@link pointerPartition}), never another item of the table
 * (the sealer's seal head).
 */
export const AUDIT_WRITER_LEADING_KEYS = Object.freeze(['t#*', 'r#*'] as const);

/** The partition of the pointer items of a record of the ERP (`model`, `id`). */
export function pointerPartition(model: string, id: number): string {
  return `r#${model}#${id}`;
}

/** When a record's items expire (epoch s): `AUDIT_RETENTION_DAYS` after its time. */
export function auditExpiry(recordMs: number, retentionDays: number): number {
  return Math.ceil(recordMs / 1000) + retentionDays * 86_400;
}

/**
 * A record as a reader sees it: a `pending` record older than `pendingMaxMs` (the writing
 * functions' timeout and a margin) reads as `unknown` (its function died, or could not complete it).
 */
export function asRead(record: AuditRecord, now: number, pendingMaxMs: number): AuditRecord {
  if (record.outcome !== 'pending') return record;
  return now - Date.parse(record.time) > pendingMaxMs ? { ...record, outcome: 'unknown' } : record;
}
