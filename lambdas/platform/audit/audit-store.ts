/**
 * @module platform/audit/audit-store
 * Where audit records live (docs/guide/audit.md, "Where it lives"): the ports the gate's audit steps
 * write through ({@link AuditWriter}) and `GET /_/audit` reads through ({@link AuditReader}). On the
 * stack's DynamoDB audit table they are two modules (`audit-store-dynamodb.ts` writes,
 * `audit-reader-dynamodb.ts` reads, each loaded on first use), as the stack grants the writing and
 * the reading functions different operations; a local run's embedded ring is both
 * (`audit-store-embedded.ts`); `audit-store-choice.ts` picks from the configuration.
 *
 * A record is created once and completed once: {@link AuditStore.create} writes a `pending` record
 * only where none is; {@link AuditStore.finish} writes a record's end only where none is, or over
 * its own `pending` record; nothing deletes one. Pointer items (one per record id the call named or
 * created, at most `AUDIT_POINTERS_MAX`) let `record=` find a call with one Query.
 */
import type { Config } from '../config.ts';
import type { AuditOutcome, AuditRecord } from './audit-record.ts';

/** The audit store could not take or give a record (unreachable, slow, refused). */
export class AuditStoreError extends Error {
  override readonly name = 'AuditStoreError';
}

/** A pointer of a record: the ERP record (`model`, `id`) a call named or created. */
export interface AuditPointer {
  readonly model: string;
  readonly id: number;
}

/** What `GET /_/audit` asks for (every filter optional; newest first). */
export interface AuditQuery {
  /** Epoch ms, inclusive. */
  readonly since: number;
  /** Epoch ms, inclusive. */
  readonly until: number;
  readonly model?: string;
  /** Every write that named or created this ERP record. */
  readonly record?: AuditPointer;
  /** The actor's index value (`key:<name>`, `oauth:<issuer> <sub>`...). */
  readonly actor?: string;
  readonly outcome?: AuditOutcome;
  readonly erp?: string;
  readonly db?: string;
  /** At most this many records. */
  readonly limit: number;
  /** The page after this `audit_id` (exclusive: older records only). */
  readonly before?: string;
}

/** One page: the records, newest first, and where the next page starts (`undefined`: no more). */
export interface AuditPage {
  readonly records: readonly AuditRecord[];
  readonly next?: string;
}

/**
 * A record as the reader sees it (a `pending` record past its time read as `unknown`), or
 * `undefined` when the reader may not see it (a key's `targets` and `databases`).
 */
export type AuditView = (record: AuditRecord) => AuditRecord | undefined;

/** What the writing functions (execute, mcp) do with the audit: create, complete, point. */
export interface AuditWriter {
  readonly kind: 'dynamodb' | 'embedded';
  /** Writes `record` (`pending`) when no record has its id. One conditional write. */
  create(record: AuditRecord, expiresAt: number): Promise<void>;
  /**
   * Writes `record`'s end when no record has its id, or over its own `pending` record; a record
   * already ended is never changed (returns `false`). One conditional write; `quick`: within a
   * short time of its own (the store just failed the call's pending record).
   */
  finish(record: AuditRecord, expiresAt: number, options?: { readonly quick?: boolean }): Promise<boolean>;
  /** Writes the pointer items of `record` (never changes one). One conditional write each. */
  point(record: AuditRecord, pointers: readonly AuditPointer[], expiresAt: number): Promise<void>;
}

/** What the reading function (aux, `GET /_/audit`) does with it: list. */
export interface AuditReader {
  readonly kind: 'dynamodb' | 'embedded';
  /** A page of records for `query`, newest first, as `view` shows them (and only those). Never a Scan. */
  list(query: AuditQuery, view: AuditView): Promise<AuditPage>;
}

/** What the sealer reads (docs/guide/audit.md, "Sealed"): a closed window, whole. */
export interface AuditWindowReader {
  /**
   * Every record of [start, end) (epoch ms; within one UTC day) as stored, pending ones included,
   * in `audit_id` order: strongly consistent and complete (never a page), so nothing written
   * before the read is missed.
   */
  readWindow(start: number, end: number): Promise<AuditRecord[]>;
}

/**
 * Both, as one store: the embedded ring of a local run (one process writes and reads it). On the
 * table the writer and the reader are separate modules, each in the bundles of the functions
 * granted its operations only.
 */
export interface AuditStore extends AuditWriter, AuditReader, AuditWindowReader {}

/** The ERP records a record names or created, for its pointer items (bounded). */
export function pointersOf(record: AuditRecord, max: number): AuditPointer[] {
  if (record.model === undefined) return [];
  const ids = [...(record.record_ids ?? []), ...(record.created_ids ?? [])];
  return [...new Set(ids)].slice(0, max).map((id) => ({ model: record.model as string, id }));
}

/** Whether `record` matches the filters of `query` besides time, record and cursor. */
export function matchesFilters(record: AuditRecord, query: AuditQuery): boolean {
  return (
    (query.model === undefined || record.model === query.model) &&
    (query.actor === undefined || record.actor_id === query.actor) &&
    (query.outcome === undefined || record.outcome === query.outcome) &&
    (query.erp === undefined || record.erp.host === query.erp) &&
    (query.db === undefined || record.erp.db === query.db)
  );
}

/** Where the records go: the table, the embedded ring, or none (off, or deployed without the table). */
export function auditStoreKind(
  config: Pick<Config, 'audit' | 'runtime' | 'auditTable' | 'dynamodbEndpoint'>,
): 'dynamodb' | 'embedded' | 'none' {
  if (config.audit === 'off') return 'none';
  if (
    config.auditTable !== undefined &&
    (config.runtime === 'lambda' || config.dynamodbEndpoint !== undefined)
  ) {
    return 'dynamodb';
  }
  return config.runtime === 'lambda' ? 'none' : 'embedded';
}

/** What choosing the audit's store reads of the configuration (where, and the DynamoDB client's credentials). */
export type AuditStoreConfig = Pick<
  Config,
  | 'runtime'
  | 'audit'
  | 'auditTable'
  | 'dynamodbEndpoint'
  | 'region'
  | 'awsAccessKeyId'
  | 'awsSecretAccessKey'
  | 'awsSessionToken'
>;
