/**
 * `POST /mcp` and execute against the double's 20 and 21 modes (issue 42; README, "ERP 20 and
 * 21"): binary fields never read as content without `fields` (under both readings of what 20
 * does with them), `aggregate` working, a 16-19 `read_group` and `toggle_active` refused before
 * the ERP, and an `MCP`-scoped ERP key: the tools' advice names the scope, envelopes keep the
 * ERP's own error. ERP 19 alongside, to show what did not change.
 */
import { describe, expect, it } from 'vitest';
import { DOUBLE_USERS, type ErpDouble, type ErpMode } from '../erp-double/index.ts';
import { type Envelope, USERS, useErpAndProxy } from '../support/fixtures.ts';
import { erpHeaders as connectionHeaders, json, toolError, withMcpClient } from '../support/mcp-client.ts';
import { type ProxyHarness, TEST_PROXY_KEY } from '../support/proxy-harness.ts';

const admin = USERS.adminA;
/** An `MCP`-scoped key of the erp_a admin (Odoo 19.4+, odoo/odoo#268589). */
const MCP_SCOPED_KEY = 'c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3';
const users = [
  ...DOUBLE_USERS,
  { uid: 2, login: 'admin', apiKey: MCP_SCOPED_KEY, db: 'erp_a', scope: 'MCP' as const },
];

function headers(double: ErpDouble, apiKey = admin.apiKey): Record<string, string> {
  return {
    'x-api-key': TEST_PROXY_KEY,
    ...connectionHeaders({ url: double.url, db: 'erp_a', apiKey, uid: admin.uid }),
  };
}

/** Every binary value of `records`: a base64 text or an object holding `content`. */
function binaryContents(records: unknown): unknown[] {
  return (records as Record<string, unknown>[]).flatMap((record) =>
    ['image_1920', 'image_128']
      .map((name) => record[name])
      .filter(
        (value) =>
          (typeof value === 'string' && value.length > 100) ||
          (value !== null && typeof value === 'object' && 'content' in value),
      ),
  );
}

const READINGS = [
  ['20', 'object'],
  ['20', 'inline'],
  ['21', 'object'],
  ['21', 'inline'],
] as const;

describe.each(READINGS)('MCP read tools on ERP %s, binaries read as %s', (mode, binaries) => {
  const { double, proxy } = useErpAndProxy({ mode, binaries });

  it('without fields: every field but the binary ones (fields_get once), never their content', async () => {
    double.reset();
    await withMcpClient(proxy.url, headers(double), async (client) => {
      const found = json(
        await client.callTool({ name: 'search_read', arguments: { model: 'res.partner', limit: 100 } }),
      ) as Record<string, unknown>[];
      expect(found.length).toBeGreaterThan(10);
      expect(found.some((record) => record.id === 42)).toBe(true);
      expect(binaryContents(found)).toEqual([]);
      expect(found[0]).not.toHaveProperty('image_1920');
      expect(found[0]).toHaveProperty('name');
      const read = json(
        await client.callTool({ name: 'read', arguments: { model: 'res.partner', ids: [42] } }),
      );
      expect(binaryContents(read)).toEqual([]);
      expect((read as Record<string, unknown>[])[0]).toHaveProperty('display_name');
    });
    const fieldsGets = double.requests.filter((r) => r.path === '/json/2/res.partner/fields_get');
    expect(fieldsGets).toHaveLength(1);
    const searchRead = double.requests.find((r) => r.path === '/json/2/res.partner/search_read');
    const sent = JSON.parse(searchRead?.body ?? '{}') as { fields: string[]; context: unknown };
    expect(sent.fields).toContain('name');
    expect(sent.fields).not.toContain('image_128');
    expect(sent.context).toEqual({ bin_size: true });
  });

  it('a binary field named in fields comes back as the ERP gives it', async () => {
    await withMcpClient(proxy.url, headers(double), async (client) => {
      const [record] = json(
        await client.callTool({
          name: 'read',
          arguments: { model: 'res.partner', ids: [42], fields: ['image_128'] },
        }),
      ) as { image_128: unknown }[];
      if (binaries === 'object') expect(record?.image_128).toEqual({ filename: 'image_128', size: 316 });
      else expect(Buffer.from(String(record?.image_128), 'base64').length).toBe(316);
    });
  });
});

