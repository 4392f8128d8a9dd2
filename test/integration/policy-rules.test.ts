/**
 * The key policies' call rules (docs/guide/policies.md, "Methods, fields and companies") over real HTTP: the local server in front of
 * the ERP double, on ERP 19 (JSON-2) and 17 (`/jsonrpc`), so both bridges carry the calls. A refused
 * call never reaches the ERP; an answer never carries a denied field, with and without `fields`; a
 * company-scoped key's calls reach the ERP with its `allowed_company_ids`; keys without these rules
 * are sent byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { type Envelope, executeCalls, USERS, useErpAndProxy } from '../support/fixtures.ts';
import { connectMcp, erpHeaders, isError, json, toolError } from '../support/mcp-client.ts';

const admin = USERS.adminA;

const KEYS = {
  contacts: 'contacts-key-0123456789abcdef',
  scoped: 'scoped-key-0123456789abcdef',
  support: 'support-key-0123456789abcdef',
  plain: 'plain-key-0123456789abcdef',
} as const;

const PROXY_API_KEYS = JSON.stringify({
  keys: [
    {
      name: 'contacts',
      key: KEYS.contacts,
      policy: { fields: { 'res.partner': { deny: ['email', 'phone'] } } },
    },
    { name: 'scoped', key: KEYS.scoped, policy: { companies: { erp_a: [1] } } },
    {
      name: 'support',
      key: KEYS.support,
      policy: { methods: { 'res.partner': ['search_read', 'read', 'write'], '*': ['search_count'] } },
    },
    { name: 'plain', key: KEYS.plain, policy: { access: 'write' } },
  ],
});

/** The bodies the double received since `before`, and whether any names `what`. */
function sentSince(double: { requests: { path: string; body: string }[] }, before: number) {
  return double.requests.slice(before).filter((request) => !request.path.startsWith('/web/'));
}

