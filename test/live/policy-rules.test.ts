/**
 * The key policies' call rules (docs/guide/policies.md, "Methods, fields and companies") against each real ERP of LIVE_SERVERS: a
 * second company and a partner of each (the admin joins the second company for the file and leaves
 * it after); a key scoped to the admin's company sees only that company's partner of the two
 * (v1, v2 and MCP), an unscoped key both, and no widening reaches the ERP; a denied field is absent
 * from real `search_read`, `read`, `web_search_read` and `fields_get` answers; a method outside
 * `methods` never reaches the ERP (the partner it aimed at is still there). Ids are discovered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { erpHeaders, isError, json, toolError, withMcpClient } from '../support/mcp-client.ts';
import { type ProxyHarness, startProxy } from '../support/proxy-harness.ts';
import {
  adminInstance,
  erpResult,
  joinSecondCompany,
  LIVE_SERVERS,
  liveName,
  useCleanup,
  v2Instance,
} from './live-env.ts';

const KEYS = {
  scoped: 'live-scoped-key-0123456789abcdef',
  contacts: 'live-contacts-key-0123456789abcdef',
  support: 'live-support-key-0123456789abcdef',
  plain: 'live-plain-key-0123456789abcdef',
} as const;

interface Envelope {
  result: unknown;
  error: { code: number; message: string } | null;
}

describe.each(LIVE_SERVERS)('$label', (server) => {
  describe.skipIf(server.skipReason !== undefined)(
    server.title('key policies: methods, fields, companies'),
    () => {
      const cleanup = useCleanup(server);
      let proxy: ProxyHarness | undefined;
      let main = 0;
      let second = 0;
      let leaveSecond: (() => Promise<void>) | undefined;
      const partners = { main: 0, second: 0 };

      beforeAll(async () => {
        ({ main, second, leave: leaveSecond } = await joinSecondCompany(server));
        const ids = await cleanup.create('res.partner', [
          {
            name: liveName('policy main'),
            email: 'main@example.com',
            phone: '+1 555 0101',
            company_id: main,
          },
          { name: liveName('policy second'), email: 'second@example.com', company_id: second },
        ]);
        partners.main = ids[0] ?? 0;
        partners.second = ids[1] ?? 0;
        proxy = await startProxy({
          env: {
            ...(process.env.ERP_ALLOWED_TARGETS
              ? { ERP_ALLOWED_TARGETS: process.env.ERP_ALLOWED_TARGETS }
              : {}),
            ...server.v2Env,
            PROXY_API_KEY: '',
            MCP_WRITE_TOOLS: 'true',
            PROXY_API_KEYS: JSON.stringify({
              keys: [
                { name: 'live-scoped', key: KEYS.scoped, policy: { companies: { [server.db]: [main] } } },
                {
                  name: 'live-contacts',
                  key: KEYS.contacts,
                  policy: { fields: { 'res.partner': { deny: ['email', 'phone'] } } },
                },
                {
                  name: 'live-support',
                  key: KEYS.support,
                  policy: { methods: { 'res.partner': ['search_read', 'read'] } },
                },
                { name: 'live-plain', key: KEYS.plain },
              ],
            }),
          },
        });
      });

      afterAll(async () => {
        await proxy?.close();
        await leaveSecond?.();
      });

      const post = async (key: string, path: string, body: Record<string, unknown>) => {
        if (proxy === undefined) throw new Error('the proxy is not started');
        const answer = await proxy.post(path, { id: 'live-rules', ...body }, { 'x-api-key': key });
        return { status: answer.status, envelope: answer.json as Envelope, text: answer.text };
      };
      const v1 = (key: string, body: Record<string, unknown>) =>
        post(key, '/api/erp/execute', {
          erp_instance: adminInstance(server),
          model_id: 'res.partner',
          ...body,
        });
      const v2 = (key: string, method: string, kwargs: Record<string, unknown>) =>
        post(key, '/v2/erp/execute', {
          erp_instance: v2Instance(server),
          model_id: 'res.partner',
          method,
          kwargs,
        });
      const ours = () => [['id', 'in', [partners.main, partners.second]]];
      const idsOf = (result: unknown) => (result as Array<{ id: number }>).map((record) => record.id).sort();

      it("a key scoped to one company sees only that company's partner, and cannot widen", async () => {
        const both = await v2(KEYS.plain, 'search_read', { domain: ours(), fields: ['name'] });
        expect(idsOf(both.envelope.result)).toEqual([partners.main, partners.second].sort());
        const scoped = await v2(KEYS.scoped, 'search_read', { domain: ours(), fields: ['name'] });
        expect(scoped.envelope.error, scoped.text).toBeNull();
        expect(idsOf(scoped.envelope.result)).toEqual([partners.main]);
        const scopedV1 = await v1(KEYS.scoped, { action: 'search_read', params: [ours(), ['name']] });
        expect(idsOf(scopedV1.envelope.result)).toEqual([partners.main]);
        for (const context of [{ allowed_company_ids: [main, second] }, { allowed_company_ids: [second] }]) {
          const wider = await v2(KEYS.scoped, 'search_read', { domain: ours(), fields: ['name'], context });
          expect(wider.status).toBe(403);
          expect(wider.envelope.error?.message).toContain("outside this key's companies");
        }
        const name = liveName('policy shared');
        const created = await v2(KEYS.scoped, 'create', { vals_list: [{ name, company_id: false }] });
        expect(created.status).toBe(403);
        expect(
          await erpResult(server, 'res.partner', 'search_count', { domain: [['name', '=', name]] }),
        ).toBe(0);
        await withMcpClient(
          proxy?.url ?? '',
          {
            'x-api-key': KEYS.scoped,
            ...erpHeaders({ url: server.url, db: server.db, apiKey: server.key, uid: server.uid }),
          },
          async (client) => {
            const answer = await client.callTool({
              name: 'search_read',
              arguments: { model: 'res.partner', domain: ours(), fields: ['name'] },
            });
            expect(isError(answer)).toBe(false);
            expect(idsOf(json(answer))).toEqual([partners.main]);
          },
        );
      });

      it('a denied field is absent from real search_read, read, web_search_read and fields_get answers', async () => {
        const answers = [
          await v2(KEYS.contacts, 'search_read', { domain: ours() }),
          await v2(KEYS.contacts, 'read', { ids: [partners.main] }),
          await v1(KEYS.contacts, { action: 'search_read', params: [ours()] }),
          await v1(KEYS.contacts, { action: 'read', params: [[partners.main]] }),
          await v2(KEYS.contacts, 'fields_get', { attributes: ['type'] }),
          await v2(
            KEYS.contacts,
            'web_search_read',
            server.major >= 17
              ? { domain: ours(), specification: { name: {} } }
              : { domain: ours(), fields: ['name'] },
          ),
        ];
        for (const answer of answers) {
          expect(answer.envelope.error, answer.text).toBeNull();
          // The fields themselves; computed ones that show their values (email_formatted,
          // phone_sanitized) are the documented limit: a policy denies them too.
          expect(answer.text).not.toMatch(/"email":|"phone":|"email"|"phone"/);
        }
        const plain = await v2(KEYS.plain, 'read', { ids: [partners.main], fields: ['email'] });
        expect(plain.text).toContain('main@example.com');
        const refused = await v2(KEYS.contacts, 'search_read', {
          domain: [['email', '=', 'main@example.com']],
        });
        expect(refused.status).toBe(403);
        expect(refused.envelope.error?.message).toContain('field email of res.partner is denied');
        const dotted = await v2(KEYS.contacts, 'search_count', {
          domain: [['child_ids.phone', '!=', false]],
        });
        expect(dotted.status).toBe(403);
      });

      it('a method outside methods never reaches the ERP', async () => {
        const refused = await v2(KEYS.support, 'unlink', { ids: [partners.main] });
        expect(refused.status).toBe(403);
        expect(refused.envelope.error?.message).toContain('method unlink is not in this key');
        const v1Refused = await v1(KEYS.support, {
          action: 'write',
          params: [[partners.main], { name: 'changed' }],
        });
        expect(v1Refused.status).toBe(403);
        const [still] = (await erpResult(server, 'res.partner', 'read', {
          ids: [partners.main],
          fields: ['name'],
        })) as Array<{ name: string }>;
        expect(still?.name).toMatch(/policy main/);
        await withMcpClient(
          proxy?.url ?? '',
          {
            'x-api-key': KEYS.support,
            ...erpHeaders({ url: server.url, db: server.db, apiKey: server.key, uid: server.uid }),
          },
          async (client) => {
            const error = toolError(
              await client.callTool({
                name: 'call_method',
                arguments: { model: 'res.partner', method: 'unlink', ids: [partners.main] },
              }),
            );
            expect(error.code).toBe(-32008);
          },
        );
        expect(
          await erpResult(server, 'res.partner', 'search_count', { domain: [['id', '=', partners.main]] }),
        ).toBe(1);
      });
    },
  );
});
