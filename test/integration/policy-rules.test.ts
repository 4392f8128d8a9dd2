/**
 * The key policies' call rules (docs/policy-rules.md) over real HTTP: the local server in front of
 * the ERP double, on ERP 19 (JSON-2) and 17 (`/jsonrpc`), so both bridges carry the calls. A refused
 * call never reaches the ERP; an answer never carries a denied field, with and without `fields`; a
 * company-scoped key's calls reach the ERP with its `allowed_company_ids`; keys without these rules
 * are sent byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { type Envelope, USERS, useErpAndProxy } from '../support/fixtures.ts';
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
    { env: { PROXY_API_KEY: '', PROXY_API_KEYS, MCP_WRITE_TOOLS: 'true' } },
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
        expect(error.message).toContain("outside this key's companies");
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

  void ({} as Envelope);
});
