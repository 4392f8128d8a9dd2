/**
 * @module platform/audit/audit-store-embedded
 * The audit store of a local run without DynamoDB (`npm start`): a bounded ring in this process,
 * with the same conditions as the table (created once, completed once). When full it drops its
 * oldest ended records, never a pending one, and never refuses a write for room (the start banner
 * says so); records are lost on restart.
 */
import {
  AUDIT_POINTERS_MAX,
  type AuditRecord,
  auditIdTime,
  highestAuditId,
  lowestAuditId,
} from './audit-record.ts';
import {
  type AuditPage,
  type AuditPointer,
  type AuditQuery,
  type AuditStore,
  type AuditView,
  matchesFilters,
  pointersOf,
} from './audit-store.ts';

/** How many records the ring keeps (the oldest ended ones go first). */
export const EMBEDDED_AUDIT_RECORDS = 10_000;

export class EmbeddedAuditStore implements AuditStore {
  readonly kind = 'embedded';
  /** By id; a Map keeps insertion order, which is about time order (the oldest first). */
  readonly #records = new Map<string, AuditRecord>();
  /** Pointer partition → the ids of the records that named or created it. */
  readonly #pointers = new Map<string, Set<string>>();
  /** Operations, for the tests that count them (the table's answers the same questions with Queries). */
  operations = 0;

  constructor(private readonly capacity: number = EMBEDDED_AUDIT_RECORDS) {}

  async create(record: AuditRecord): Promise<void> {
    this.operations += 1;
    if (this.#records.has(record.audit_id)) throw new Error(`audit record ${record.audit_id} exists`);
    this.#records.set(record.audit_id, record);
    this.#makeRoom();
  }

  async finish(
    record: AuditRecord,
    _expiresAt?: number,
    _options?: { readonly quick?: boolean },
  ): Promise<boolean> {
    this.operations += 1;
    const held = this.#records.get(record.audit_id);
    if (held !== undefined && held.outcome !== 'pending') return false;
    this.#records.set(record.audit_id, record);
    this.#makeRoom();
    return true;
  }

  async point(record: AuditRecord, pointers: readonly AuditPointer[]): Promise<void> {
    for (const pointer of pointers) {
      this.operations += 1;
      const key = `${pointer.model}#${pointer.id}`;
      let ids = this.#pointers.get(key);
      if (ids === undefined) {
        ids = new Set();
        this.#pointers.set(key, ids);
      }
      ids.add(record.audit_id);
    }
  }

  async readWindow(start: number, end: number): Promise<AuditRecord[]> {
    const [lo, hi] = [lowestAuditId(start), highestAuditId(end - 1)];
    return [...this.#records.values()]
      .filter((record) => record.audit_id >= lo && record.audit_id <= hi)
      .sort((a, b) => (a.audit_id < b.audit_id ? -1 : a.audit_id > b.audit_id ? 1 : 0));
  }

  async list(query: AuditQuery, view: AuditView): Promise<AuditPage> {
    this.operations += 1;
    let ids: string[];
    if (query.record !== undefined) {
      ids = [...(this.#pointers.get(`${query.record.model}#${query.record.id}`) ?? [])];
    } else {
      ids = [...this.#records.keys()];
    }
    ids.sort().reverse();
    const records: AuditRecord[] = [];
    for (const id of ids) {
      if (query.before !== undefined && id >= query.before) continue;
      const time = auditIdTime(id);
      if (time > query.until) continue;
      if (time < query.since) break;
      const held = this.#records.get(id);
      const seen = held === undefined ? undefined : view(held);
      if (seen === undefined || !matchesFilters(seen, query)) continue;
      records.push(seen);
      if (records.length === query.limit) return { records, next: id };
    }
    return { records };
  }

  /** Drops the oldest ended records past the capacity (a pending one stays: its call is running). */
  #makeRoom(): void {
    if (this.#records.size <= this.capacity) return;
    for (const [id, record] of this.#records) {
      if (this.#records.size <= this.capacity) break;
      if (record.outcome === 'pending') continue;
      this.#records.delete(id);
      for (const pointer of pointersOf(record, AUDIT_POINTERS_MAX)) {
        const key = `${pointer.model}#${pointer.id}`;
        const ids = this.#pointers.get(key);
        ids?.delete(id);
        if (ids?.size === 0) this.#pointers.delete(key);
      }
    }
  }
}
