/**
 * v2 (`POST /v2/erp/execute`) against each real ERP: the v1 operations by name, the ERP error
 * classes 401, 403, 404 and 422 with `error.data.name`, an unknown database, `user_id`, and the
 * second database when `*_DB2`/`*_KEY2` are set. On Odoo 19+ over JSON-2; on Odoo 16-18 with
 * `ERP_V2_TRANSPORT=auto`, over execute_kw, with the same assertions (the same codes and names
 * for the same failures), and with the default setting -32006. Read-only, or on records the file
 * creates and deletes again.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_PROXY_KEY } from '../support/proxy-harness.ts';
import {
  adminInstance,
  discoverIds,
  erpResult,
  LIVE_BEFORE_19,
  LIVE_SERVERS,
  liveName,
  type ProxyAnswer,
  partnerToSearch,
  remainingPartners,
  resultOf,
  useCleanup,
  useLiveProxy,
  v2Instance,
} from './live-env.ts';

/** The ERP error of a v2 answer: HTTP 200, code the ERP's status, `data` the ERP's error object. */
function v2Error(answer: ProxyAnswer): { code: number | undefined; name: unknown; message: string } {
  expect(answer.status).toBe(200);
  expect(answer.envelope.result).toBeNull();
  const error = answer.envelope.error;
  expect(error?.message).toBe(error?.data?.message);
  // Odoo 19 and 18 order the members differently; the members are the same.
  expect(Object.keys(error?.data ?? {}).sort()).toEqual(['arguments', 'context', 'debug', 'message', 'name']);
  return { code: error?.code, name: error?.data?.name, message: String(error?.message) };
}

