/**
 * Rules that hold against a hostile caller (issue 54) over real HTTP: the local server in front of
 * the ERP double, on ERP 19 (v1 over JSON-2) and 17 (v2 over `/jsonrpc`), so both bridges carry
 * the calls. Each spelling Odoo reads and the old parser did not is refused before the ERP (the
 * double saw no request of it) on v1, v2 and MCP, and the same request sent with a key without
 * the rule reaches the ERP (the control). A confirming key's form, with the real MCP client SDK,
 * shows the context and escapes what does not show as itself; a context or a value it could not
 * show is refused before anyone is asked.
 */
import { describe, expect, it } from 'vitest';
import { FIELDS_GET_KWARGS } from '../../lambdas/core/policy/erp-fields.ts';
import type { ErpDouble } from '../erp-double/types.ts';
import { type Envelope, executeCalls, USERS, useErpAndProxy } from '../support/fixtures.ts';
import {
  erpHeaders,
  isError,
  json,
  toolError,
  withConfirmingClient,
  withMcpClient,
} from '../support/mcp-client.ts';

const admin = USERS.adminA;

const KEYS = {
  plain: 'hostile-plain-0123456789abcdef',
  reader: 'hostile-reader-0123456789abcdef',
  contacts: 'hostile-contacts-0123456789abcdef',
  allowing: 'hostile-allowing-0123456789abcdef',
  scoped: 'hostile-scoped-0123456789abcdef',
  confirming: 'hostile-confirming-0123456789abcdef',
} as const;

const PROXY_API_KEYS = JSON.stringify({
  keys: [
    { name: 'plain', key: KEYS.plain },
    { name: 'reader', key: KEYS.reader, policy: { access: 'read' } },
    { name: 'contacts', key: KEYS.contacts, policy: { fields: { 'res.partner': { deny: ['email'] } } } },
    { name: 'allowing', key: KEYS.allowing, policy: { fields: { 'res.partner': { allow: ['name'] } } } },
    { name: 'scoped', key: KEYS.scoped, policy: { companies: { erp_a: [1] } } },
    { name: 'confirming', key: KEYS.confirming, policy: { confirm: 'writes' } },
  ],
});

/** The caller's requests the double received since `before` (the proxy's own version and field lookups left out). */
function callsSince(double: ErpDouble, before: number) {
  return double.requests
    .slice(before)
    .filter(
      (request) =>
        !request.path.startsWith('/web/') &&
        !request.path.startsWith('/doc-bearer/') &&
        !request.body.includes('"service":"common"') &&
        !(request.body.includes('fields_get') && request.body.includes('"related"')) &&
        !(request.path.endsWith('/fields_get') && request.body === FIELDS_GET_KWARGS),
    );
}

