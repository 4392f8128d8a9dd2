/**
 * What differs between the real Odoo 16, 17, 18 and 19 where a proxy must care (the README's
 * "Version notes"; the "What an ERP proxy sees" sections of ../shared/odoo16-19), each case run
 * against every live server: the ERP's own behaviour first (asked directly), then what the proxy
 * makes of it. The cases know which major each server must be (`LiveServer.major`) and fail on a
 * server of another version: the ERP's answer would not be the one they expect.
 */
import { describe, expect, it } from 'vitest';
import {
  adminInstance,
  checkServerVersion,
  directVersion,
  erpCall,
  erpJsonRpc,
  LIVE_SERVERS,
  type LiveServer,
  liveName,
  resultOf,
  useCleanup,
  useLiveProxy,
} from './live-env.ts';

/** The ERP answer to a GET or POST straight to `path` (status and content type, body as text). */
async function direct(server: LiveServer, path: string, init: RequestInit = {}) {
  const response = await fetch(`${server.url}${path}`, init);
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    text: await response.text(),
  };
}

describe.each(LIVE_SERVERS)('$label', (server) => {
  describe.skipIf(server.skipReason !== undefined)(server.title('what this version does differently'), () => {
    // The spec's defaults (v2 over JSON-2 only), and v2 as 16-18 callers use it (over execute_kw).
    const proxy = useLiveProxy(server, { ERP_V2_TRANSPORT: 'json2' });
    const v2Proxy = useLiveProxy(server, { ERP_V2_TRANSPORT: 'auto' });
    const cleanup = useCleanup(server);

    it(`reports major ${server.major}${server.orLater ? ' or later' : ''} (the variables name the right server)`, async () => {
      await expect(checkServerVersion(server)).resolves.toBeUndefined();
      const { version_info: info } = await directVersion(server);
      expect(Array.isArray(info) && info.length).toBe(6);
    });

    it('the version endpoints give the ERP version string as the ERP writes it (a nightly suffix included)', async () => {
      const { result } = await erpJsonRpc(server, 'common', 'version', []);
      const erp = result as { server_version: string; server_version_info: unknown[]; server_serie: string };
      const answer = resultOf(await proxy().version('/api/erp/version')) as {
        version: string;
        version_info: unknown[];
      };
      // `16.0-20231208`, `17.0-20240709` (nightlies), `18.0`, `19.0`: the string passes as it is.
      expect(answer.version).toBe(erp.server_version);
      expect(answer.version).toMatch(new RegExp(`^${server.major}\\.0(?:$|[-+~])`));
      expect(answer.version_info).toEqual(erp.server_version_info);
      expect(erp.server_serie).toBe(`${answer.version_info[0]}.${answer.version_info[1]}`);
      if (!server.orLater) expect(answer.version_info[0]).toBe(server.major);
    });

    it(
      server.json2
        ? 'has /web/version and JSON-2'
        : 'has neither /web/version nor JSON-2 (404 HTML pages): the proxy asks common.version, and v2 is -32006',
      async () => {
        const webVersion = await direct(server, '/web/version');
        const json2 = await direct(server, '/json/2/res.partner/search_count', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `bearer ${server.key}`,
            'x-odoo-database': server.db,
          },
          body: '{"domain": []}',
        });
        if (server.json2) {
          expect(webVersion.status).toBe(200);
          expect(json2.status).toBe(200);
          return;
        }
        // 16's page is Werkzeug 1.0's (HTML 3.2 doctype), 17 and 18's Werkzeug 2's: the status decides.
        for (const page of [webVersion, json2]) {
          expect(page.status).toBe(404);
          expect(page.type).toMatch(/^text\/html/);
        }
        expect(webVersion.text).toMatch(server.major === 16 ? /DTD HTML 3\.2/ : /^<!doctype html>/);
        const v2 = await proxy().v2('search_count', { domain: [] });
        expect([v2.status, v2.envelope.error?.code]).toEqual([502, -32006]);
        expect((await proxy().version('/v2/erp/version')).envelope.error).toBeNull();
      },
    );

    it('copy: the ERP answers one id up to 17 and a list from 18; v1 passes it on, v2 answers a list', async () => {
      const [id] = await cleanup.create('res.partner', [{ name: liveName('copy source') }]);
      const erp = await erpCall(server, 'res.partner', 'copy', {
        ids: [id],
        default: { name: liveName('copy direct') },
      });
      cleanup.track('res.partner', erp.body);
      expect(erp.status).toBe(200);
      expect(Array.isArray(erp.body)).toBe(server.major >= 18);

      const v1 = resultOf(
        await proxy().v1({
          action: 'call_method',
          fn_name: 'copy',
          params: [[id]],
          keyword: { default: { name: liveName('copy v1') } },
        }),
      );
      cleanup.track('res.partner', v1);
      expect(Array.isArray(v1)).toBe(server.major >= 18);
      expect(typeof v1 === 'number' || (Array.isArray(v1) && v1.length === 1)).toBe(true);

      const v2 = resultOf(await v2Proxy().v2('copy', { ids: [id], default: { name: liveName('copy v2') } }));
      cleanup.track('res.partner', v2);
      expect(v2).toEqual([expect.any(Number)]);
    });

    it('API keys: an expiry date from 18 on; before, a revoked key is what the ERP refuses alike', async () => {
      const fields = resultOf(
        await proxy().v1({
          action: 'fields_get',
          model_id: 'res.users.apikeys',
          keyword: { attributes: ['type'] },
        }),
      ) as Record<string, unknown>;
      expect('expiration_date' in fields).toBe(server.major >= 18);
      if (!server.expiredKey) return;
      const refused = await proxy().v1(
        { action: 'search_count', params: [[]] },
        { ...adminInstance(server), api_key: server.expiredKey },
      );
      expect(refused.envelope.error?.data?.name).toBe('odoo.exceptions.AccessDenied');
    });

    it(`users' groups field is ${server.major >= 19 ? 'group_ids' : 'groups_id'} (v1 passes field names as written)`, async () => {
      const fields = resultOf(
        await proxy().v1({
          action: 'fields_get',
          model_id: 'res.users',
          keyword: { attributes: ['type', 'relation'] },
        }),
      ) as Record<string, { type: string; relation?: string }>;
      const name = server.major >= 19 ? 'group_ids' : 'groups_id';
      expect(fields[name]).toMatchObject({ type: 'many2many', relation: 'res.groups' });
      expect(fields[server.major >= 19 ? 'groups_id' : 'group_ids']).toBeUndefined();
    });
  });
});
