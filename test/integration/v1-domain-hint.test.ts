/**
 * A v1 search whose `params` hold v2's domain (README, "Calling the proxy") is the ERP's error,
 * with its code and `data` as they came, and a hint on how v1 wraps the domain appended to its
 * message (lambdas/core/v1-domain-hint.ts lists the ERP messages that trigger it). Over HTTP,
 * against the ERP double (Odoo 19's messages) and its 18 mode.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { V1_DOMAIN_HINT } from '../../lambdas/core/v1-domain-hint.ts';
import { ERP_A_ADMIN_KEY, type ErpDouble, startErpDouble } from '../erp-double/index.ts';
import { type ProxyHarness, startProxy } from '../support/proxy-harness.ts';

let proxy: ProxyHarness;
let erp19: ErpDouble;
let erp18: ErpDouble;

beforeAll(async () => {
  erp19 = await startErpDouble({ port: 0 });
  erp18 = await startErpDouble({ port: 0, mode: '18' });
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy?.close();
  await erp19?.close();
  await erp18?.close();
});

function v1(erp: ErpDouble, action: string, params: unknown) {
  return proxy.post('/api/erp/execute', {
    id: 'h',
    action,
    model_id: 'res.partner',
    params,
    erp_instance: { url: erp.url, db: 'erp_a', user_id: 2, api_key: ERP_A_ADMIN_KEY },
  });
}

type Envelope = { error: { code: number; message: string; data: { name: string; message: string } } | null };

describe('v1: a domain sent as v2 writes it', () => {
  it.each(['search_read', 'search', 'search_count'])(
    '%s with "params": <v2 domain> keeps the ERP error and appends the hint',
    async (action) => {
      const answer = await v1(erp19, action, [['is_company', '=', true]]);
      const { error } = answer.json as Envelope;
      expect(answer.status).toBe(200);
      expect(error?.code).toBe(0);
      expect(error?.data.name).toBe('builtins.ValueError');
      expect(error?.message).toBe(`Domain() invalid item in domain: True (${V1_DOMAIN_HINT})`);
      // The ERP's own error object is untouched.
      expect(error?.data.message).toBe('Domain() invalid item in domain: True');
    },
  );

  it('ERP 18 (the double in its 18 mode): the same hint after its own message', async () => {
    const { error } = (await v1(erp18, 'search_read', [['is_company', '=', true]])).json as Envelope;
    expect(error?.code).toBe(0);
    expect(error?.message).toContain(V1_DOMAIN_HINT);
    expect(error?.message.startsWith(error.data.message)).toBe(true);
  });

  it('a single condition as params gets the hint too', async () => {
    const { error } = (await v1(erp19, 'search_read', ['is_company', '=', true])).json as Envelope;
    expect(error?.message).toContain(V1_DOMAIN_HINT);
    expect(error?.message.startsWith("Domain() invalid domain: 'is_company'")).toBe(true);
  });

  it('the wrapped domain works, and other errors get no hint', async () => {
    expect((await v1(erp19, 'search_count', [[['is_company', '=', true]]])).json).toMatchObject({
      error: null,
    });
    // A correct domain on a field that does not exist: the ERP's error alone.
    const unknown = (await v1(erp19, 'search_read', [[['no_such_field', '=', 1]]])).json as Envelope;
    expect(unknown.error?.message).not.toContain('v1 hint');
    // A domain that starts with an operator is a domain, not a mistake.
    const operator = (await v1(erp19, 'search_count', [['|', ['is_company', '=', true], ['id', '=', 1]]]))
      .json;
    expect(operator).toMatchObject({ error: null });
  });
});
