/**
 * Audit records for the tests of the audit's parts (platform/audit/, operator/audit-endpoint.ts):
 * one finished write at a given time, with any facts changed.
 */
import { type AuditRecord, newAuditId } from '../../lambdas/platform/audit/audit-record.ts';

/** A finished v2 write of `res.partner` 42 by the key `writer` at `ms`, with `facts` over it. */
export function auditRecord(ms: number, facts: Partial<AuditRecord> = {}): AuditRecord {
  return {
    schema: 1,
    audit_id: newAuditId(ms),
    time: new Date(ms).toISOString(),
    api: 'v2',
    actor_id: 'key:writer',
    actor: { key: 'writer' },
    erp: { host: 'erp.example', db: 'prod', scheme: 'https' },
    model: 'res.partner',
    method: 'write',
    record_ids: [42],
    outcome: 'ok',
    ...facts,
  };
}
