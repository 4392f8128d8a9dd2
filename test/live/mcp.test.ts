/**
 * `POST /mcp` against each real ERP (README, "Agents (MCP)"), with each client an agent may have
 * (the SDK 1.x `Client`, which opens with `initialize` at 2025-11-25, and the official v2 client
 * pinned to the stateless 2026-07-28), configured only with the proxy's URL and headers: it lists the
 * read-only tools, reads partners the ERP itself reports, and gets `isError: true` for an unknown
 * model; with `MCP_WRITE_TOOLS=true` it creates, writes and unlinks a partner, calls methods by
 * name and by position, and pages a result cut to size. Ids are discovered, never assumed; the
 * records it creates are deleted again.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AGENT_CLIENTS,
  type AgentClient,
  erpHeaders,
  isError,
  json,
  READ_TOOLS,
  texts,
  toolError,
  unlinkAndCheckGone,
  WRITE_TOOLS,
} from '../support/mcp-client.ts';
import { TEST_PROXY_KEY } from '../support/proxy-harness.ts';
import {
  directVersion,
  discoverIds,
  erpResult,
  LIVE_SERVERS,
  type LiveServer,
  liveName,
  useCleanup,
  useLiveProxy,
} from './live-env.ts';

/** The headers of an MCP client's configuration for the server's admin (by Bearer token). */
function adminHeaders(server: LiveServer, extra: Record<string, string> = {}): Record<string, string> {
  return {
    authorization: `Bearer ${TEST_PROXY_KEY}`,
    ...erpHeaders({ url: server.url, db: server.db, apiKey: server.key, uid: server.uid }),
    ...extra,
  };
}

