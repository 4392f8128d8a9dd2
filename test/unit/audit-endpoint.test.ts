/**
 * `GET /_/audit`'s parts (operator/audit-endpoint.ts) that no HTTP test reaches cheaply: what a
 * key's `targets` and `databases` let it see (a name its targets could only resolve is not shown),
 * the query's times, a store that cannot be read, and the embedded ring dropping its oldest ended
 * records when full (never a pending one).
 */
import { describe, expect, it } from 'vitest';
import { auditVisible, parseAuditQuery, serveAudit } from '../../lambdas/operator/audit-endpoint.ts';
import type { AuditRecord } from '../../lambdas/platform/audit/audit-record.ts';
import { EmbeddedAuditStore } from '../../lambdas/platform/audit/audit-store-embedded.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';
import { compileKeyPolicy, keyPolicySchema } from '../../lambdas/platform/key-policy.ts';
import { generatedSealKey } from '../../lambdas/platform/seal.ts';
import { auditRecord } from '../support/audit-records.ts';

const record = (
  host: string,
  db: string,
  outcome: AuditRecord['outcome'] = 'ok',
  ms = Date.now(),
): AuditRecord => auditRecord(ms, { erp: { host, db, scheme: 'https', port: 8443 }, outcome });

const policy = (document: unknown) => compileKeyPolicy(keyPolicySchema().parse(document));

describe("what a key's targets and databases let it see", () => {
  it('sees its databases and targets only; a host its CIDR targets would have to resolve is not shown', () => {
    const narrow = policy({
      apis: ['audit'],
      databases: ['prod'],
      targets: ['erp.example.com', '10.0.0.0/8'],
    });
    expect(auditVisible(narrow, record('erp.example.com', 'prod'))).toBe(true);
    expect(auditVisible(narrow, record('erp.example.com', 'test'))).toBe(false);
    expect(auditVisible(narrow, record('10.1.2.3', 'prod'))).toBe(true);
    expect(auditVisible(narrow, record('other.example.com', 'prod'))).toBe(false);
    expect(auditVisible(undefined, record('anything', 'any'))).toBe(true);
  });
});

describe("the query's times", () => {
  const key = generatedSealKey();
  it('reads UTC times and epoch ms, and refuses since after until', () => {
    const now = Date.UTC(2026, 11, 7, 12);
    expect(parseAuditQuery({ since: '2026-12-07T09:00:00Z', until: String(now) }, now, key)).toMatchObject({
      since: Date.UTC(2026, 11, 7, 9),
      until: now,
    });
    expect(() =>
      parseAuditQuery({ since: '2026-12-08T00:00:00Z', until: '2026-12-07T00:00:00Z' }, now, key),
    ).toThrow(/since is after until/);
  });
});

describe('a store that cannot be read', () => {
  it('answers 503 -32004, saying to retry', async () => {
    const store = new EmbeddedAuditStore();
    store.list = async () => {
      throw new Error('down');
    };
    const config = loadConfig({ PROXY_API_KEY: 'k'.repeat(32) });
    const refused = await serveAudit({}, undefined, {
      config,
      auditReading: { mode: 'on', store, cursorKey: async () => generatedSealKey() },
    }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: -32004 });
    expect((refused as Error).message).toMatch(/could not be read: retry shortly/);
  });
});

describe('the embedded ring', () => {
  it('drops its oldest ended records when full, never a pending one, and never refuses', async () => {
    const ring = new EmbeddedAuditStore(3);
    const start = Date.now() - 10_000;
    const pending = record('erp', 'db', 'pending', start);
    await ring.create(pending);
    const ended = [1, 2, 3, 4].map((i) => record('erp', 'db', 'ok', start + i));
    for (const held of ended) {
      await ring.finish(held);
      await ring.point(held, [{ model: 'res.partner', id: 1 }]);
    }
    const all = (await ring.list({ since: 0, until: Date.now(), limit: 10 }, (held) => held)).records;
    expect(all.map((held) => held.audit_id).sort()).toEqual(
      [pending.audit_id, ended[2]?.audit_id, ended[3]?.audit_id].sort(),
    );
    const byRecord = await ring.list(
      { since: 0, until: Date.now(), limit: 10, record: { model: 'res.partner', id: 1 } },
      (held) => held,
    );
    expect(byRecord.records).toHaveLength(2);
  });
});
