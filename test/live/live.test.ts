/**
 * The integration checks against each real ERP (test/live/live-env.ts says which variables
 * describe them; a server whose variables are missing is skipped with a one-line reason), through
 * a proxy with default settings. Read-only, except one partner it creates, renames and deletes
 * again (self-cleaning). Ids are discovered, never assumed.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useProxy } from '../support/fixtures.ts';
import { checkServerVersion, LIVE_SERVERS } from './live-env.ts';

interface Envelope {
  result: unknown;
  error: { code: number; message: string; data: unknown } | null;
}

describe.each(LIVE_SERVERS)('$label', (live) => {
  describe.skipIf(live.skipReason !== undefined)(live.title('live ERP'), () => {
    const proxy = useProxy({
      env: {
        LOG_LEVEL: 'WARN',
        ...(process.env.ERP_ALLOWED_TARGETS ? { ERP_ALLOWED_TARGETS: process.env.ERP_ALLOWED_TARGETS } : {}),
      },
    });
    let major = 0;

    beforeAll(async () => {
      await checkServerVersion(live);
      const version = (await proxy.post('/api/erp/version', { id: 'live-version', url: live.url }))
        .json as Envelope;
      expect(version.error).toBeNull();
      const first = (version.result as { version_info: unknown[] }).version_info[0];
      major = typeof first === 'number' ? first : Number(String(first).replace(/\D+/g, '')) || 0;
    });

    const v1 = async (body: Record<string, unknown>) =>
      (
        await proxy.post('/api/erp/execute', {
          id: 'live-v1',
          model_id: 'res.partner',
          erp_instance: { url: live.url, db: live.db, user_id: live.uid, api_key: live.key },
          ...body,
        })
      ).json as Envelope;
    const v2 = async (method: string, kwargs: Record<string, unknown>) =>
      (
        await proxy.post('/v2/erp/execute', {
          id: 'live-v2',
          model_id: 'res.partner',
          method,
          kwargs,
          erp_instance: { url: live.url, db: live.db, api_key: live.key },
        })
      ).json as Envelope;

    it('v1 reads: search_count, search, read, search_read, fields_get', async () => {
      const count = await v1({ action: 'search_count', params: [[]] });
      expect(Number.isInteger(count.result)).toBe(true);
      const ids = (await v1({ action: 'search', params: [[]], keyword: { limit: 3 } })).result as number[];
      const read = await v1({ action: 'read', params: [ids, ['name']] });
      expect((read.result as unknown[]).length).toBe(ids.length);
      const rows = await v1({ action: 'search_read', params: [[]], keyword: { fields: ['name'], limit: 2 } });
      expect(Array.isArray(rows.result)).toBe(true);
      const fields = await v1({ action: 'fields_get', keyword: { attributes: ['type'] } });
      expect((fields.result as Record<string, unknown>).name).toBeDefined();
    });

    it('v1 create, write and unlink clean up after themselves', async () => {
      const name = `erp-proxy live ${Date.now()}`;
      const created = await v1({ action: 'create', params: [{ name }] });
      expect(created.error).toBeNull();
      const id = created.result as number;
      try {
        expect((await v1({ action: 'write', params: [[id], { name: `${name} (renamed)` }] })).result).toBe(
          true,
        );
      } finally {
        expect((await v1({ action: 'unlink', params: [[id]] })).result).toBe(true);
      }
    });

    it('a wrong ERP key is an ERP error, not a proxy error', async () => {
      const answer = (
        await proxy.post('/api/erp/execute', {
          id: 'live-bad',
          action: 'search_count',
          model_id: 'res.partner',
          params: [[]],
          erp_instance: { url: live.url, db: live.db, user_id: live.uid, api_key: 'not-a-valid-key' },
        })
      ).json as Envelope;
      expect(answer.error?.code).toBe(0);
    });

    it('v2 (ERP 19+) agrees with v1 and cleans up after itself; -32006 below 19', async () => {
      expect(major >= 19).toBe(live.json2);
      if (major < 19) {
        const unavailable = await v2('search_count', { domain: [] });
        expect(unavailable.error?.code).toBe(-32006);
        return;
      }
      const keyword = { fields: ['name'], limit: 3, order: 'id asc' };
      const a = await v1({ action: 'search_read', params: [[]], keyword });
      const b = await v2('search_read', { domain: [], ...keyword });
      expect(b.result).toEqual(a.result);
      const created = await v2('create', { vals_list: [{ name: `erp-proxy live v2 ${Date.now()}` }] });
      const ids = created.result as number[];
      try {
        expect(ids.length).toBe(1);
        expect((await v2('write', { ids, vals: { comment: 'live' } })).result).toBe(true);
      } finally {
        expect((await v2('unlink', { ids })).result).toBe(true);
      }
      const bad = await v2('search_count', { domain: [], no_such_argument: 1 });
      expect(bad.error?.code).toBe(422);
    });
  });
});
