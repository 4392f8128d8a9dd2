/**
 * The MCP tools on ERP 20 and later (issue 42; README, "ERP 20 and 21"): the read tools never
 * read a binary field's content without `fields`, the advice of an ERP 401 names the key's scope
 * from 19.4, and `aggregate` does not fall back to read_group's 16-19 form on 20+.
 */
import { describe, expect, it } from 'vitest';
import { erpFailure } from '../../lambdas/core/mcp/answers.ts';
import { type FieldSource, fieldsToRead, nonBinaryFields } from '../../lambdas/core/mcp/binary-fields.ts';
import { type ErpAccess, ErpCallError } from '../../lambdas/core/mcp/erp-access.ts';
import { keysHaveScopes } from '../../lambdas/core/mcp/key-scope.ts';
import { TOOLS } from '../../lambdas/core/mcp/tools.ts';
import type { ErpVersion } from '../../lambdas/upstream/erp-answer.ts';

const version = (info: ErpVersion['version_info'], text = String(info[0])): ErpVersion => ({
  version_info: info,
  version: text,
});

const PARTNER_FIELDS = {
  id: { type: 'integer' },
  name: { type: 'char' },
  image_1920: { type: 'binary' },
  image_128: { type: 'binary' },
  country_id: { type: 'many2one' },
};

/** An ERP access that answers `fields_get` and counts the calls, at `erpVersion`. */
function fieldSource(
  erpVersion: ErpVersion,
  target = 'http://erp-a.test/\nerp_a',
  denied?: ReadonlySet<string>,
) {
  const calls: { model: string; method: string; kwargs: Record<string, unknown> }[] = [];
  const source: FieldSource = {
    version: async () => erpVersion,
    targetKey: () => target,
    describe: async (model, kwargs) => {
      calls.push({ model, method: 'fields_get', kwargs });
      return { value: PARTNER_FIELDS };
    },
    deniedFields: async () => (denied === undefined ? undefined : (field: string) => denied.has(field)),
  };
  return { source, calls };
}

describe('binary fields: what the read tools ask for without fields', () => {
  it('names every field of a fields_get answer but the binary ones', () => {
    expect(nonBinaryFields(PARTNER_FIELDS)).toEqual(['id', 'name', 'country_id']);
    expect(nonBinaryFields(null)).toEqual([]);
    expect(nonBinaryFields([])).toEqual([]);
  });

  it.each([
    [[16, 0, 0, 'final', 0, ''], '16.0'],
    [[19, 0, 0, 'final', 0, ''], '19.0'],
    [['saas~19', 4, 0, 'final', 0, ''], 'saas~19.4'],
  ] as const)('ERP %j: all fields (bin_size gives the sizes), fields_get never asked', async (info, text) => {
    const { source, calls } = fieldSource(version(info, text));
    expect(await fieldsToRead(source, 'res.partner', undefined)).toBeUndefined();
    expect(calls).toEqual([]);
  });

  it.each(['20.0', '21.0', '22.0'])(
    'ERP %s: every field but the binary ones, read once per target, model and version',
    async (text) => {
      const major = Number(text.split('.')[0]);
      const erp = fieldSource(version([major, 0, 0, 'final', 0, ''], text), `http://erp-${text}/\nerp_a`);
      expect(await fieldsToRead(erp.source, 'res.partner', undefined)).toEqual(['id', 'name', 'country_id']);
      expect(await fieldsToRead(erp.source, 'res.partner', [])).toEqual(['id', 'name', 'country_id']);
      expect(erp.calls).toEqual([
        { model: 'res.partner', method: 'fields_get', kwargs: { attributes: ['type'] } },
      ]);
      // Another model, another target: asked again.
      await fieldsToRead(erp.source, 'res.users', undefined);
      const other = fieldSource(version([major, 0, 0, 'final', 0, ''], text), `http://other-${text}/\nerp_a`);
      await fieldsToRead(other.source, 'res.partner', undefined);
      expect(erp.calls).toHaveLength(2);
      expect(other.calls).toHaveLength(1);
    },
  );

  it("keeps the list per target, and takes each caller's denied fields out after it", async () => {
    const erp20 = version([20, 0, 0, 'final', 0, ''], '20.0');
    const target = 'http://erp-denied.test/\nerp_a';
    const reader = fieldSource(erp20, target, new Set(['country_id']));
    expect(await fieldsToRead(reader.source, 'res.partner', undefined)).toEqual(['id', 'name']);
    const other = fieldSource(erp20, target);
    expect(await fieldsToRead(other.source, 'res.partner', undefined)).toEqual(['id', 'name', 'country_id']);
    expect(other.calls).toEqual([]);
  });

  it('passes named fields as they are, binary ones included, on every version', async () => {
    for (const info of [
      [19, 0, 0, 'final', 0, ''],
      [20, 0, 0, 'final', 0, ''],
    ] as const) {
      const { source, calls } = fieldSource(version(info));
      expect(await fieldsToRead(source, 'res.partner', ['name', 'image_128'])).toEqual(['name', 'image_128']);
      expect(calls).toEqual([]);
    }
  });
});