describe.each(LIVE_SERVERS.flatMap((server) => AGENT_CLIENTS.map((agent) => ({ server, agent }))))(
  '$server.label, $agent.label',
  ({ server, agent }) => {
    describe.skipIf(server.skipReason !== undefined)(server.title('POST /mcp, read-only by default'), () => {
      // The proxy as deployed by default: MCP reaches every ERP version whatever ERP_V2_TRANSPORT says.
      const proxy = useLiveProxy(server, { ERP_V2_TRANSPORT: 'json2' });
      let companies: number[] = [];
      beforeAll(async () => {
        companies = await discoverIds(server, 'res.partner', [['is_company', '=', true]], 3);
      });
      const withClient = <T>(
        headers: Record<string, string>,
        test: (client: AgentClient, errors: Error[]) => Promise<T>,
      ) => agent.withClient(proxy().harness.url, headers, test);

      it('lists the read-only tools, reads the partners the ERP reports, and answers an unknown model with isError', async () => {
        const direct = (await erpResult(server, 'res.partner', 'read', {
          ids: companies,
          fields: ['name'],
        })) as { id: number; name: string }[];
        await withClient(adminHeaders(server), async (client, errors) => {
          expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(READ_TOOLS);
          const domain = [['id', 'in', companies]];
          const found = await client.callTool({
            name: 'search_read',
            arguments: { model: 'res.partner', domain, fields: ['name'], order: 'id asc' },
          });
          expect(json(found)).toEqual(direct);
          const read = await client.callTool({
            name: 'read',
            arguments: { model: 'res.partner', ids: companies, fields: ['name'] },
          });
          expect(json(read)).toEqual(direct);
          const count = await client.callTool({
            name: 'search_count',
            arguments: { model: 'res.partner', domain },
          });
          expect(json(count)).toBe(companies.length);
          const unknown = await client.callTool({
            name: 'search_read',
            arguments: { model: 'res.partnerx' },
          });
          expect(toolError(unknown)).toMatchObject({
            source: 'erp',
            code: 404,
            name: 'werkzeug.exceptions.NotFound',
            retry_safe: true,
          });
          expect(errors).toEqual([]);
        });
      });

      it('describes fields, lists models and tells the version and the protocol', async () => {
        await withClient(adminHeaders(server), async (client) => {
          const fields = await client.callTool({
            name: 'fields_get',
            arguments: { model: 'res.partner', fields: ['name', 'country_id'] },
          });
          expect(json(fields)).toMatchObject({
            name: { type: 'char' },
            country_id: { type: 'many2one', relation: 'res.country' },
          });
          const models = json(
            await client.callTool({ name: 'list_models', arguments: { search: 'res.partner' } }),
          ) as { model: string; name: string }[];
          expect(models).toContainEqual({ model: 'res.partner', name: expect.any(String) });
          expect(
            models.every(
              (m) => m.model.includes('res.partner') || m.name.toLowerCase().includes('res.partner'),
            ),
          ).toBe(true);
          const version = json(await client.callTool({ name: 'erp_version', arguments: {} }));
          expect(version).toEqual({
            ...(await directVersion(server)),
            protocol: server.json2
              ? 'JSON-2 (/json/2/<model>/<method>)'
              : '/jsonrpc execute_kw (needs the x-erp-user-id header)',
          });
        });
      });

      it('aggregates by group as the ERP counts (formatted_read_group on 19+, read_group on 16-18), with structuredContent', async () => {
        const domain = [['is_company', '=', true]];
        // The ERP's own sums, named (`id_total:sum(id)`): Odoo 16 ignores the `id:sum` form on `id`
        // and answers no sum at all, while the named form works on 16 to 19.
        const direct = (await erpResult(server, 'res.partner', 'read_group', {
          domain,
          fields: ['id_total:sum(id)'],
          groupby: ['country_id'],
          lazy: false,
        })) as { country_id: unknown; __count: number; id_total: number }[];
        await withClient(adminHeaders(server), async (client) => {
          const result = await client.callTool({
            name: 'aggregate',
            arguments: {
              model: 'res.partner',
              domain,
              group_by: ['country_id'],
              aggregates: ['id:sum'],
              order: 'country_id',
            },
          });
          expect(isError(result), texts(result)[0]).toBe(false);
          const groups = json(result) as { country_id: unknown; count: number; 'id:sum': number }[];
          const byCountry = (rows: { country_id: unknown }[]) =>
            rows.map((row) => JSON.stringify(row.country_id)).sort();
          expect(byCountry(groups)).toEqual(byCountry(direct));
          for (const group of groups) {
            const same = direct.find(
              (row) => JSON.stringify(row.country_id) === JSON.stringify(group.country_id),
            );
            expect(group.count).toBe(same?.__count);
            expect(group['id:sum']).toBe(same?.id_total);
          }
          expect((result as { structuredContent?: unknown }).structuredContent).toMatchObject({ groups });
          const busiest = json(
            await client.callTool({
              name: 'aggregate',
              arguments: {
                model: 'res.partner',
                domain,
                group_by: ['country_id'],
                order: 'count desc',
                limit: 1,
              },
            }),
          ) as { count: number }[];
          expect(busiest[0]?.count).toBe(Math.max(...direct.map((row) => row.__count)));
          const monthly = await client.callTool({
            name: 'aggregate',
            arguments: {
              model: 'res.partner',
              group_by: ['create_date:month'],
              aggregates: ['id:count_distinct'],
            },
          });
          expect(isError(monthly), texts(monthly)[0]).toBe(false);
          const months = json(monthly) as { count: number; 'id:count_distinct': number }[];
          for (const month of months) expect(month['id:count_distinct']).toBe(month.count);
          expect(months.reduce((sum, month) => sum + month.count, 0)).toBe(
            await erpResult(server, 'res.partner', 'search_count', { domain: [] }),
          );
        });
      });

      it('keeps a large answer within 50 000 characters, with a note when it cut or hit the limit', async () => {
        await withClient(adminHeaders(server), async (client) => {
          // All fields of up to 80 partners: large on any server.
          const result = await client.callTool({ name: 'search_read', arguments: { model: 'res.partner' } });
          const [page, note] = texts(result);
          expect(page?.length).toBeLessThanOrEqual(50_000);
          const rows = JSON.parse(page as string) as unknown[];
          if (note !== undefined) expect(note).toMatch(/offset=\d+/);
          else expect(rows.length).toBeLessThan(80);
        });
      });

      it('asks for the missing connection headers, and for x-erp-user-id on ERP 16-18 only', async () => {
        await withClient({ authorization: `Bearer ${TEST_PROXY_KEY}` }, async (client) => {
          const error = toolError(
            await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } }),
          );
          expect(error).toMatchObject({ source: 'proxy', code: -32600 });
          expect(error.message).toMatch(/x-erp-url, x-erp-db, x-erp-api-key headers are missing/);
        });
        await withClient(adminHeaders(server, { 'x-erp-user-id': '' }), async (client) => {
          const result = await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } });
          if (server.json2) expect(json(result)).toEqual(expect.any(Number));
          else expect(toolError(result).message).toMatch(/older than 19: .*Add the x-erp-user-id header/);
        });
      });

      it.skipIf(server.expiredKey === undefined)(
        `answers an expired ERP key with 401 Unauthorized${server.optionalSkip('EXPIRED_KEY')}`,
        async () => {
          await withClient(
            adminHeaders(server, { 'x-erp-api-key': server.expiredKey ?? '' }),
            async (client) => {
              const error = toolError(
                await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } }),
              );
              expect(error).toMatchObject({
                source: 'erp',
                code: 401,
                name: 'werkzeug.exceptions.Unauthorized',
              });
              expect(error.retry).toMatch(/x-erp-api-key/);
            },
          );
        },
      );
    });

    describe.skipIf(server.skipReason !== undefined)(
      server.title('POST /mcp with MCP_WRITE_TOOLS=true'),
      () => {
        const proxy = useLiveProxy(server, { MCP_WRITE_TOOLS: 'true' });
        const cleanup = useCleanup(server);
        const withClient = <T>(
          headers: Record<string, string>,
          test: (client: AgentClient, errors: Error[]) => Promise<T>,
        ) => agent.withClient(proxy().harness.url, headers, test);

        it('creates, writes and unlinks a partner; calls methods by name and by position', async () => {
          const name = liveName('mcp partner');
          await withClient(adminHeaders(server), async (client) => {
            expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([
              ...READ_TOOLS,
              ...WRITE_TOOLS,
            ]);
            const id = json(
              await client.callTool({
                name: 'create',
                arguments: { model: 'res.partner', values: { name } },
              }),
            );
            expect(id).toEqual(expect.any(Number));
            cleanup.track('res.partner', id);
            const written = await client.callTool({
              name: 'write',
              arguments: { model: 'res.partner', ids: [id as number], values: { phone: '+32 2 555 01 27' } },
            });
            expect(json(written)).toBe(true);
            // What the ERP itself now holds.
            expect(
              await erpResult(server, 'res.partner', 'read', { ids: [id], fields: ['name', 'phone'] }),
            ).toEqual([{ id, name, phone: '+32 2 555 01 27' }]);
            for (const how of [{ kwargs: { name } }, { args: [name] }]) {
              const found = await client.callTool({
                name: 'call_method',
                arguments: { model: 'res.partner', method: 'name_search', ...how },
              });
              expect(json(found), JSON.stringify(how)).toEqual([[id, expect.stringContaining(name)]]);
            }
            await unlinkAndCheckGone(client, 'res.partner', id as number);
            const missing = await client.callTool({
              name: 'write',
              arguments: { model: 'res.partner', ids: [id as number], values: { name } },
            });
            expect(toolError(missing)).toMatchObject({
              source: 'erp',
              code: 404,
              name: 'odoo.exceptions.MissingError',
            });
            const noMethod = await client.callTool({
              name: 'call_method',
              arguments: { model: 'res.partner', method: 'does_not_exist', kwargs: {} },
            });
            expect(toolError(noMethod)).toMatchObject({
              source: 'erp',
              code: 404,
              name: 'werkzeug.exceptions.NotFound',
            });
          });
        });

        it('cuts a result by whole records and pages to the rest', async () => {
          const prefix = liveName('mcp cut');
          const long = (n: number) => `${prefix} ${String(n).padStart(2, '0')} ${'x'.repeat(6000)}`;
          await cleanup.create(
            'res.partner',
            Array.from({ length: 12 }, (_, n) => ({ name: long(n) })),
          );
          await withClient(adminHeaders(server), async (client) => {
            const domain = [['name', '=like', `${prefix} %`]];
            const first = await client.callTool({
              name: 'search_read',
              arguments: { model: 'res.partner', domain, fields: ['name'], order: 'name asc' },
            });
            const [page, note] = texts(first);
            const shown = JSON.parse(page as string) as { name: string }[];
            expect(page?.length).toBeLessThanOrEqual(50_000);
            expect(shown.length).toBeGreaterThan(0);
            expect(note).toMatch(
              new RegExp(`^Only the first ${shown.length} of the 12 records .* offset=${shown.length} `),
            );
            const rest = json(
              await client.callTool({
                name: 'search_read',
                arguments: {
                  model: 'res.partner',
                  domain,
                  fields: ['name'],
                  order: 'name asc',
                  offset: shown.length,
                },
              }),
            ) as { name: string }[];
            expect([...shown, ...rest].map((row) => row.name)).toEqual(
              Array.from({ length: 12 }, (_, n) => long(n)),
            );
          });
        });

        it.skipIf(server.limited === undefined)(
          `answers the limited user's create with 403 AccessError${server.optionalSkip('LIMITED_UID', 'LIMITED_KEY')}`,
          async () => {
            const headers = adminHeaders(server, {
              'x-erp-api-key': server.limited?.key ?? '',
              'x-erp-user-id': String(server.limited?.uid ?? ''),
            });
            await withClient(headers, async (client) => {
              const denied = await client.callTool({
                name: 'create',
                arguments: { model: 'res.partner', values: { name: liveName('mcp denied') } },
              });
              // Tracked in case a server lets it through (the assertion below then fails).
              if (!isError(denied)) cleanup.track('res.partner', json(denied));
              expect(toolError(denied)).toMatchObject({
                source: 'erp',
                code: 403,
                name: 'odoo.exceptions.AccessError',
              });
            });
          },
        );
      },
    );
  },
);
