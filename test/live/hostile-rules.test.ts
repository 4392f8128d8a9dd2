/**
 * Rules that hold against a hostile caller (issue 54), against each real ERP of LIVE_SERVERS: every
 * class of spelling the black-box attack found, on v1 (over `/jsonrpc`, and over JSON-2 on 19+),
 * v2 and MCP, refused for a key with the rule, with the same request served to a key without it as
 * the control (the control shows the real server reads the spelling: a refusal whose control fails
 * proves nothing). Records are created for the file and deleted after it; ids are discovered.
 *
 * - a name that is not a name (`res.partner/write?`) never reaches the ERP;
 * - `export_data` columns Odoo rewrites (`email.id`, `email:id`, `email/anything`) and its
 *   external ids (a write: refused for a read-only key);
 * - a `having` aggregate (19's `formatted_read_group`), an oracle on a denied value;
 * - a context the proxy does not read (`show_email` nested in a 17+ specification; `name_get` on 16);
 * - a field carried by delegation (`res.users`' `email` is its partner's) and an `allow` rule;
 * - `load`, `update` (16-18) and a `default_company_id` context moving a record out of a key's companies;
 * - a confirming key's write tool whose context would write what the form does not show.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { erpHeaders, isError, json, toolError, withMcpClient } from '../support/mcp-client.ts';
import { type ProxyHarness, startProxy } from '../support/proxy-harness.ts';
import {
  adminInstance,
  checkServerVersion,
  erpResult,
  joinSecondCompany,
  LIVE_SERVERS,
  type LiveServer,
  liveName,
  useCleanup,
  v2Instance,
} from './live-env.ts';

const KEYS = {
  plain: 'live-hostile-plain-0123456789abcdef',
  reader: 'live-hostile-reader-0123456789abcdef',
  contacts: 'live-hostile-contacts-0123456789abcdef',
  allowing: 'live-hostile-allowing-0123456789abcdef',
  strict: 'live-hostile-strict-0123456789abcdef',
  nameless: 'live-hostile-nameless-0123456789abcdef',
  scoped: 'live-hostile-scoped-0123456789abcdef',
  confirming: 'live-hostile-confirming-0123456789abcdef',
} as const;

interface Envelope {
  result: unknown;
  error: { code: number; message: string } | null;
}

interface Answer {
  status: number;
  envelope: Envelope;
  text: string;
}

function keysDocument(server: LiveServer, main: number): string {
  return JSON.stringify({
    keys: [
      { name: 'plain', key: KEYS.plain },
      { name: 'reader', key: KEYS.reader, policy: { access: 'read' } },
      { name: 'contacts', key: KEYS.contacts, policy: { fields: { 'res.partner': { deny: ['email'] } } } },
      {
        name: 'allowing',
        key: KEYS.allowing,
        policy: { fields: { 'res.partner': { allow: ['name', 'display_name'] } } },
      },
      { name: 'strict', key: KEYS.strict, policy: { fields: { 'res.partner': { allow: ['name'] } } } },
      {
        name: 'nameless',
        key: KEYS.nameless,
        policy: { fields: { 'res.partner': { allow: ['country_id'] } } },
      },
      { name: 'scoped', key: KEYS.scoped, policy: { companies: { [server.db]: [main] } } },
      { name: 'confirming', key: KEYS.confirming, policy: { confirm: 'writes' } },
    ],
  });
}

/** The v1 transports a server is reached by: `/jsonrpc` always, JSON-2 too on 19+. */
function v1Transports(server: LiveServer): { label: string; env: Record<string, string> }[] {
  return [
    { label: 'v1 over /jsonrpc', env: { ERP_V1_TRANSPORT: 'jsonrpc' } },
    ...(server.json2 ? [{ label: 'v1 over JSON-2', env: { ERP_V1_TRANSPORT: 'json2' } }] : []),
  ];
}

