/**
 * The README's "From v1 to v2" table as a test matrix: every row runs once through v1
 * and once through v2 against the same ERP double (ERP 19 speaks both), and the answers agree,
 * allowing for the documented difference (v1 `create` from one dict returns a bare id, v2 a list).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { type Envelope, USERS, useErpAndProxy } from '../support/fixtures.ts';

const admin = USERS.adminA;

describe('v1 → v2 translation table', () => {
  const { double, proxy } = useErpAndProxy({ mode: '19' });
  beforeEach(() => double.reset());

  const v1 = async (body: Record<string, unknown>): Promise<unknown> => {
    const answer = await proxy.post('/api/erp/execute', {
      id: 'v1',
      model_id: 'res.partner',
      erp_instance: { url: double.url, db: 'erp_a', user_id: admin.uid, api_key: admin.apiKey },
      ...body,
    });
    const envelope = answer.json as Envelope;
    expect(envelope.error).toBeNull();
    return envelope.result;
  };
  const v2 = async (method: string, kwargs: Record<string, unknown>): Promise<unknown> => {
    const answer = await proxy.post('/v2/erp/execute', {
      id: 'v2',
      model_id: 'res.partner',
      method,
      kwargs,
      erp_instance: { url: double.url, db: 'erp_a', api_key: admin.apiKey },
    });
    const envelope = answer.json as Envelope;
    expect(envelope.error).toBeNull();
    return envelope.result;
  };

  const domain = [['is_company', '=', true]];

  it('search_read: params [domain] + keyword {fields, limit, offset, order} = kwargs {domain, fields, limit, offset, order}', async () => {
    const keyword = { fields: ['name', 'email'], limit: 2, offset: 1, order: 'name desc' };
    const a = await v1({ action: 'search_read', params: [domain], keyword });
    const b = await v2('search_read', { domain, ...keyword });
    expect(a).toEqual(b);
    expect((a as unknown[]).length).toBe(2);
  });

  it('search: params [domain] = kwargs {domain, limit, offset, order}', async () => {
    const keyword = { limit: 3, offset: 0, order: 'id desc' };
    const a = await v1({ action: 'search', params: [domain], keyword });
    const b = await v2('search', { domain, ...keyword });
    expect(a).toEqual(b);
  });

  it('search_count: params [domain] = kwargs {domain}', async () => {
    expect(await v1({ action: 'search_count', params: [domain] })).toEqual(
      await v2('search_count', { domain }),
    );
  });

  it('read: params [ids, fields] = kwargs {ids, fields}', async () => {
    const ids = (await v1({ action: 'search', params: [[]], keyword: { limit: 3 } })) as number[];
    const a = await v1({ action: 'read', params: [ids, ['name', 'country_id']] });
    const b = await v2('read', { ids, fields: ['name', 'country_id'] });
    expect(a).toEqual(b);
    expect((a as unknown[]).length).toBe(ids.length);
  });

  it('fields_get: keyword {attributes} = kwargs {attributes, allfields}', async () => {
    const a = await v1({
      action: 'fields_get',
      keyword: { allfields: ['name', 'email'], attributes: ['type', 'string'] },
    });
    const b = await v2('fields_get', { allfields: ['name', 'email'], attributes: ['type', 'string'] });
    expect(a).toEqual(b);
    expect(Object.keys(a as object).sort()).toEqual(['email', 'name']);
  });

  it('create: params [vals] gives a bare id; kwargs {vals_list: [vals]} gives a list of ids', async () => {
    const a = await v1({ action: 'create', params: [{ name: 'Matrix one' }] });
    const b = await v2('create', { vals_list: [{ name: 'Matrix one' }] });
    expect(Number.isInteger(a)).toBe(true);
    expect(Array.isArray(b)).toBe(true);
    expect((b as unknown[]).length).toBe(1);
    const readA = await v2('read', { ids: [a], fields: ['name'] });
    const readB = await v2('read', { ids: b, fields: ['name'] });
    expect((readA as Array<{ name: string }>)[0]?.name).toBe((readB as Array<{ name: string }>)[0]?.name);
  });

  it('write: params [ids, vals] = kwargs {ids, vals}', async () => {
    const [first, second] = (await v1({ action: 'search', params: [[]], keyword: { limit: 2 } })) as number[];
    expect(await v1({ action: 'write', params: [[first], { name: 'Written v1' }] })).toBe(true);
    expect(await v2('write', { ids: [second], vals: { name: 'Written v2' } })).toBe(true);
    const names = (await v2('read', { ids: [first, second], fields: ['name'] })) as Array<{ name: string }>;
    expect(names.map((r) => r.name)).toEqual(['Written v1', 'Written v2']);
  });

  it('unlink: params [ids] = kwargs {ids}', async () => {
    const [first, second] = (await v1({ action: 'search', params: [[]], keyword: { limit: 2 } })) as number[];
    expect(await v1({ action: 'unlink', params: [[first]] })).toBe(true);
    expect(await v2('unlink', { ids: [second] })).toBe(true);
    expect(await v2('read', { ids: [first, second], fields: ['name'] })).toEqual([]);
  });

  it('call_method: fn_name + params = method + named kwargs (ids only for record methods)', async () => {
    const a = await v1({ action: 'call_method', fn_name: 'name_search', keyword: { name: 'a', limit: 5 } });
    const b = await v2('name_search', { name: 'a', limit: 5 });
    expect(a).toEqual(b);

    const [first, second] = (await v1({ action: 'search', params: [[]], keyword: { limit: 2 } })) as number[];
    expect(await v1({ action: 'call_method', fn_name: 'action_archive', params: [[first]] })).toBeNull();
    expect(await v2('action_archive', { ids: [second] })).toBeNull();
  });

  it('keyword.context = kwargs.context', async () => {
    const [id] = (await v1({ action: 'search', params: [[]], keyword: { limit: 1 } })) as number[];
    await v2('action_archive', { ids: [id] });
    const context = { active_test: false };
    const a = await v1({ action: 'search_count', params: [[['id', '=', id]]], keyword: { context } });
    const b = await v2('search_count', { domain: [['id', '=', id]], context });
    expect(a).toBe(1);
    expect(b).toBe(1);
    expect(await v2('search_count', { domain: [['id', '=', id]] })).toBe(0);
  });
});
