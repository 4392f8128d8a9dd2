/**
 * v1 (`POST /api/erp/execute`) against the real ERP: each of the 9 actions, `call_method` with
 * positional arguments and with a method that returns None, `keyword.context`, and the ERP
 * errors the README lists (bare domain, wrong and expired key, access, unknown model, missing
 * record, validation). Read-only, or on records the file creates and deletes again.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { V1_DOMAIN_HINT } from '../../lambdas/core/v1-domain-hint.ts';
import {
  adminInstance,
  discoverIds,
  erpJsonRpc,
  erpResult,
  LIVE_SERVERS,
  liveName,
  type ProxyAnswer,
  partnerToSearch,
  remainingPartners,
  resultOf,
  useCleanup,
  useLiveProxy,
} from './live-env.ts';

/** The ERP error of a v1 answer: HTTP 200, code 0, the message of `data`, `data.name` the class. */
function v1Error(answer: ProxyAnswer): { name: unknown; message: string } {
  expect(answer.status).toBe(200);
  expect(answer.envelope.result).toBeNull();
  const error = answer.envelope.error;
  expect(error?.code).toBe(0);
  expect(error?.message).toBe(error?.data?.message);
  return { name: error?.data?.name, message: String(error?.message) };
}

describe.each(LIVE_SERVERS)('$label', (server) => {
  describe.skipIf(server.skipReason !== undefined)(server.title('v1 execute against the live ERP'), () => {
    const proxy = useLiveProxy(server);
    const cleanup = useCleanup(server);
    const { limited, expiredKey } = server;
    /** Three companies of the demo data, lowest id first. */
    let companies: number[] = [];

    beforeAll(async () => {
      companies = await discoverIds(server, 'res.partner', [['is_company', '=', true]], 3);
    });

    it('search_count, search, read, search_read and fields_get', async () => {
      // Prepare: a domain naming discovered records only, so parallel creates cannot change counts.
      const domain = [['id', 'in', companies]];

      // Act
      const count = resultOf(await proxy().v1({ action: 'search_count', params: [domain] }));
      const ids = resultOf(
        await proxy().v1({ action: 'search', params: [domain], keyword: { order: 'id desc', limit: 2 } }),
      );
      const read = resultOf(
        await proxy().v1({ action: 'read', params: [companies, ['name', 'is_company']] }),
      );
      const rows = resultOf(
        await proxy().v1({
          action: 'search_read',
          params: [domain],
          keyword: { fields: ['name'], offset: 1, order: 'id asc' },
        }),
      );
      const fields = resultOf(
        await proxy().v1({ action: 'fields_get', keyword: { allfields: ['name'], attributes: ['type'] } }),
      );

      // Assess
      expect(count).toBe(companies.length);
      expect(ids).toEqual([...companies].reverse().slice(0, 2));
      expect((read as Array<{ id: number; is_company: boolean }>).map((r) => [r.id, r.is_company])).toEqual(
        companies.map((id) => [id, true]),
      );
      expect((rows as Array<{ id: number }>).map((r) => r.id)).toEqual(companies.slice(1));
      expect(fields).toEqual({ name: { type: 'char' } });
    });

    it('create, write and unlink (a record of its own, deleted again)', async () => {
      const name = liveName('v1 create');
      const id = resultOf(await proxy().v1({ action: 'create', params: [{ name }] }));
      cleanup.track('res.partner', id);
      expect(Number.isInteger(id)).toBe(true);

      expect(
        resultOf(await proxy().v1({ action: 'write', params: [[id], { comment: 'written by v1' }] })),
      ).toBe(true);
      const [row] = (await erpResult(server, 'res.partner', 'read', {
        ids: [id],
        fields: ['name', 'comment'],
      })) as Array<{
        name: string;
        comment: string;
      }>;
      expect(row?.name).toBe(name);
      expect(row?.comment).toContain('written by v1');

      expect(resultOf(await proxy().v1({ action: 'unlink', params: [[id]] }))).toBe(true);
      expect(await remainingPartners(server, [id])).toEqual([]);
    });

    it('call_method with positional arguments (name_search)', async () => {
      // Prepare: a discovered company and the first word of its name.
      const company = await partnerToSearch(server, companies[0]);
      const { word } = company;

      // Act: name_search(name, domain), both positional.
      const found = resultOf(
        await proxy().v1({
          action: 'call_method',
          fn_name: 'name_search',
          params: [word, [['id', '=', company?.id]]],
        }),
      );

      // Assess
      expect(found).toEqual([[company?.id, company?.display_name]]);
    });

    it('call_method with a method that returns None: result null (the ERP sends no result member)', async () => {
      // onchange_parent_id returns None for a partner without a parent, and writes nothing.
      const [partner] = await discoverIds(server, 'res.partner', [['parent_id', '=', false]], 1);
      const direct = await erpJsonRpc(server, 'object', 'execute_kw', [
        server.db,
        server.uid,
        server.key,
        'res.partner',
        'onchange_parent_id',
        [[partner]],
      ]);
      expect(direct).toEqual({ jsonrpc: '2.0', id: 1 });

      const answer = await proxy().v1({
        action: 'call_method',
        fn_name: 'onchange_parent_id',
        params: [[partner]],
      });
      expect(resultOf(answer)).toBeNull();
    });

    it('call_method action_archive / action_unarchive return None as well, on a record of its own', async () => {
      const [id] = await cleanup.create('res.partner', [{ name: liveName('v1 archive') }]);
      const archived = await proxy().v1({ action: 'call_method', fn_name: 'action_archive', params: [[id]] });
      expect(resultOf(archived)).toBeNull();
      const active = async () =>
        (
          (await erpResult(server, 'res.partner', 'read', {
            ids: [id],
            fields: ['active'],
            context: { active_test: false },
          })) as Array<{ active: boolean }>
        )[0]?.active;
      expect(await active()).toBe(false);
      const restored = await proxy().v1({
        action: 'call_method',
        fn_name: 'action_unarchive',
        params: [[id]],
      });
      expect(resultOf(restored)).toBeNull();
      expect(await active()).toBe(true);
    });

    it('keyword.context reaches the ERP (active_test: false finds an archived record)', async () => {
      const [id] = await cleanup.create('res.partner', [{ name: liveName('v1 context'), active: false }]);
      const domain = [['id', '=', id]];
      expect(resultOf(await proxy().v1({ action: 'search_count', params: [domain] }))).toBe(0);
      expect(
        resultOf(
          await proxy().v1({
            action: 'search_count',
            params: [domain],
            keyword: { context: { active_test: false } },
          }),
        ),
      ).toBe(1);
    });

    it('a bare domain (not wrapped once more) is the ERP error of the captures, with the v1 hint', async () => {
      const answer = await proxy().v1({ action: 'search', params: [['is_company', '=', true]] });
      // Odoo 19's Domain class names the bad item; 16-18 index into it (odoo/osv/expression.py).
      const erp = server.json2
        ? { name: 'builtins.ValueError', message: 'Domain() invalid item in domain: True' }
        : { name: 'builtins.TypeError', message: "'bool' object is not subscriptable" };
      expect(answer.status).toBe(200);
      expect(answer.envelope.error?.code).toBe(0);
      expect(answer.envelope.error?.data).toMatchObject(erp);
      // The ERP's message, and the hint on how v1 wraps the domain (lambdas/core/v1-domain-hint.ts).
      expect(answer.envelope.error?.message).toBe(`${erp.message} (${V1_DOMAIN_HINT})`);
    });

    it('one bare condition as params is the ERP error too, with the v1 hint', async () => {
      const answer = await proxy().v1({ action: 'search_read', params: ['is_company', '=', true] });
      const error = answer.envelope.error;
      expect(error?.code).toBe(0);
      expect(error?.data?.name).toBe(server.json2 ? 'builtins.TypeError' : 'builtins.AssertionError');
      expect(error?.message).toBe(`${String(error?.data?.message)} (${V1_DOMAIN_HINT})`);
    });

    it('a wrong key is the ERP AccessDenied', async () => {
      const answer = await proxy().v1(
        { action: 'search_count', params: [[]] },
        { ...adminInstance(server), api_key: 'not-a-valid-key-0000000000000000' },
      );
      expect(v1Error(answer)).toEqual({ name: 'odoo.exceptions.AccessDenied', message: 'Access Denied' });
    });

    it('an unknown database is the ERP error, naming the database and not the database server', async () => {
      const db = `erp_proxy_no_such_db_${process.pid}`;
      const answer = await proxy().v1(
        { action: 'search_count', params: [[]] },
        { ...adminInstance(server), db },
      );
      expect(v1Error(answer)).toEqual({
        name: 'psycopg2.OperationalError',
        message: `database "${db}" does not exist`,
      });
      // Nowhere in the answer (arguments, traceback): PostgreSQL's host, port or socket.
      expect(answer.raw.text).not.toMatch(/connection to server|port \d{2,5}|FATAL:/);
      expect(answer.envelope.error?.data?.arguments).toEqual([`database "${db}" does not exist`]);
    });

    it.skipIf(!expiredKey)(
      `an expired key is the ERP AccessDenied${server.optionalSkip('EXPIRED_KEY')}`,
      async () => {
        const answer = await proxy().v1(
          { action: 'search_count', params: [[]] },
          { ...adminInstance(server), api_key: expiredKey ?? '' },
        );
        expect(v1Error(answer)).toEqual({ name: 'odoo.exceptions.AccessDenied', message: 'Access Denied' });
      },
    );

    it.skipIf(!limited)(
      `the limited user creating a partner is the ERP AccessError${server.optionalSkip('LIMITED_UID', 'LIMITED_KEY')}`,
      async () => {
        const instance = {
          ...adminInstance(server),
          user_id: limited?.uid ?? 0,
          api_key: limited?.key ?? '',
        };
        // The limited user may read partners...
        expect(
          resultOf(
            await proxy().v1({ action: 'search_count', params: [[['id', '=', companies[0]]]] }, instance),
          ),
        ).toBe(1);
        // ...but not create one.
        const answer = await proxy().v1(
          { action: 'create', params: [{ name: liveName('v1 limited') }] },
          instance,
        );
        if (typeof answer.envelope.result === 'number') cleanup.track('res.partner', answer.envelope.result);
        const error = v1Error(answer);
        expect(error.name).toBe('odoo.exceptions.AccessError');
        expect(error.message).toContain("You are not allowed to create 'Contact' (res.partner) records.");
      },
    );

    it('an unknown model is the ERP UserError', async () => {
      const answer = await proxy().v1({ action: 'search_count', model_id: 'res.partnerx', params: [[]] });
      expect(v1Error(answer)).toEqual({
        name: 'odoo.exceptions.UserError',
        message: "Object res.partnerx doesn't exist",
      });
    });

    it('a deleted record: read gives [], write is the ERP MissingError', async () => {
      const [id] = await cleanup.create('res.partner', [{ name: liveName('v1 missing') }]);
      await erpResult(server, 'res.partner', 'unlink', { ids: [id] });

      expect(resultOf(await proxy().v1({ action: 'read', params: [[id], ['name']] }))).toEqual([]);
      const error = v1Error(await proxy().v1({ action: 'write', params: [[id], { comment: 'gone' }] }));
      expect(error.name).toBe('odoo.exceptions.MissingError');
      expect(error.message).toContain(`res.partner(${id},)`);
    });

    it('a partner without a name is the ERP ValidationError (and nothing is created)', async () => {
      const answer = await proxy().v1({ action: 'create', params: [{ comment: liveName('v1 no name') }] });
      if (typeof answer.envelope.result === 'number') cleanup.track('res.partner', answer.envelope.result);
      expect(v1Error(answer)).toEqual({
        name: 'odoo.exceptions.ValidationError',
        message: 'The operation cannot be completed: Contacts require a name',
      });
    });
  });
});
