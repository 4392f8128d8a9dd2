/**
 * The README's "From v1 to v2" table against each real ERP: every row runs once through v1 and
 * once through v2, and the answers agree (for create: v1 from one dict gives a bare id, v2 a list
 * of ids). On Odoo 16-18 v2 runs over execute_kw (`ERP_V2_TRANSPORT=auto`). Reads name discovered
 * records only; writes touch records the file creates and deletes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  discoverIds,
  erpResult,
  LIVE_SERVERS,
  liveName,
  resultOf,
  useCleanup,
  useLiveProxy,
} from './live-env.ts';

describe.each(LIVE_SERVERS)('$label', (server) => {
  describe.skipIf(server.skipReason !== undefined)(
    server.title('the README v1 → v2 table, both ways, live'),
    () => {
      const proxy = useLiveProxy(server);
      const cleanup = useCleanup(server);
      let companies: number[] = [];
      let domain: unknown[] = [];

      const v1 = async (body: Record<string, unknown>) => resultOf(await proxy().v1(body));
      const v2 = async (method: string, kwargs: Record<string, unknown>) =>
        resultOf(await proxy().v2(method, kwargs));
      const names = async (ids: unknown) =>
        (
          (await erpResult(server, 'res.partner', 'read', {
            ids,
            fields: ['name'],
            context: { active_test: false },
          })) as Array<{
            id: number;
            name: string;
          }>
        ).map((row) => [row.id, row.name]);

      beforeAll(async () => {
        companies = await discoverIds(server, 'res.partner', [['is_company', '=', true]], 4);
        domain = [['id', 'in', companies]];
      });

      it('search_read: params [domain] + keyword {fields, limit, offset, order} = kwargs {domain, fields, limit, offset, order}', async () => {
        const keyword = { fields: ['name', 'email', 'country_id'], limit: 2, offset: 1, order: 'id desc' };
        const a = await v1({ action: 'search_read', params: [domain], keyword });
        expect(a).toEqual(await v2('search_read', { domain, ...keyword }));
        expect((a as Array<{ id: number }>).map((row) => row.id)).toEqual(
          [...companies].reverse().slice(1, 3),
        );
      });

      it('search: params [domain] = kwargs {domain, limit, offset, order}', async () => {
        const keyword = { limit: 2, offset: 1, order: 'id asc' };
        const a = await v1({ action: 'search', params: [domain], keyword });
        expect(a).toEqual(await v2('search', { domain, ...keyword }));
        expect(a).toEqual(companies.slice(1, 3));
      });

      it('search_count: params [domain] = kwargs {domain}', async () => {
        const a = await v1({ action: 'search_count', params: [domain] });
        expect(a).toEqual(await v2('search_count', { domain }));
        expect(a).toBe(companies.length);
      });

      it('read: params [ids, fields] = kwargs {ids, fields}', async () => {
        const fields = ['name', 'country_id', 'is_company', 'create_date'];
        const a = await v1({ action: 'read', params: [companies, fields] });
        expect(a).toEqual(await v2('read', { ids: companies, fields }));
        expect((a as Array<{ id: number }>).map((row) => row.id)).toEqual(companies);
      });

      it('fields_get: keyword {attributes} = kwargs {attributes, allfields}', async () => {
        const a = await v1({ action: 'fields_get', keyword: { attributes: ['type', 'string'] } });
        expect(a).toEqual(await v2('fields_get', { attributes: ['type', 'string'] }));
        const some = { allfields: ['name', 'email'], attributes: ['type', 'string'] };
        const b = await v1({ action: 'fields_get', keyword: some });
        expect(b).toEqual(await v2('fields_get', some));
        expect(Object.keys(b as object).sort()).toEqual(['email', 'name']);
      });

      it('create: params [vals] gives a bare id, kwargs {vals_list: [vals]} a list of ids', async () => {
        const name = liveName('table create');
        const a = await v1({ action: 'create', params: [{ name }] });
        cleanup.track('res.partner', a);
        const b = await v2('create', { vals_list: [{ name }] });
        cleanup.track('res.partner', b);
        expect(Number.isInteger(a)).toBe(true);
        expect(Array.isArray(b) && b.length === 1 && Number.isInteger(b[0])).toBe(true);
        expect(await names([a, ...(b as number[])])).toEqual([
          [a, name],
          [(b as number[])[0], name],
        ]);
      });

      it('write: params [ids, vals] = kwargs {ids, vals}', async () => {
        const [first, second] = await cleanup.create('res.partner', [
          { name: liveName('table write 1') },
          { name: liveName('table write 2') },
        ]);
        expect(await v1({ action: 'write', params: [[first], { name: 'Written by v1' }] })).toBe(true);
        expect(await v2('write', { ids: [second], vals: { name: 'Written by v2' } })).toBe(true);
        expect(await names([first, second])).toEqual([
          [first, 'Written by v1'],
          [second, 'Written by v2'],
        ]);
      });

      it('unlink: params [ids] = kwargs {ids}', async () => {
        const [first, second] = await cleanup.create('res.partner', [
          { name: liveName('table unlink 1') },
          { name: liveName('table unlink 2') },
        ]);
        expect(await v1({ action: 'unlink', params: [[first]] })).toBe(true);
        expect(await v2('unlink', { ids: [second] })).toBe(true);
        expect(await names([first, second])).toEqual([]);
      });

      it('call_method: fn_name + params = method + named kwargs (ids only for record methods)', async () => {
        const [company] = (await erpResult(server, 'res.partner', 'read', {
          ids: [companies[0]],
          fields: ['name'],
        })) as Array<{
          name: string;
        }>;
        const word = String(company?.name).split(/\s+/)[0] ?? '';
        const a = await v1({ action: 'call_method', fn_name: 'name_search', params: [word, domain] });
        // Odoo 19 renamed name_search's `args` to `domain` (v2 names are the ERP's own).
        expect(a).toEqual(
          await v2('name_search', { name: word, [server.json2 ? 'domain' : 'args']: domain }),
        );
        expect((a as unknown[][]).map((pair) => pair[0])).toContain(companies[0]);

        const [first, second] = await cleanup.create('res.partner', [
          { name: liveName('table archive 1') },
          { name: liveName('table archive 2') },
        ]);
        expect(await v1({ action: 'call_method', fn_name: 'action_archive', params: [[first]] })).toBeNull();
        expect(await v2('action_archive', { ids: [second] })).toBeNull();
        expect(await v2('search_count', { domain: [['id', 'in', [first, second]]] })).toBe(0);
      });

      it('keyword.context = kwargs.context', async () => {
        const [id] = await cleanup.create('res.partner', [
          { name: liveName('table context'), active: false },
        ]);
        const context = { active_test: false };
        const idDomain = [['id', '=', id]];
        expect(await v1({ action: 'search_count', params: [idDomain], keyword: { context } })).toBe(1);
        expect(await v2('search_count', { domain: idDomain, context })).toBe(1);
        expect(await v1({ action: 'search_count', params: [idDomain] })).toBe(0);
        expect(await v2('search_count', { domain: idDomain })).toBe(0);
      });
    },
  );
});