describe.each(LIVE_SERVERS)('$label', (server) => {
  describe.skipIf(server.skipReason !== undefined)(
    server.title('rules that hold against a hostile caller'),
    () => {
      const cleanup = useCleanup(server);
      const proxies = new Map<string, ProxyHarness>();
      let main = 0;
      let second = 0;
      let leaveSecond: (() => Promise<void>) | undefined;
      const partners = { parent: 0, child: 0 };
      const email = `hostile-${process.pid}@example.com`;

      beforeAll(async () => {
        await checkServerVersion(server);
        ({ main, second, leave: leaveSecond } = await joinSecondCompany(server));
        const [parent] = await cleanup.create('res.partner', [
          { name: liveName('hostile parent'), email, company_id: main },
        ]);
        partners.parent = parent ?? 0;
        const [child] = await cleanup.create('res.partner', [
          { name: liveName('hostile child'), parent_id: partners.parent, company_id: main },
        ]);
        partners.child = child ?? 0;
        for (const { label, env } of v1Transports(server)) {
          proxies.set(
            label,
            await startProxy({
              env: {
                ...(process.env.ERP_ALLOWED_TARGETS
                  ? { ERP_ALLOWED_TARGETS: process.env.ERP_ALLOWED_TARGETS }
                  : {}),
                ...server.v2Env,
                ...env,
                PROXY_API_KEY: '',
                MCP_WRITE_TOOLS: 'true',
                PROXY_API_KEYS: keysDocument(server, main),
              },
            }),
          );
        }
      });

      afterAll(async () => {
        for (const proxy of proxies.values()) await proxy.close();
        await leaveSecond?.();
      });

      const first = (): ProxyHarness => {
        const proxy = proxies.values().next().value;
        if (proxy === undefined) throw new Error('the proxies are not started');
        return proxy;
      };
      const post = async (proxy: ProxyHarness, key: string, path: string, body: Record<string, unknown>) => {
        const answer = await proxy.post(path, { id: 'live-hostile', ...body }, { 'x-api-key': key });
        return {
          status: answer.status,
          envelope: answer.json as Envelope,
          text: answer.text,
        } satisfies Answer;
      };
      /** A v1 `call_method` (arguments by name: translatable over JSON-2 without the ERP's docs). */
      const v1 = (
        proxy: ProxyHarness,
        key: string,
        method: string,
        ids: number[],
        keyword: Record<string, unknown>,
      ) =>
        post(proxy, key, '/api/erp/execute', {
          erp_instance: adminInstance(server),
          action: 'call_method',
          fn_name: method,
          model_id: 'res.partner',
          params: ids.length > 0 ? [ids] : [],
          keyword,
        });
      const v2 = (key: string, method: string, kwargs: Record<string, unknown>, model = 'res.partner') =>
        post(first(), key, '/v2/erp/execute', {
          erp_instance: v2Instance(server),
          model_id: model,
          method,
          kwargs,
        });
      const mcp = <T>(key: string, run: Parameters<typeof withMcpClient<T>>[2]) =>
        withMcpClient(
          first().url,
          {
            'x-api-key': key,
            ...erpHeaders({ url: server.url, db: server.db, apiKey: server.key, uid: server.uid }),
          },
          run,
        );
      const refused = (answer: Answer, pattern: RegExp) => {
        expect(answer.status, answer.text).toBe(403);
        expect(answer.envelope.error?.code).toBe(-32008);
        expect(answer.envelope.error?.message).toMatch(pattern);
      };
      const partnerOf = async (id: number) =>
        (
          (await erpResult(server, 'res.partner', 'read', {
            ids: [id],
            fields: ['name', 'company_id', 'function'],
          })) as Array<{ name: string; company_id: [number, string] | false; function: string | false }>
        )[0];

      it('a name that is not a name never reaches the ERP, on every transport', async () => {
        const before = await partnerOf(partners.child);
        for (const proxy of proxies.values()) {
          for (const key of [KEYS.reader, KEYS.plain]) {
            const answer = await post(proxy, key, '/api/erp/execute', {
              erp_instance: adminInstance(server),
              action: 'read',
              model_id: 'res.partner/write?',
              params: [[partners.child], { name: 'renamed' }],
            });
            expect(answer.status).toBe(400);
            expect(answer.envelope.error?.code).toBe(-32600);
          }
          const method = await post(proxy, KEYS.reader, '/api/erp/execute', {
            erp_instance: adminInstance(server),
            action: 'call_method',
            fn_name: 'read/../write',
            model_id: 'res.partner',
            params: [[partners.child], { name: 'renamed' }],
          });
          expect(method.envelope.error?.code).toBe(-32600);
        }
        const v2Answer = await v2(
          KEYS.reader,
          'write',
          { ids: [partners.child], vals: { name: 'renamed' } },
          'res.partner/x',
        );
        expect(v2Answer.envelope.error?.code).toBe(-32007);
        expect((await partnerOf(partners.child))?.name).toBe(before?.name);
      });

      it('export columns Odoo rewrites read the denied field: refused on v1, v2 and MCP; served without the rule', async () => {
        for (const column of ['email.id', 'email:id', 'email/country_id']) {
          // The control: the real server exports the email through each spelling.
          const control = await v2(KEYS.plain, 'export_data', {
            ids: [partners.parent],
            fields_to_export: [column],
          });
          expect(control.envelope.error, control.text).toBeNull();
          expect(JSON.stringify(control.envelope.result)).toContain(email);
          refused(
            await v2(KEYS.contacts, 'export_data', { ids: [partners.parent], fields_to_export: [column] }),
            /field email of res\.partner is denied|asks for external ids/,
          );
          for (const proxy of proxies.values())
            refused(
              await v1(proxy, KEYS.contacts, 'export_data', [partners.parent], {
                fields_to_export: [column],
              }),
              /field email of res\.partner is denied|asks for external ids/,
            );
        }
        await mcp(KEYS.contacts, async (client) => {
          const error = toolError(
            await client.callTool({
              name: 'call_method',
              arguments: {
                model: 'res.partner',
                method: 'export_data',
                ids: [partners.parent],
                kwargs: { fields_to_export: ['email/x'] },
              },
            }),
          );
          expect(error.code).toBe(-32008);
        });
      });

      it('export_data asking for external ids writes: a read-only key is refused; the control gets an xmlid', async () => {
        const control = await v2(KEYS.plain, 'export_data', {
          ids: [partners.parent],
          fields_to_export: ['id', 'name'],
        });
        expect(control.envelope.error, control.text).toBeNull();
        expect(JSON.stringify(control.envelope.result)).toMatch(
          /__export__\.res_partner_|"[a-z_]+\.[a-z_0-9]+"/,
        );
        refused(
          await v2(KEYS.reader, 'export_data', { ids: [partners.child], fields_to_export: ['id'] }),
          /may only read; this "?export_data"? call writes/,
        );
        for (const proxy of proxies.values())
          refused(
            await v1(proxy, KEYS.reader, 'export_data', [partners.child], {
              fields_to_export: ['parent_id:id'],
            }),
            /may only read/,
          );
        // Read-only export of database ids is still a read.
        const dbIds = await v2(KEYS.reader, 'export_data', {
          ids: [partners.child],
          fields_to_export: ['.id', 'name'],
        });
        expect(dbIds.envelope.error, dbIds.text).toBeNull();
      });

      it.skipIf(server.major < 19)(
        'a having aggregate is an oracle on a denied value: refused; the control answers it',
        async () => {
          const ask = (key: string, value: string) =>
            v2(key, 'formatted_read_group', {
              domain: [['id', '=', partners.parent]],
              groupby: ['name'],
              aggregates: ['__count'],
              having: [['email:max', '=', value]],
            });
          const hit = await ask(KEYS.plain, email);
          const miss = await ask(KEYS.plain, 'nobody@example.com');
          expect((hit.envelope.result as unknown[]).length, hit.text).toBe(1);
          expect((miss.envelope.result as unknown[]).length, miss.text).toBe(0);
          refused(await ask(KEYS.contacts, email), /field email of res\.partner is denied/);
          const having = {
            domain: [['id', '=', partners.parent]],
            groupby: ['name'],
            having: [['email:max', '=', email]],
          };
          for (const proxy of proxies.values())
            refused(
              await v1(proxy, KEYS.contacts, 'formatted_read_group', [], having),
              /field email of res\.partner is denied/,
            );
          await mcp(KEYS.contacts, async (client) => {
            const error = toolError(
              await client.callTool({
                name: 'call_method',
                arguments: { model: 'res.partner', method: 'formatted_read_group', kwargs: having },
              }),
            );
            expect(error.code).toBe(-32008);
          });
        },
      );

      it('a context nested where Odoo applies it shows the denied email: refused; the control shows it', async () => {
        if (server.major >= 17) {
          const spec = { parent_id: { fields: { display_name: {} }, context: { show_email: true } } };
          const control = await v2(KEYS.plain, 'web_read', { ids: [partners.child], specification: spec });
          expect(control.text).toContain(email);
          refused(
            await v2(KEYS.contacts, 'web_read', { ids: [partners.child], specification: spec }),
            /show_email/,
          );
          for (const proxy of proxies.values())
            refused(
              await v1(proxy, KEYS.contacts, 'web_read', [partners.child], { specification: spec }),
              /show_email/,
            );
        } else {
          // Odoo 16: the stored display_name ignores the context, name_get does not.
          const control = await v2(KEYS.plain, 'name_get', {
            ids: [partners.parent],
            context: { show_email: true },
          });
          expect(control.text).toContain(email);
          refused(
            await v2(KEYS.contacts, 'name_get', { ids: [partners.parent], context: { show_email: true } }),
            /show_email/,
          );
        }
        await mcp(KEYS.contacts, async (client) => {
          const error = toolError(
            await client.callTool({
              name: 'read',
              arguments: {
                model: 'res.partner',
                ids: [partners.parent],
                fields: ['name'],
                context: { show_email: true },
              },
            }),
          );
          expect(error.code).toBe(-32008);
          expect(error.message).toContain('show_email');
        });
      });

      it("a field carried by delegation is denied where it is carried: res.users' email", async () => {
        const control = await v2(KEYS.plain, 'read', { ids: [server.uid], fields: ['email'] }, 'res.users');
        expect(control.envelope.error, control.text).toBeNull();
        expect(control.text).toContain('"email"');
        refused(
          await v2(KEYS.contacts, 'read', { ids: [server.uid], fields: ['email'] }, 'res.users'),
          /field email of res\.users is denied/,
        );
        for (const proxy of proxies.values())
          refused(
            await post(proxy, KEYS.contacts, '/api/erp/execute', {
              erp_instance: adminInstance(server),
              action: 'read',
              model_id: 'res.users',
              params: [[server.uid], ['email']],
            }),
            /field email of res\.users is denied/,
          );
        const all = await v2(
          KEYS.contacts,
          'read',
          { ids: [server.uid], fields: ['login', 'name'] },
          'res.users',
        );
        expect(all.envelope.error, all.text).toBeNull();
        const everything = await v2(
          KEYS.contacts,
          'search_read',
          { domain: [['id', '=', server.uid]] },
          'res.users',
        );
        expect(everything.envelope.error, everything.text).toBeNull();
        expect(everything.text).not.toMatch(/"email"/);
        await mcp(KEYS.contacts, async (client) => {
          const answer = await client.callTool({
            name: 'search_read',
            arguments: { model: 'res.users', domain: [['id', '=', server.uid]] },
          });
          expect(isError(answer)).toBe(false);
          expect(JSON.stringify(json(answer))).not.toMatch(/"email"/);
        });
      });

      it('an allow rule serves only its fields, whatever is asked', async () => {
        const control = await v2(KEYS.plain, 'search_read', { domain: [['id', '=', partners.parent]] });
        expect(control.text).toContain(email);
        const allowed = await v2(KEYS.allowing, 'search_read', { domain: [['id', '=', partners.parent]] });
        expect(allowed.envelope.error, allowed.text).toBeNull();
        const [record] = allowed.envelope.result as Record<string, unknown>[];
        expect(Object.keys(record ?? {}).sort()).toEqual(['display_name', 'id', 'name']);
        refused(
          await v2(KEYS.allowing, 'search_count', { domain: [['email', '=', email]] }),
          /field email of res\.partner is denied/,
        );
        for (const proxy of proxies.values()) {
          const v1Answer = await post(proxy, KEYS.allowing, '/api/erp/execute', {
            erp_instance: adminInstance(server),
            action: 'search_read',
            model_id: 'res.partner',
            params: [[['id', '=', partners.parent]]],
          });
          expect(v1Answer.envelope.error, v1Answer.text).toBeNull();
          expect(v1Answer.text).not.toContain(email);
        }
        await mcp(KEYS.allowing, async (client) => {
          const answer = await client.callTool({
            name: 'search_read',
            arguments: { model: 'res.partner', domain: [['id', '=', partners.parent]] },
          });
          expect(isError(answer), JSON.stringify(answer)).toBe(false);
          expect(JSON.stringify(json(answer))).not.toContain(email);
        });
      });

      it("load, update and a default_company_id context cannot move a record out of a key's companies", async () => {
        const load = (key: string) =>
          v2(key, 'load', {
            fields: ['.id', 'company_id/.id'],
            data: [[String(partners.child), String(second)]],
          });
        refused(await load(KEYS.scoped), /"load" takes values the proxy does not read/);
        for (const proxy of proxies.values())
          refused(
            await v1(proxy, KEYS.scoped, 'load', [], {
              fields: ['.id', 'company_id/.id'],
              data: [[String(partners.child), String(second)]],
            }),
            /"load" takes values/,
          );
        await mcp(KEYS.scoped, async (client) => {
          const error = toolError(
            await client.callTool({
              name: 'call_method',
              arguments: {
                model: 'res.partner',
                method: 'load',
                kwargs: {
                  fields: ['.id', 'company_id/.id'],
                  data: [[String(partners.child), String(second)]],
                },
              },
            }),
          );
          expect(error.code).toBe(-32008);
        });
        expect((await partnerOf(partners.child))?.company_id).toEqual([main, expect.any(String)]);
        // The control: load does move it.
        const moved = await load(KEYS.plain);
        expect(moved.envelope.error, moved.text).toBeNull();
        expect((await partnerOf(partners.child))?.company_id).toEqual([second, expect.any(String)]);
        await erpResult(server, 'res.partner', 'write', {
          ids: [partners.child],
          vals: { company_id: main },
        }).catch(() =>
          erpResult(server, 'res.partner', 'write', { ids: [partners.child], values: { company_id: main } }),
        );
        if (server.major < 19) {
          // update(values) is public on 16-18: a write() the company rule never read.
          refused(
            await v2(KEYS.scoped, 'update', { ids: [partners.child], values: { company_id: false } }),
            /"update" takes values/,
          );
          const control = await v2(KEYS.plain, 'update', {
            ids: [partners.child],
            values: { company_id: false },
          });
          expect(control.envelope.error, control.text).toBeNull();
          expect((await partnerOf(partners.child))?.company_id).toBe(false);
          await v2(KEYS.plain, 'write', { ids: [partners.child], vals: { company_id: main } });
        }
        const name = liveName('hostile default company');
        const create = (key: string) =>
          v2(key, 'create', { vals_list: [{ name }], context: { default_company_id: second } });
        refused(await create(KEYS.scoped), /default_company_id/);
        for (const proxy of proxies.values())
          refused(
            await post(proxy, KEYS.scoped, '/api/erp/execute', {
              erp_instance: adminInstance(server),
              action: 'create',
              model_id: 'res.partner',
              params: [{ name }],
              keyword: { context: { default_company_id: second } },
            }),
            /default_company_id/,
          );
        expect(
          await erpResult(server, 'res.partner', 'search_count', { domain: [['name', '=', name]] }),
        ).toBe(0);
        const control = await create(KEYS.plain);
        expect(control.envelope.error, control.text).toBeNull();
        cleanup.track('res.partner', control.envelope.result);
        const [created] = (await erpResult(server, 'res.partner', 'search_read', {
          domain: [['name', '=', name]],
          fields: ['company_id'],
        })) as Array<{ company_id: [number, string] }>;
        expect(created?.company_id[0]).toBe(second);
      });

      it("a confirming key's write tool may not carry a context that writes what the form does not show", async () => {
        const name = liveName('hostile confirm');
        const args = {
          model: 'res.partner',
          values: { name },
          context: { default_function: 'Chief Executive' },
        };
        await mcp(KEYS.confirming, async (client) => {
          const error = toolError(await client.callTool({ name: 'create', arguments: args }));
          expect(error.code).toBe(-32008);
          expect(error.message).toContain('default_function');
        });
        expect(
          await erpResult(server, 'res.partner', 'search_count', { domain: [['name', '=', name]] }),
        ).toBe(0);
        // The control: without confirm, the context writes the job title the values never named.
        await mcp(KEYS.plain, async (client) => {
          const answer = await client.callTool({ name: 'create', arguments: args });
          expect(isError(answer), JSON.stringify(answer)).toBe(false);
        });
        const [created] = (await erpResult(server, 'res.partner', 'search_read', {
          domain: [['name', '=', name]],
          fields: ['function'],
        })) as Array<{ id: number; function: string }>;
        cleanup.track('res.partner', created?.id);
        expect(created?.function).toBe('Chief Executive');
      });

      it('a method the field rule does not read reaches a ruled model through its arguments: refused on any model', async () => {
        const [category] = await cleanup.create('res.partner.category', [
          { name: liveName('hostile category'), partner_ids: [[6, 0, [partners.parent]]] },
        ]);
        const groups = (key: string, value: string) =>
          v2(
            key,
            'web_read_group',
            server.major >= 19
              ? {
                  domain: [
                    ['id', '=', category],
                    ['partner_ids.email', '=', value],
                  ],
                  groupby: ['name'],
                }
              : {
                  domain: [
                    ['id', '=', category],
                    ['partner_ids.email', '=', value],
                  ],
                  fields: ['name'],
                  groupby: ['name'],
                },
            'res.partner.category',
          );
        // The control: an oracle on the email, one group for the right guess and none for a wrong one.
        const hit = await groups(KEYS.plain, email);
        const miss = await groups(KEYS.plain, 'nobody@example.com');
        expect(JSON.stringify(hit.envelope.result), hit.text).not.toEqual(
          JSON.stringify(miss.envelope.result),
        );
        refused(
          await groups(KEYS.contacts, email),
          /cannot see which fields "?web_read_group"? names in its arguments/,
        );
      });

      it('a named argument the rule does not list is read as Odoo binds it: res.users.write(values) on 16-18', async () => {
        const [admin] = (await erpResult(server, 'res.users', 'read', {
          ids: [server.uid],
          fields: ['email'],
        })) as Array<{
          email: string | false;
        }>;
        const write = (key: string) =>
          v2(key, 'write', { ids: [server.uid], values: { email: admin?.email ?? false } }, 'res.users');
        refused(await write(KEYS.contacts), /field email of res\.users is denied/);
        if (server.major < 19) {
          // The control: Odoo 16-18's res.users.write names its argument `values`, and takes it.
          const control = await write(KEYS.plain);
          expect(control.envelope.error, control.text).toBeNull();
        }
      });

      it('a dict where Odoo iterates a list (read_group fields) names the denied field: refused', async () => {
        const ask = (key: string) =>
          v2(key, 'read_group', {
            domain: [['id', '=', partners.parent]],
            fields: { 'x:array_agg(email)': 1 },
            groupby: ['name'],
            lazy: false,
          });
        const control = await ask(KEYS.plain);
        expect(control.text).toContain(email);
        refused(await ask(KEYS.contacts), /is not of a type the proxy reads/);
      });

      it.skipIf(server.json2)(
        'v2 over /jsonrpc: ids that are no record ids never reach a model method as its domain',
        async () => {
          const answer = await v2(KEYS.contacts, 'web_search_read', {
            ids: [['email', '=', email]],
            ...(server.major >= 17 ? { specification: { name: {} } } : { fields: ['name'] }),
          });
          expect(answer.envelope.error?.code, answer.text).toBe(422);
          expect(answer.envelope.error?.message).toContain('must be record ids');
        },
      );

      it("a many2one shows its comodel's display name: denied where display_name is not allowed", async () => {
        const read = (key: string) =>
          v2(key, 'read', { ids: [server.uid], fields: ['partner_id'] }, 'res.users');
        const control = await read(KEYS.plain);
        expect(control.envelope.error, control.text).toBeNull();
        expect(control.text).toMatch(/"partner_id": ?\[\d+, ?"/);
        refused(await read(KEYS.strict), /field partner_id of res\.users is denied/);
      });

      it('lang and tz in the context of a write are field defaults: checked as those fields', async () => {
        const name = liveName('hostile tz');
        const create = (key: string) =>
          v2(key, 'create', { vals_list: [{ name }], context: { tz: 'Europe/Brussels' } });
        refused(
          await create(KEYS.strict),
          /context key tz would set the new record's field tz of res\.partner/,
        );
        const control = await create(KEYS.plain);
        expect(control.envelope.error, control.text).toBeNull();
        cleanup.track('res.partner', control.envelope.result);
        const [created] = (await erpResult(server, 'res.partner', 'search_read', {
          domain: [['name', '=', name]],
          fields: ['tz'],
        })) as Array<{ tz: string | false }>;
        expect(created?.tz).toBe('Europe/Brussels');
      });

      it("x2many values as a list of pairs (Odoo's dict()) are refused by the field and company rules", async () => {
        const name = liveName('hostile pairs');
        const write = (key: string, pairs: unknown[]) =>
          v2(key, 'write', { ids: [partners.parent], vals: { child_ids: [[0, 0, pairs]] } });
        refused(
          await write(KEYS.contacts, [
            ['name', name],
            ['email', email],
          ]),
          /x2many command's values/,
        );
        refused(
          await write(KEYS.scoped, [
            ['name', name],
            ['company_id', false],
          ]),
          /values are not an object/,
        );
        expect(
          await erpResult(server, 'res.partner', 'search_count', { domain: [['name', '=', name]] }),
        ).toBe(0);
        // The control: Odoo reads the pairs as values.
        const control = await write(KEYS.plain, [
          ['name', name],
          ['email', email],
        ]);
        expect(control.envelope.error, control.text).toBeNull();
        const created = (await erpResult(server, 'res.partner', 'search_read', {
          domain: [['name', '=', name]],
          fields: ['email'],
        })) as Array<{ id: number; email: string }>;
        for (const record of created) cleanup.track('res.partner', record.id);
        expect(created[0]?.email).toBe(email);
      });

      it.skipIf(server.major < 19)('Odoo 19 lower-cases operators: an ANY sub-domain is read', async () => {
        const ask = (key: string, value: string) =>
          v2(key, 'search_count', {
            domain: [
              ['id', '=', partners.child],
              ['parent_id', 'ANY', [['email', '=', value]]],
            ],
          });
        expect((await ask(KEYS.plain, email)).envelope.result).toBe(1);
        expect((await ask(KEYS.plain, 'nobody@example.com')).envelope.result).toBe(0);
        refused(await ask(KEYS.contacts, email), /field email of res\.partner is denied/);
      });

      it("a relational field compared with text searches the comodel's names: an oracle, refused", async () => {
        const ask = (key: string, value: string) =>
          v2(key, 'search_count', {
            domain: [
              ['id', '=', partners.child],
              ['parent_id', '=ilike', value],
            ],
          });
        const hit = await ask(KEYS.plain, email);
        const miss = await ask(KEYS.plain, 'nobody@example.com');
        expect([hit.envelope.result, miss.envelope.result], hit.text).toEqual([1, 0]);
        refused(await ask(KEYS.contacts, email), /parent_id is compared with text/);
      });

      it("a many2many's group labels are its comodel's display names: refused where they are not allowed", async () => {
        const [category] = await cleanup.create('res.partner.category', [
          { name: liveName('hostile labels'), partner_ids: [[6, 0, [partners.parent]]] },
        ]);
        const groups = (key: string) =>
          v2(
            key,
            server.major >= 19 ? 'formatted_read_group' : 'read_group',
            server.major >= 19
              ? { domain: [['id', '=', category]], groupby: ['partner_ids'] }
              : { domain: [['id', '=', category]], fields: ['name'], groupby: ['partner_ids'], lazy: false },
            'res.partner.category',
          );
        const control = await groups(KEYS.plain);
        expect(control.text).toContain('hostile parent');
        refused(await groups(KEYS.nameless), /field partner_ids of res\.partner\.category is denied/);
      });

      it("a companies key's new partner is its company's, not shared with every company", async () => {
        const name = liveName('hostile default company');
        const created = await v2(KEYS.scoped, 'create', { vals_list: [{ name }] });
        expect(created.envelope.error, created.text).toBeNull();
        cleanup.track('res.partner', created.envelope.result);
        const control = await v2(KEYS.plain, 'create', { vals_list: [{ name: `${name} control` }] });
        cleanup.track('res.partner', control.envelope.result);
        const read = (await erpResult(server, 'res.partner', 'search_read', {
          domain: [['name', 'in', [name, `${name} control`]]],
          fields: ['name', 'company_id'],
        })) as Array<{ name: string; company_id: [number, string] | false }>;
        expect(read.find((record) => record.name === name)?.company_id).toEqual([main, expect.any(String)]);
        // Without the rule, res.partner has no default company: shared with every company.
        expect(read.find((record) => record.name !== name)?.company_id).toBe(false);
      });

      it('a key with content rules never writes code (a server action reads any field)', async () => {
        const answer = await v2(
          KEYS.contacts,
          'create',
          { vals_list: [{ name: liveName('hostile action'), model_id: 1, state: 'code', code: 'x = 1' }] },
          'ir.actions.server',
        );
        refused(answer, /"ir\.actions\.server" holds code/);
      });

      it('x2many command codes false and true are create and update to Odoo: read as such', async () => {
        const name = liveName('hostile bool');
        const write = (key: string) =>
          v2(key, 'write', { ids: [partners.parent], vals: { child_ids: [[false, 0, { name, email }]] } });
        refused(await write(KEYS.contacts), /field email of res\.partner is denied/);
        expect(
          await erpResult(server, 'res.partner', 'search_count', { domain: [['name', '=', name]] }),
        ).toBe(0);
        // The control: Odoo creates the child from [false, 0, values].
        const control = await write(KEYS.plain);
        expect(control.envelope.error, control.text).toBeNull();
        const created = (await erpResult(server, 'res.partner', 'search', {
          domain: [['name', '=', name]],
        })) as number[];
        cleanup.track('res.partner', created);
        expect(created).toHaveLength(1);
      });

      it('child_of with text searches display names (email, VAT): an oracle, refused', async () => {
        const ask = (key: string, value: string) =>
          v2(key, 'search_count', {
            domain: [
              ['id', '=', partners.parent],
              ['id', 'child_of', value],
            ],
          });
        const hit = await ask(KEYS.plain, email);
        const miss = await ask(KEYS.plain, 'nobody@example.com');
        expect([hit.envelope.result, miss.envelope.result], hit.text).toEqual([1, 0]);
        refused(await ask(KEYS.strict, email), /child_of text searches names/);
      });
    },
  );
});