describe('MCP read tools on ERP 19: unchanged (bin_size, all fields, no fields_get)', () => {
  const { double, proxy } = useErpAndProxy({ mode: '19' });

  it('reads every field, binaries as their size', async () => {
    double.reset();
    await withMcpClient(proxy.url, headers(double), async (client) => {
      const [record] = json(
        await client.callTool({ name: 'read', arguments: { model: 'res.partner', ids: [42] } }),
      ) as Record<string, unknown>[];
      expect(record?.image_128).toBe('316.00 bytes');
    });
    expect(double.requests.some((r) => r.path.endsWith('/fields_get'))).toBe(false);
  });
});

describe.each(['20', '21'] as const)('MCP tools on ERP %s', (mode: ErpMode) => {
  const { double, proxy } = useErpAndProxy({ mode, users }, { env: { MCP_WRITE_TOOLS: 'true' } });

  it('aggregate works (formatted_read_group)', async () => {
    await withMcpClient(proxy.url, headers(double), async (client) => {
      const groups = json(
        await client.callTool({
          name: 'aggregate',
          arguments: { model: 'res.partner', domain: [['is_company', '=', true]], group_by: ['country_id'] },
        }),
      ) as { count: number }[];
      expect(groups.length).toBeGreaterThan(0);
      expect(groups.every((group) => typeof group.count === 'number' && group.count > 0)).toBe(true);
    });
  });

  it('call_method: read_group in its 16-19 form and toggle_active are refused before the ERP (-32600)', async () => {
    double.reset();
    await withMcpClient(proxy.url, headers(double), async (client) => {
      const oldForm = toolError(
        await client.callTool({
          name: 'call_method',
          arguments: {
            model: 'res.partner',
            method: 'read_group',
            args: [[], ['id:sum'], ['is_company']],
          },
        }),
      );
      expect(oldForm.code).toBe(-32600);
      expect(oldForm.message).toMatch(/16-19 form.*formatted_read_group/s);
      const toggle = toolError(
        await client.callTool({
          name: 'call_method',
          arguments: { model: 'res.partner', method: 'toggle_active', args: [[15]] },
        }),
      );
      expect(toggle.code).toBe(-32600);
      expect(toggle.message).toMatch(/action_archive.*action_unarchive/);
      // read_group's 20 form is served.
      const tuples = json(
        await client.callTool({
          name: 'call_method',
          arguments: { model: 'res.partner', method: 'read_group', args: [[], ['is_company'], ['__count']] },
        }),
      ) as unknown[][];
      expect(tuples.every((group) => group.length === 2)).toBe(true);
    });
    expect(double.requests.filter((r) => r.path.endsWith('/toggle_active'))).toEqual([]);
    expect(double.requests.filter((r) => r.path === '/json/2/res.partner/read_group')).toHaveLength(1);
  });

  it('an MCP-scoped ERP key: the advice names the rpc scope beside a wrong or expired key', async () => {
    await withMcpClient(proxy.url, headers(double, MCP_SCOPED_KEY), async (client) => {
      const error = toolError(
        await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } }),
      );
      expect(error).toMatchObject({ source: 'erp', code: 401, name: 'werkzeug.exceptions.Unauthorized' });
      expect(error.message).toBe('Invalid apikey');
      expect(error.retry).toMatch(/invalid, expired or revoked, or it is an API key of the MCP scope/);
      expect(error.retry).toMatch(/scope rpc \(not MCP\)/);
    });
  });

  it('envelopes keep the ERP’s own error for the same key', async () => {
    const answer = await v2(proxy, double, MCP_SCOPED_KEY);
    expect(answer.error?.code).toBe(401);
    expect(answer.error?.message).toBe('Invalid apikey');
    expect(answer.error?.data?.name).toBe('werkzeug.exceptions.Unauthorized');
    expect(JSON.stringify(answer.error)).not.toMatch(/scope/);
  });
});

describe('MCP on ERP 19: a refused key’s advice does not speak of scopes (19.0 has none)', () => {
  const { double, proxy } = useErpAndProxy({ mode: '19' });

  it('says invalid, expired or revoked only', async () => {
    await withMcpClient(proxy.url, headers(double, 'f'.repeat(40)), async (client) => {
      const error = toolError(
        await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } }),
      );
      expect(error.code).toBe(401);
      expect(error.retry).toMatch(/invalid, expired or revoked/);
      expect(error.retry).not.toMatch(/scope/);
    });
  });
});

async function v2(proxy: ProxyHarness, double: ErpDouble, apiKey: string): Promise<Envelope> {
  const answer = await proxy.post('/v2/erp/execute', {
    id: 'e20',
    model_id: 'res.partner',
    method: 'search_count',
    kwargs: { domain: [] },
    erp_instance: { url: double.url, db: 'erp_a', api_key: apiKey },
  });
  return answer.json as Envelope;
}