describe.each(['19', '17'] as const)('call rules over HTTP on ERP %s', (mode) => {
  const { double, proxy } = useErpAndProxy(
    { mode },
    {
      env: {
        PROXY_API_KEY: '',
        PROXY_API_KEYS,
        MCP_WRITE_TOOLS: 'true',
        // v1 over JSON-2 on ERP 19, v2 over /jsonrpc on ERP 17: both bridges carry the calls.
        ERP_V1_TRANSPORT: 'json2',
        ERP_V2_TRANSPORT: 'auto',
      },
    },
  );
  const instance = () => ({ url: double.url, db: 'erp_a', api_key: admin.apiKey, user_id: admin.uid });
  const headers = (key: string) => ({
    'x-api-key': key,
    ...erpHeaders({ ...instance(), apiKey: admin.apiKey, uid: admin.uid }),
  });

  it('MCP: the method rule refuses each ERP call of a tool outside the list, before the ERP', async () => {
    const { client } = await connectMcp(proxy.url, headers(KEYS.support));
    try {
      const before = double.requests.length;
      const refused = await client.callTool({
        name: 'call_method',
        arguments: { model: 'res.partner', method: 'unlink', ids: [7] },
      });
      expect(toolError(refused)).toMatchObject({
        code: -32008,
        message: "Refused by this key's policy: method unlink is not in this key's methods for res.partner",
      });
      const other = await client.callTool({
        name: 'search_read',
        arguments: { model: 'res.country', limit: 1 },
      });
      expect(toolError(other).message).toContain('method search_read is not in this key');
      expect(
        sentSince(double, before).filter((r) => r.body.includes('unlink') || r.path.includes('unlink')),
      ).toEqual([]);
      const allowed = await client.callTool({
        name: 'search_read',
        arguments: { model: 'res.partner', limit: 1, fields: ['name'] },
      });
      expect(isError(allowed)).toBe(false);
    } finally {
      await client.close();
    }
  });

  it('MCP: a denied field is refused where named, never reaches the ERP, and is absent from every answer', async () => {
    const { client } = await connectMcp(proxy.url, headers(KEYS.contacts));
    try {
      const before = double.requests.length;
      for (const args of [
        { name: 'search_read', arguments: { model: 'res.partner', fields: ['name', 'email'] } },
        { name: 'search_read', arguments: { model: 'res.partner', domain: [['phone', '!=', false]] } },
        { name: 'search_read', arguments: { model: 'res.partner', order: 'email desc' } },
        {
          name: 'search_count',
          arguments: { model: 'res.partner', domain: [['parent_id.email', '=', 'x']] },
        },
        {
          name: 'aggregate',
          arguments: { model: 'res.partner', group_by: ['name'], aggregates: ['email:count_distinct'] },
        },
        { name: 'write', arguments: { model: 'res.partner', ids: [7], values: { email: 'x@example.com' } } },
        { name: 'call_method', arguments: { model: 'res.partner', method: 'message_post', ids: [7] } },
      ]) {
        const error = toolError(await client.callTool(args));
        expect(error.code, JSON.stringify(args)).toBe(-32008);
        expect(error.message).toMatch(
          /field (email|phone) of res\.partner is denied|cannot see which fields message_post uses/,
        );
      }
      // The dotted path asked the ERP for res.partner's relations (the proxy's own lookup), nothing else.
      const sent = sentSince(double, before);
      expect(
        sent.every((request) => request.body.includes('fields_get') || request.path.includes('fields_get')),
      ).toBe(true);

      for (const args of [
        { name: 'search_read', arguments: { model: 'res.partner', limit: 5 } },
        {
          name: 'search_read',
          arguments: { model: 'res.partner', limit: 5, fields: ['name', 'country_id'] },
        },
        { name: 'read', arguments: { model: 'res.partner', ids: [7, 8] } },
      ]) {
        const answer = await client.callTool(args);
        expect(isError(answer)).toBe(false);
        const text = JSON.stringify(json(answer));
        expect(text).not.toMatch(/"email"|"phone"/);
        expect(text).toContain('"name"');
      }
      const fields = json(await client.callTool({ name: 'fields_get', arguments: { model: 'res.partner' } }));
      expect(JSON.stringify(fields)).not.toMatch(/"email"|"phone"/);
      expect(JSON.stringify(fields)).toContain('"country_id"');
    } finally {
      await client.close();
    }
  });

  it("MCP: a company-scoped key's calls carry its companies; widening is refused before the ERP", async () => {
    const { client } = await connectMcp(proxy.url, headers(KEYS.scoped));
    try {
      const before = double.requests.length;
      const answer = await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } });
      expect(isError(answer)).toBe(false);
      const sent = sentSince(double, before);
      expect(sent.length).toBeGreaterThan(0);
      expect(sent.some((request) => /"allowed_company_ids":\[1\]/.test(request.body))).toBe(true);
      const wider = double.requests.length;
      for (const context of [
        { allowed_company_ids: [1, 2] },
        { force_company: 2 },
        { default_company_id: false },
      ]) {
        const error = toolError(
          await client.callTool({ name: 'search_count', arguments: { model: 'res.partner', context } }),
        );
        expect(error.code).toBe(-32008);
        // At the policy step a context key outside the readable ones is refused as unread (issue 54).
        expect(error.message).toMatch(/outside this key's companies|is not one the proxy reads/);
      }
      const created = await client.callTool({
        name: 'create',
        arguments: { model: 'res.partner', values: { name: 'Shared', company_id: false } },
      });
      expect(toolError(created).message).toContain('company_id in the values');
      expect(double.requests.length).toBe(wider);
    } finally {
      await client.close();
    }
  });

  it('a key without these rules is sent byte for byte', async () => {
    const { client } = await connectMcp(proxy.url, headers(KEYS.plain));
    try {
      const before = double.requests.length;
      const answer = await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } });
      expect(isError(answer)).toBe(false);
      expect(sentSince(double, before).some((request) => request.body.includes('allowed_company_ids'))).toBe(
        false,
      );
    } finally {
      await client.close();
    }
  });

  const { v1, v2 } = executeCalls(proxy, instance, 'rules');

  /** A -32008 refusal of `rule` whose message matches `words`, with nothing sent to the ERP. */
  const expectRefused = async (
    call: () => Promise<{ status: number; text: string; envelope: Envelope }>,
    words: RegExp,
  ) => {
    const before = double.requests.length;
    const answer = await call();
    expect(answer.status, answer.text).toBe(403);
    expect(answer.envelope.error?.code).toBe(-32008);
    expect(answer.envelope.error?.message).toMatch(words);
    expect(answer.text).not.toContain(admin.apiKey);
    expect(sentSince(double, before).filter((request) => !request.body.includes('fields_get'))).toEqual([]);
  };

  it('execute: the method rule refuses on v1 (action and call_method) and v2, before the ERP', async () => {
    await expectRefused(
      () => v1(KEYS.support, { action: 'unlink', model_id: 'res.partner', params: [[7]] }),
      /method unlink is not in this key's methods for res\.partner/,
    );
    await expectRefused(
      () =>
        v1(KEYS.support, {
          action: 'call_method',
          fn_name: 'action_archive',
          model_id: 'res.partner',
          params: [[7]],
        }),
      /method action_archive is not/,
    );
    await expectRefused(
      () => v2(KEYS.support, { model_id: 'res.country', method: 'search_read', kwargs: {} }),
      /method search_read is not in this key's methods for res\.country/,
    );
    const allowed = await v2(KEYS.support, {
      model_id: 'res.country',
      method: 'search_count',
      kwargs: { domain: [] },
    });
    expect(allowed.envelope.error).toBeNull();
  });

  it('execute: a denied field named anywhere is refused on v1 and v2, before the ERP', async () => {
    const denied = /field (email|phone) of res\.partner is denied to this key/;
    await expectRefused(
      () =>
        v1(KEYS.contacts, {
          action: 'search_read',
          model_id: 'res.partner',
          params: [[], ['name', 'email']],
        }),
      denied,
    );
    await expectRefused(
      () =>
        v1(KEYS.contacts, { action: 'search_read', model_id: 'res.partner', keyword: { fields: ['phone'] } }),
      denied,
    );
    await expectRefused(
      () =>
        v1(KEYS.contacts, {
          action: 'search',
          model_id: 'res.partner',
          params: [[['parent_id.email', '=', 'x']]],
        }),
      denied,
    );
    await expectRefused(
      () =>
        v2(KEYS.contacts, {
          model_id: 'res.partner',
          method: 'search_read',
          kwargs: { domain: [], order: 'email' },
        }),
      denied,
    );
    await expectRefused(
      () =>
        v2(KEYS.contacts, {
          model_id: 'res.partner',
          method: 'write',
          kwargs: { ids: [7], vals: { phone: '1' } },
        }),
      denied,
    );
    await expectRefused(
      () =>
        v2(KEYS.contacts, {
          model_id: 'res.partner',
          method: 'read',
          kwargs: { ids: [7], context: { default_email: 'x' } },
        }),
      /context key "default_email" is not one the proxy reads/,
    );
    await expectRefused(
      () =>
        v2(KEYS.contacts, {
          model_id: 'res.partner',
          method: 'message_post',
          kwargs: { ids: [7], body: 'x' },
        }),
      /cannot see which fields message_post uses/,
    );
  });

  it('execute: answers never carry a denied field, with and without fields', async () => {
    const answers = [
      await v1(KEYS.contacts, {
        action: 'search_read',
        model_id: 'res.partner',
        params: [[]],
        keyword: { limit: 5 },
      }),
      await v1(KEYS.contacts, { action: 'read', model_id: 'res.partner', params: [[8, 9]] }),
      await v1(KEYS.contacts, {
        action: 'search_read',
        model_id: 'res.partner',
        keyword: { fields: ['name', 'country_id'], limit: 3 },
      }),
      await v2(KEYS.contacts, {
        model_id: 'res.partner',
        method: 'search_read',
        kwargs: { domain: [], limit: 5 },
      }),
      await v2(KEYS.contacts, { model_id: 'res.partner', method: 'read', kwargs: { ids: [9] } }),
    ];
    for (const answer of answers) {
      expect(answer.envelope.error, answer.text).toBeNull();
      expect(answer.text).not.toMatch(/"email"|"phone"/);
      expect(answer.text).toContain('"name"');
    }
    const full = await v2(KEYS.plain, { model_id: 'res.partner', method: 'read', kwargs: { ids: [9] } });
    expect(full.text).toContain('"email"');
    for (const answer of [
      await v1(KEYS.contacts, {
        action: 'fields_get',
        model_id: 'res.partner',
        keyword: { attributes: ['type'] },
      }),
      await v2(KEYS.contacts, {
        model_id: 'res.partner',
        method: 'fields_get',
        kwargs: { attributes: ['type'] },
      }),
    ]) {
      expect(answer.envelope.error, answer.text).toBeNull();
      expect(answer.text).not.toMatch(/"email"|"phone"/);
      expect(answer.text).toContain('"country_id"');
    }
  });

  it('execute: a company-scoped key runs with its companies on v1 and v2, and cannot widen them', async () => {
    for (const call of [
      () => v1(KEYS.scoped, { action: 'search_count', model_id: 'res.partner', params: [[]] }),
      () =>
        v1(KEYS.scoped, {
          action: 'search_count',
          model_id: 'res.partner',
          params: [[]],
          keyword: { context: { allowed_company_ids: [] } },
        }),
      () =>
        v2(KEYS.scoped, {
          model_id: 'res.partner',
          method: 'search_count',
          kwargs: { domain: [], context: { allowed_company_ids: false } },
        }),
    ]) {
      const before = double.requests.length;
      const answer = await call();
      expect(answer.envelope.error, answer.text).toBeNull();
      const sent = sentSince(double, before);
      expect(sent.some((request) => /"allowed_company_ids":\[1\]/.test(request.body))).toBe(true);
    }
    // A context key outside the readable ones is refused as unread before the company rule reads it (issue 54).
    const outside = /outside this key's companies|company_id in the values|is not one the proxy reads/;
    await expectRefused(
      () =>
        v1(KEYS.scoped, {
          action: 'search_count',
          model_id: 'res.partner',
          params: [[]],
          keyword: { context: { allowed_company_ids: [1, 2] } },
        }),
      outside,
    );
    await expectRefused(
      () =>
        v2(KEYS.scoped, {
          model_id: 'res.partner',
          method: 'search_count',
          kwargs: { context: { force_company: 2 } },
        }),
      outside,
    );
    await expectRefused(
      () =>
        v2(KEYS.scoped, {
          model_id: 'res.partner',
          method: 'create',
          kwargs: { vals_list: [{ name: 'x', company_id: false }] },
        }),
      outside,
    );
    await expectRefused(
      () => v1(KEYS.scoped, { action: 'write', model_id: 'res.partner', params: [[7], { company_id: 2 }] }),
      outside,
    );
    const otherDb = await proxy.post(
      '/v2/erp/execute',
      {
        id: 'db',
        erp_instance: { ...instance(), db: 'erp_b' },
        model_id: 'res.partner',
        method: 'search_count',
        kwargs: {},
      },
      { 'x-api-key': KEYS.scoped },
    );
    expect(otherDb.status).toBe(403);
    expect((otherDb.json as Envelope).error?.message).toContain(
      'database "erp_b" is not in this key\'s companies',
    );
  });
});
