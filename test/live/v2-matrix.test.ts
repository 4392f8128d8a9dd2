/**
 * v2 (`POST /v2/erp/execute`) against the real ERP: the v1 operations by name, the ERP error
 * classes 401, 403, 404 and 422 with `error.data.name`, an unknown database (-32006), `user_id`
 * ignored, and the second database when ERP_LIVE_DB2/KEY2 are set. Read-only, or on records the
 * file creates and deletes again.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  discoverIds,
  EXPIRED_KEY,
  erpResult,
  LIMITED,
  LIVE,
  LIVE_SKIP_REASON,
  liveName,
  liveTitle,
  optionalSkip,
  type ProxyAnswer,
  partnerToSearch,
  remainingPartners,
  resultOf,
  SECOND_DB,
  useCleanup,
  useLiveProxy,
} from './live-env.ts';

/** The ERP error of a v2 answer: HTTP 200, code the ERP's status, `data` the ERP's error object. */
function v2Error(answer: ProxyAnswer): { code: number | undefined; name: unknown; message: string } {
  expect(answer.status).toBe(200);
  expect(answer.envelope.result).toBeNull();
  const error = answer.envelope.error;
  expect(error?.message).toBe(error?.data?.message);
  expect(Object.keys(error?.data ?? {})).toEqual(['name', 'message', 'arguments', 'context', 'debug']);
  return { code: error?.code, name: error?.data?.name, message: String(error?.message) };
}

describe.skipIf(LIVE_SKIP_REASON !== undefined)(liveTitle('v2 execute against the live ERP'), () => {
  const proxy = useLiveProxy();
  const cleanup = useCleanup();
  let companies: number[] = [];

  beforeAll(async () => {
    companies = await discoverIds('res.partner', [['is_company', '=', true]], 3);
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
    expect(resultOf(await proxy().v2('fields_get', { allfields: ['name'], attributes: ['type'] }))).toEqual({
      name: { type: 'char' },
    });
  });

  it('create (a list of ids), write and unlink, on records of its own', async () => {
    const name = liveName('v2 create');
    const ids = resultOf(await proxy().v2('create', { vals_list: [{ name }] }));
    cleanup.track('res.partner', ids);
    expect(Array.isArray(ids) && ids.length === 1 && Number.isInteger(ids[0])).toBe(true);

    expect(resultOf(await proxy().v2('write', { ids, vals: { comment: 'written by v2' } }))).toBe(true);
    const [row] = (await erpResult('res.partner', 'read', { ids, fields: ['name', 'comment'] })) as Array<{
      name: string;
      comment: string;
    }>;
    expect(row?.name).toBe(name);
    expect(row?.comment).toContain('written by v2');

    expect(resultOf(await proxy().v2('unlink', { ids }))).toBe(true);
    expect(await remainingPartners(ids)).toEqual([]);
  });

  it('any public method by name: name_search, and methods that return None (result null)', async () => {
    const company = await partnerToSearch(companies[0]);
    const { word } = company;
    expect(
      resultOf(await proxy().v2('name_search', { name: word, domain: [['id', '=', company?.id]] })),
    ).toEqual([[company?.id, company?.display_name]]);

    const [orphan] = await discoverIds('res.partner', [['parent_id', '=', false]], 1);
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
      { instance: { url: LIVE.url, db: LIVE.db, api_key: 'not-a-valid-key-0000000000000000' } },
    );
    expect(v2Error(answer)).toEqual({
      code: 401,
      name: 'werkzeug.exceptions.Unauthorized',
      message: 'Invalid apikey',
    });
  });

  it.skipIf(!EXPIRED_KEY)(`401: an expired key as well${optionalSkip('ERP_LIVE_EXPIRED_KEY')}`, async () => {
    const answer = await proxy().v2(
      'search_count',
      { domain: [] },
      { instance: { url: LIVE.url, db: LIVE.db, api_key: EXPIRED_KEY ?? '' } },
    );
    expect(v2Error(answer)).toEqual({
      code: 401,
      name: 'werkzeug.exceptions.Unauthorized',
      message: 'Invalid apikey',
    });
  });

  it('403: a private (@api.private) method is the ERP AccessError', async () => {
    const answer = await proxy().v2('lock_for_update', { ids: [companies[0]] });
    const error = v2Error(answer);
    expect(error.code).toBe(403);
    expect(error.name).toBe('odoo.exceptions.AccessError');
  });

  it.skipIf(!LIMITED)(
    `403: the limited user creating a partner is the ERP AccessError${optionalSkip('ERP_LIVE_LIMITED_KEY')}`,
    async () => {
      const answer = await proxy().v2(
        'create',
        { vals_list: [{ name: liveName('v2 limited') }] },
        { instance: { url: LIVE.url, db: LIVE.db, api_key: LIMITED?.key ?? '' } },
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
      message: "the model 'res.partnerx' does not exist",
    });

    const [id] = await cleanup.create('res.partner', [{ name: liveName('v2 missing') }]);
    await erpResult('res.partner', 'unlink', { ids: [id] });
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

  it('an unknown database is -32006 (v2 unavailable for that database)', async () => {
    const answer = await proxy().v2(
      'search_count',
      { domain: [] },
      { instance: { url: LIVE.url, db: `erp_proxy_no_such_db_${process.pid}`, api_key: LIVE.key } },
    );
    expect(answer.status).toBe(502);
    expect(answer.envelope.result).toBeNull();
    expect(answer.envelope.error?.code).toBe(-32006);
  });

  it('user_id in erp_instance is ignored: the key alone decides the user', async () => {
    const domain = [['id', 'in', companies]];
    const without = resultOf(await proxy().v2('search_read', { domain, fields: ['name'], order: 'id asc' }));
    const withOther = resultOf(
      await proxy().v2(
        'search_read',
        { domain, fields: ['name'], order: 'id asc' },
        { instance: { url: LIVE.url, db: LIVE.db, user_id: LIVE.uid + 987_654, api_key: LIVE.key } },
      ),
    );
    expect(withOther).toEqual(without);
    // The same call on v1 with that user_id is refused by the ERP: v1 does use it.
    const v1 = await proxy().v1(
      { action: 'search_count', params: [domain] },
      { url: LIVE.url, db: LIVE.db, user_id: LIVE.uid + 987_654, api_key: LIVE.key },
    );
    expect(v1.envelope.error?.code).toBe(0);
  });

  it.skipIf(!SECOND_DB)(
    `the second database: its own key works, the first database's key is 401${optionalSkip('ERP_LIVE_DB2', 'ERP_LIVE_KEY2')}`,
    async () => {
      const second = { url: LIVE.url, db: SECOND_DB?.db ?? '', api_key: SECOND_DB?.key ?? '' };
      const count = resultOf(await proxy().v2('search_count', { domain: [] }, { instance: second }));
      expect(Number.isInteger(count)).toBe(true);
      const wrong = v2Error(
        await proxy().v2('search_count', { domain: [] }, { instance: { ...second, api_key: LIVE.key } }),
      );
      expect([wrong.code, wrong.name]).toEqual([401, 'werkzeug.exceptions.Unauthorized']);
    },
  );
});