describe.each(LIVE_SERVERS)('$label', (server) => {
  describe.skipIf(server.skipReason !== undefined)(server.title('v2 execute against the live ERP'), () => {
    const proxy = useLiveProxy(server);
    const cleanup = useCleanup(server);
    const { limited, expiredKey, secondDb } = server;
    let companies: number[] = [];

    beforeAll(async () => {
      companies = await discoverIds(server, 'res.partner', [['is_company', '=', true]], 3);
    });

    it('search_count, search, read, search_read and fields_get by name', async () => {
      const domain = [['id', 'in', companies]];
      expect(resultOf(await proxy().v2('search_count', { domain }))).toBe(companies.length);
      expect(resultOf(await proxy().v2('search', { domain, order: 'id desc', limit: 2 }))).toEqual(
        [...companies].reverse().slice(0, 2),
      );
      const read = resultOf(await proxy().v2('read', { ids: companies, fields: ['is_company'] }));
      expect((read as Array<{ id: number; is_company: boolean }>).map((r) => [r.id, r.is_company])).toEqual(
        companies.map((id) => [id, true]),
      );
      const rows = resultOf(
        await proxy().v2('search_read', { domain, fields: ['name'], offset: 1, order: 'id asc' }),
      );
      expect((rows as Array<{ id: number }>).map((r) => r.id)).toEqual(companies.slice(1));
      expect(resultOf(await proxy().v2('fields_get', { allfields: ['name'], attributes: ['type'] }))).toEqual(
        {
          name: { type: 'char' },
        },
      );
    });

    it('create (a list of ids), write and unlink, on records of its own', async () => {
      const name = liveName('v2 create');
      const ids = resultOf(await proxy().v2('create', { vals_list: [{ name }] }));
      cleanup.track('res.partner', ids);
      expect(Array.isArray(ids) && ids.length === 1 && Number.isInteger(ids[0])).toBe(true);

      expect(resultOf(await proxy().v2('write', { ids, vals: { comment: 'written by v2' } }))).toBe(true);
      const [row] = (await erpResult(server, 'res.partner', 'read', {
        ids,
        fields: ['name', 'comment'],
      })) as Array<{
        name: string;
        comment: string;
      }>;
      expect(row?.name).toBe(name);
      expect(row?.comment).toContain('written by v2');

      expect(resultOf(await proxy().v2('unlink', { ids }))).toBe(true);
      expect(await remainingPartners(server, ids)).toEqual([]);
    });

    it('any public method by name: name_search, and methods that return None (result null)', async () => {
      // Odoo 19 renamed name_search's `args` to `domain`; v2 passes names as the caller wrote them,
      // so on 16-18 the 19 name is what JSON-2 answers an unknown argument: 422.
      const domainArgument = server.json2 ? 'domain' : 'args';
      if (!server.json2) {
        const renamed = v2Error(await proxy().v2('name_search', { name: 'a', domain: [] }));
        expect([renamed.code, renamed.name]).toEqual([422, 'werkzeug.exceptions.UnprocessableEntity']);
      }
      const company = await partnerToSearch(server, companies[0]);
      const { word } = company;
      expect(
        resultOf(
          await proxy().v2('name_search', { name: word, [domainArgument]: [['id', '=', company?.id]] }),
        ),
      ).toEqual([[company?.id, company?.display_name]]);

      const [orphan] = await discoverIds(server, 'res.partner', [['parent_id', '=', false]], 1);
      expect(resultOf(await proxy().v2('onchange_parent_id', { ids: [orphan] }))).toBeNull();
      const [own] = await cleanup.create('res.partner', [{ name: liveName('v2 archive') }]);
      expect(resultOf(await proxy().v2('action_archive', { ids: [own] }))).toBeNull();
      // kwargs.context reaches the ERP: only active_test: false finds the archived record.
      expect(resultOf(await proxy().v2('search_count', { domain: [['id', '=', own]] }))).toBe(0);
      expect(
        resultOf(
          await proxy().v2('search_count', { domain: [['id', '=', own]], context: { active_test: false } }),
        ),
      ).toBe(1);
    });

    it('401: a wrong key is werkzeug Unauthorized', async () => {
      const answer = await proxy().v2(
        'search_count',
        { domain: [] },
        { instance: v2Instance(server, 'not-a-valid-key-0000000000000000') },
      );
      expect(v2Error(answer)).toEqual({
        code: 401,
        name: 'werkzeug.exceptions.Unauthorized',
        message: server.json2 ? 'Invalid apikey' : 'Access Denied',
      });
    });

    it.skipIf(!expiredKey)(`401: an expired key as well${server.optionalSkip('EXPIRED_KEY')}`, async () => {
      const answer = await proxy().v2(
        'search_count',
        { domain: [] },
        { instance: v2Instance(server, expiredKey ?? '') },
      );
      expect(v2Error(answer)).toEqual({
        code: 401,
        name: 'werkzeug.exceptions.Unauthorized',
        message: server.json2 ? 'Invalid apikey' : 'Access Denied',
      });
    });

    it('403: a private method is the ERP AccessError', async () => {
      // A leading underscore is private on every version; @api.private (lock_for_update) exists from 19.
      const methods = server.json2 ? ['_compute_display_name', 'lock_for_update'] : ['_compute_display_name'];
      for (const method of methods) {
        const error = v2Error(await proxy().v2(method, { ids: [companies[0]] }));
        expect([error.code, error.name], method).toEqual([403, 'odoo.exceptions.AccessError']);
      }
    });

    it.skipIf(!limited)(
      `403: the limited user creating a partner is the ERP AccessError${server.optionalSkip('LIMITED_UID', 'LIMITED_KEY')}`,
      async () => {
        const answer = await proxy().v2(
          'create',
          { vals_list: [{ name: liveName('v2 limited') }] },
          { instance: v2Instance(server, limited?.key ?? '', limited?.uid ?? 0) },
        );
        if (Array.isArray(answer.envelope.result)) cleanup.track('res.partner', answer.envelope.result);
        const error = v2Error(answer);
        expect([error.code, error.name]).toEqual([403, 'odoo.exceptions.AccessError']);
        expect(error.message).toContain("You are not allowed to create 'Contact' (res.partner) records.");
      },
    );

    it('404: an unknown model is werkzeug NotFound, a deleted record the ERP MissingError', async () => {
      const model = await proxy().v2('search_count', { domain: [] }, { model: 'res.partnerx' });
      expect(v2Error(model)).toEqual({
        code: 404,
        name: 'werkzeug.exceptions.NotFound',
        // The ERP's own message: JSON-2's, or execute_kw's (Odoo 16-18).
        message: server.json2
          ? "the model 'res.partnerx' does not exist"
          : "Object res.partnerx doesn't exist",
      });

      const [id] = await cleanup.create('res.partner', [{ name: liveName('v2 missing') }]);
      await erpResult(server, 'res.partner', 'unlink', { ids: [id] });
      expect(resultOf(await proxy().v2('read', { ids: [id], fields: ['name'] }))).toEqual([]);
      const missing = v2Error(await proxy().v2('write', { ids: [id], vals: { comment: 'gone' } }));
      expect([missing.code, missing.name]).toEqual([404, 'odoo.exceptions.MissingError']);
      expect(missing.message).toContain(`res.partner(${id},)`);
    });

    it('422: a partner without a name (ValidationError) and an unknown argument (UnprocessableEntity)', async () => {
      const invalid = await proxy().v2('create', { vals_list: [{ comment: liveName('v2 no name') }] });
      if (Array.isArray(invalid.envelope.result)) cleanup.track('res.partner', invalid.envelope.result);
      expect(v2Error(invalid)).toEqual({
        code: 422,
        name: 'odoo.exceptions.ValidationError',
        message: 'The operation cannot be completed: Contacts require a name',
      });

      const unknown = v2Error(await proxy().v2('search_count', { domain: [], no_such_argument: 1 }));
      expect([unknown.code, unknown.name]).toEqual([422, 'werkzeug.exceptions.UnprocessableEntity']);
      expect(unknown.message).toContain('no_such_argument');
    });

    it('an unknown database: -32006 over JSON-2 (it cannot select it), the ERP error over execute_kw', async () => {
      const answer = await proxy().v2(
        'search_count',
        { domain: [] },
        { instance: { ...v2Instance(server), db: `erp_proxy_no_such_db_${process.pid}` } },
      );
      if (server.json2) {
        expect(answer.status).toBe(502);
        expect(answer.envelope.result).toBeNull();
        expect(answer.envelope.error?.code).toBe(-32006);
      } else {
        // /jsonrpc reaches the database by its name and the ERP says it does not exist.
        expect(v2Error(answer)).toMatchObject({
          code: 500,
          name: 'psycopg2.OperationalError',
          message: `database "erp_proxy_no_such_db_${process.pid}" does not exist`,
        });
        expect(answer.raw.text).not.toMatch(/connection to server|port \d{2,5}|FATAL:/);
      }
    });

    it('user_id in erp_instance: ignored over JSON-2 (the key decides the user), checked over execute_kw', async () => {
      const domain = [['id', 'in', companies]];
      const other = { ...adminInstance(server), user_id: server.uid + 987_654 };
      const without = resultOf(
        await proxy().v2('search_read', { domain, fields: ['name'], order: 'id asc' }),
      );
      const withOther = await proxy().v2(
        'search_read',
        { domain, fields: ['name'], order: 'id asc' },
        { instance: other },
      );
      if (server.json2) expect(resultOf(withOther)).toEqual(without);
      // execute_kw reads that user, which does not exist (MissingError, as v1 on the same ERP).
      else expect(v2Error(withOther)).toMatchObject({ code: 404, name: 'odoo.exceptions.MissingError' });
      // The same call on v1 with that user_id is refused by the ERP: v1 does use it.
      const v1 = await proxy().v1({ action: 'search_count', params: [domain] }, other);
      expect(v1.envelope.error?.code).toBe(0);
    });

    it.skipIf(!secondDb)(
      `the second database: its own key works, the first database's key is 401${server.optionalSkip('DB2', 'KEY2')}`,
      async () => {
        const second = { ...v2Instance(server, secondDb?.key ?? ''), db: secondDb?.db ?? '' };
        const count = resultOf(await proxy().v2('search_count', { domain: [] }, { instance: second }));
        expect(Number.isInteger(count)).toBe(true);
        const wrong = v2Error(
          await proxy().v2('search_count', { domain: [] }, { instance: { ...second, api_key: server.key } }),
        );
        expect([wrong.code, wrong.name]).toEqual([401, 'werkzeug.exceptions.Unauthorized']);
      },
    );
  });
});

describe.each(LIVE_BEFORE_19)('$label', (server) => {
  describe.skipIf(server.skipReason !== undefined)(
    server.title('v2 with the default ERP_V2_TRANSPORT=json2: unavailable below 19'),
    () => {
      const proxy = useLiveProxy(server, { ERP_V2_TRANSPORT: 'json2' });

      it('is -32006 with user_id too (the spec: use v1), and the ERP is not called over execute_kw', async () => {
        const answer = await proxy().v2('search_count', { domain: [] });
        expect(answer.status).toBe(502);
        expect(answer.envelope.result).toBeNull();
        expect(answer.envelope.error?.code).toBe(-32006);
        const metrics = (await proxy().harness.get('/_/metrics', { 'x-api-key': TEST_PROXY_KEY })).text;
        expect(metrics).not.toMatch(/protocol="jsonrpc"\} [1-9]/);
      });
    },
  );
});