describe.each(['19', '17'] as const)('rules that hold against a hostile caller, ERP %s', (mode) => {
  const { double, proxy } = useErpAndProxy(
    { mode },
    {
      env: {
        PROXY_API_KEY: '',
        PROXY_API_KEYS,
        MCP_WRITE_TOOLS: 'true',
        ERP_V1_TRANSPORT: 'json2',
        ERP_V2_TRANSPORT: 'auto',
      },
    },
  );
  const instance = () => ({ url: double.url, db: 'erp_a', api_key: admin.apiKey, user_id: admin.uid });
  const calls = executeCalls(proxy, instance, 'hostile');
  const headers = (key: string) => ({
    'x-api-key': key,
    ...erpHeaders({ url: double.url, db: 'erp_a', apiKey: admin.apiKey, uid: admin.uid }),
  });

  /** Sends `send` as `key` and as the plain key: refused before the ERP, and reaching it without the rule. */
  async function refusedWithControl(
    key: string,
    send: (key: string) => Promise<{ status: number; envelope: Envelope; text: string }>,
    message: RegExp,
  ): Promise<void> {
    const before = double.requests.length;
    const refused = await send(key);
    expect(refused.status, refused.text).toBe(403);
    expect(refused.envelope.error?.code).toBe(-32008);
    expect(refused.envelope.error?.message).toMatch(message);
    expect(callsSince(double, before)).toEqual([]);
    const control = await send(KEYS.plain);
    expect(control.status, control.text).not.toBe(403);
    expect(callsSince(double, before).length, control.text).toBeGreaterThan(0);
  }

  it('export columns Odoo rewrites: email.id, email:id, email/anything (v1 and v2)', async () => {
    for (const column of ['email.id', 'email:id', 'email/country_id']) {
      await refusedWithControl(
        KEYS.contacts,
        (key) =>
          calls.v2(key, {
            model_id: 'res.partner',
            method: 'export_data',
            kwargs: { ids: [7], fields_to_export: [column] },
          }),
        /field email of res\.partner is denied|asks for external ids/,
      );
      await refusedWithControl(
        KEYS.contacts,
        (key) =>
          calls.v1(key, {
            action: 'call_method',
            fn_name: 'export_data',
            model_id: 'res.partner',
            params: [[7]],
            keyword: { fields_to_export: [column] },
          }),
        /field email of res\.partner is denied|asks for external ids/,
      );
    }
  });

  it('export_data asking for external ids is a write: a read-only key is refused', async () => {
    await refusedWithControl(
      KEYS.reader,
      (key) =>
        calls.v2(key, {
          model_id: 'res.partner',
          method: 'export_data',
          kwargs: { ids: [7], fields_to_export: ['id'] },
        }),
      /this "?export_data"? call writes/,
    );
  });

  it('a having aggregate and an order by aggregate read the denied field', async () => {
    for (const kwargs of [
      { domain: [], groupby: ['name'], having: [['email:max', '>', 'm']] },
      { domain: [], groupby: ['name'], order: 'email:max desc' },
    ])
      await refusedWithControl(
        KEYS.contacts,
        (key) => calls.v2(key, { model_id: 'res.partner', method: 'formatted_read_group', kwargs }),
        /field email of res\.partner is denied/,
      );
  });

  it('a context nested in a specification, and a context key the proxy does not read', async () => {
    const spec = { parent_id: { fields: { display_name: {} }, context: { show_email: true } } };
    await refusedWithControl(
      KEYS.contacts,
      (key) =>
        calls.v2(key, {
          model_id: 'res.partner',
          method: 'web_read',
          kwargs: { ids: [7], specification: spec },
        }),
      /show_email/,
    );
    await refusedWithControl(
      KEYS.contacts,
      (key) =>
        calls.v1(key, {
          action: 'create',
          model_id: 'res.partner',
          params: [{ name: 'Hostile' }],
          keyword: { context: { default_email: 'x@example.com' } },
        }),
      /context key "default_email" is not one the proxy reads/,
    );
  });

  it("a field carried by delegation: res.users' email is its partner's", async () => {
    await refusedWithControl(
      KEYS.contacts,
      (key) =>
        calls.v2(key, {
          model_id: 'res.users',
          method: 'read',
          kwargs: { ids: [admin.uid], fields: ['email'] },
        }),
      /field email of res\.users is denied/,
    );
    const all = await calls.v2(KEYS.contacts, {
      model_id: 'res.users',
      method: 'search_read',
      kwargs: { domain: [] },
    });
    expect(all.envelope.error, all.text).toBeNull();
    expect(all.text).not.toContain('"email":');
    const control = await calls.v2(KEYS.plain, {
      model_id: 'res.users',
      method: 'search_read',
      kwargs: { domain: [] },
    });
    expect(control.text).toContain('"email":');
  });

  it('an allow rule serves only its fields and id', async () => {
    const answer = await calls.v2(KEYS.allowing, {
      model_id: 'res.partner',
      method: 'search_read',
      kwargs: { domain: [], limit: 2 },
    });
    expect(answer.envelope.error, answer.text).toBeNull();
    for (const record of answer.envelope.result as Record<string, unknown>[])
      expect(Object.keys(record).sort()).toEqual(['id', 'name']);
    await refusedWithControl(
      KEYS.allowing,
      (key) =>
        calls.v2(key, {
          model_id: 'res.partner',
          method: 'search_count',
          kwargs: { domain: [['phone', '!=', false]] },
        }),
      /field phone of res\.partner is denied/,
    );
  });

  it('load and update carry values the company rule never reads: refused', async () => {
    await refusedWithControl(
      KEYS.scoped,
      (key) =>
        calls.v2(key, {
          model_id: 'res.partner',
          method: 'load',
          kwargs: { fields: ['.id', 'company_id/.id'], data: [['7', '2']] },
        }),
      /"load" takes values the proxy does not read/,
    );
    await refusedWithControl(
      KEYS.scoped,
      (key) =>
        calls.v2(key, {
          model_id: 'res.partner',
          method: 'update',
          kwargs: { ids: [7], values: { company_id: false } },
        }),
      /"update" takes values/,
    );
  });

  it('MCP: the same spellings are tool errors before the ERP', async () => {
    await withMcpClient(proxy.url, headers(KEYS.contacts), async (client) => {
      const before = double.requests.length;
      for (const call of [
        {
          name: 'search_read',
          arguments: { model: 'res.partner', fields: ['name'], context: { show_email: true } },
        },
        {
          name: 'call_method',
          arguments: {
            model: 'res.partner',
            method: 'export_data',
            ids: [7],
            kwargs: { fields_to_export: ['email.id'] },
          },
        },
        { name: 'read', arguments: { model: 'res.users', ids: [admin.uid], fields: ['email'] } },
      ]) {
        const error = toolError(await client.callTool(call));
        expect(error.code, JSON.stringify(call)).toBe(-32008);
      }
      expect(callsSince(double, before)).toEqual([]);
      const users = await client.callTool({
        name: 'search_read',
        arguments: { model: 'res.users', limit: 2 },
      });
      expect(isError(users)).toBe(false);
      expect(JSON.stringify(json(users))).not.toContain('"email":');
    });
  });

  it('a confirming key: a context the form would not show is refused before asking; the form shows the context, escaped', async () => {
    await withConfirmingClient(proxy.url, headers(KEYS.confirming), 'accept', async (client, forms) => {
      const before = double.requests.length;
      const refused = await client.callTool({
        name: 'create',
        arguments: { model: 'res.partner', values: { name: 'Form' }, context: { default_function: 'CEO' } },
      });
      expect(toolError(refused)).toMatchObject({ code: -32008 });
      expect(toolError(refused).message).toContain('default_function');
      const tooLong = await client.callTool({
        name: 'create',
        arguments: { model: 'res.partner', values: { name: 'Form', comment: 'x'.repeat(3000) } },
      });
      expect(toolError(tooLong).message).toMatch(/the value of "comment" is 3002 characters long/);
      expect(forms).toEqual([]);
      expect(callsSince(double, before)).toEqual([]);
      const created = await client.callTool({
        name: 'create',
        arguments: { model: 'res.partner', values: { name: 'Form\u202eevil' }, context: { lang: 'en_US' } },
      });
      expect(isError(created), JSON.stringify(created)).toBe(false);
      expect(forms).toHaveLength(1);
      const lines = (forms[0] ?? '').split('\n');
      expect(lines).toContain('  - "name": "Form\\u202eevil"');
      expect(lines).toContain('Context (the ERP reads these too):');
      expect(lines).toContain('  - "lang": "en_US"');
      expect(forms[0]).not.toContain('\u202e');
    });
  });
});
