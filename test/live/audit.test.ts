/**
 * The audit of every write (issue 56), against each real Odoo of LIVE_SERVERS: a create, a write,
 * an unlink and a refused write of one partner, each found again by `record=` (the partner the
 * create made, whose id is discovered, never assumed) and by `actor=`, with the created id, the
 * ids named, the field names, and the outcome; never the values written.
 */
import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../lambdas/platform/audit/audit-record.ts';
import { TEST_PROXY_KEY } from '../support/test-secrets.ts';
import { LIVE_SERVERS, liveName, resultOf, useCleanup, useLiveProxy, v2Instance } from './live-env.ts';

const KEYS = {
  auditor: 'live-audit-auditor-0123456789abcdef',
  reader: 'live-audit-reader-0123456789abcdefg',
} as const;
const PROXY_API_KEYS = JSON.stringify({
  keys: [
    { name: 'live-writer', key: TEST_PROXY_KEY },
    { name: 'live-reader', key: KEYS.reader, policy: { access: 'read' } },
    { name: 'live-auditor', key: KEYS.auditor, policy: { apis: ['audit'] } },
  ],
});

for (const server of LIVE_SERVERS) {
  describe.skipIf(server.skipReason !== undefined)(server.title('the audit of writes'), () => {
    const proxy = useLiveProxy(server, { PROXY_API_KEY: '', PROXY_API_KEYS });
    const cleanup = useCleanup(server);

    const audit = async (query: string): Promise<AuditRecord[]> => {
      const answer = await proxy().harness.get(`/_/audit?${query}`, { 'x-api-key': KEYS.auditor });
      expect(answer.status, JSON.stringify(answer.json)).toBe(200);
      return (answer.json as { records: AuditRecord[] }).records;
    };

    it('a create, a write, a refused write and an unlink: each found by record= and actor=', async () => {
      const name = liveName('audited partner');
      const created = resultOf(
        await proxy().v2('create', { vals_list: [{ name, comment: 'private note' }] }),
      );
      const id = (Array.isArray(created) ? created[0] : created) as number;
      expect(Number.isInteger(id)).toBe(true);
      cleanup.track('res.partner', [id]);
      resultOf(await proxy().v2('write', { ids: [id], vals: { name: `${name} (renamed)` } }));
      const refused = await proxy().harness.post(
        '/v2/erp/execute',
        {
          id: 'live-audit-refused',
          model_id: 'res.partner',
          method: 'write',
          kwargs: { ids: [id], vals: { name: 'never' } },
          erp_instance: v2Instance(server),
        },
        { 'x-api-key': KEYS.reader },
      );
      expect(refused.status).toBe(403);
      resultOf(await proxy().v2('unlink', { ids: [id] }));

      const found = await audit(`record=res.partner:${id}`);
      // Newest first: the unlink, the refused write, the write, the create.
      expect(found.map((record) => [record.method, record.outcome])).toEqual([
        ['unlink', 'ok'],
        ['write', 'refused'],
        ['write', 'ok'],
        ['create', 'ok'],
      ]);
      const [unlink, denied, write, create] = found as [AuditRecord, AuditRecord, AuditRecord, AuditRecord];
      expect(create).toMatchObject({
        api: 'v2',
        created_ids: [id],
        fields: ['name', 'comment'],
        actor_id: 'key:live-writer',
      });
      expect(write).toMatchObject({ record_ids: [id], fields: ['name'] });
      expect(denied).toMatchObject({ actor_id: 'key:live-reader', error: { code: -32008, rule: 'access' } });
      expect(unlink).toMatchObject({ record_ids: [id] });
      for (const record of found) {
        const url = new URL(server.url);
        expect(record.erp).toMatchObject({ db: server.db, host: url.hostname });
        expect(record.erp.port).toBe(url.port === '' ? undefined : Number(url.port));
        expect(JSON.stringify(record)).not.toContain('private note');
        expect(JSON.stringify(record)).not.toContain(server.key);
      }
      const mine = (await audit('actor=live-writer&model=res.partner&limit=1000')).map(
        (record) => record.audit_id,
      );
      expect(mine).toEqual(expect.arrayContaining([create.audit_id, write.audit_id, unlink.audit_id]));
      expect((await audit('actor=live-reader')).map((record) => record.audit_id)).toContain(denied.audit_id);
    });

    it('a copy names the record it copied and the one it made', async () => {
      const [source] = await cleanup.create('res.partner', [{ name: liveName('audited source') }]);
      const copied = resultOf(await proxy().v2('copy', { ids: [source] }));
      const made = (Array.isArray(copied) ? copied[0] : copied) as number;
      expect(Number.isInteger(made)).toBe(true);
      cleanup.track('res.partner', [made]);
      const [record] = await audit(`record=res.partner:${made}`);
      expect(record).toMatchObject({
        method: 'copy',
        outcome: 'ok',
        record_ids: [source],
        created_ids: [made],
      });
      expect((await audit(`record=res.partner:${source}`)).map((held) => held.audit_id)).toContain(
        record?.audit_id,
      );
    });
  });
}