describe('key scopes: the advice of an ERP 401', () => {
  it.each([
    [[19, 0, 0, 'final', 0, ''], false],
    [['saas~19', 3, 0, 'final', 0, ''], false],
    [['saas~19', 4, 0, 'final', 0, ''], true],
    [[19, 4, 0, 'final', 0, ''], true],
    [[20, 0, 0, 'final', 0, ''], true],
    [[21, 0, 0, 'final', 0, ''], true],
    [[18, 0, 0, 'final', 0, ''], false],
  ] as const)('ERP %j: keys have scopes: %s', (info, scoped) => {
    expect(keysHaveScopes(version(info))).toBe(scoped);
    const failure = erpFailure(
      401,
      'Invalid apikey',
      { name: 'werkzeug.exceptions.Unauthorized' },
      version(info),
    );
    expect(failure.retry).toMatch(/invalid, expired or revoked/);
    expect(/scope rpc \(not MCP\)/.test(failure.retry)).toBe(scoped);
    expect(failure.retryCanHelp).toBe(false);
    // The ERP's own error stays as it came.
    expect(failure.message).toBe('Invalid apikey');
    expect(failure.name).toBe('werkzeug.exceptions.Unauthorized');
  });

  it('without a version, and for other codes, the advice is as before', () => {
    expect(keysHaveScopes(undefined)).toBe(false);
    expect(erpFailure(401, 'x', {}).retry).not.toMatch(/scope/);
    expect(erpFailure(403, 'x', {}, version([20, 0, 0, 'final', 0, ''])).retry).not.toMatch(/scope/);
  });
});

describe('aggregate on ERP 20+', () => {
  const aggregate = TOOLS.find((tool) => tool.name === 'aggregate');
  const args = { model: 'res.partner', group_by: ['country_id'], aggregates: [], limit: 5 };

  it('keeps formatted_read_group and never falls back to read_group (its 20 form is another method)', async () => {
    const methods: string[] = [];
    const tool = aggregate as NonNullable<typeof aggregate>;
    const requests = await tool.declare(args as never, {
      version: async () => version([20, 0, 0, 'final', 0, ''], '20.0'),
      fieldsToRead: async (_model, given) => given,
    });
    // Declared: formatted_read_group alone.
    expect(requests.map((request) => request.method)).toEqual(['formatted_read_group']);
    const erp = {
      send: async (request: { readonly method: string }) => {
        methods.push(request.method);
        throw new ErpCallError(404, 'no such method', {});
      },
    } as unknown as ErpAccess;
    await expect(tool.run(args as never, erp, requests)).rejects.toBeInstanceOf(ErpCallError);
    expect(methods).toEqual(['formatted_read_group']);
  });
});
