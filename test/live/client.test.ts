/**
 * The client (`@erp-proxy/client`) against each real ERP, through a proxy with default settings:
 * the version and the API it chooses, every helper, `call`, the ERP errors and a proxy error. On
 * Odoo 19+ each case runs twice: as the client is (v2), and with the version answer lowered to 18
 * on its way to the client, so the same helpers run through the v1 translation against the same
 * ERP (which still serves /jsonrpc). On Odoo 16-18 the client picks v1 by itself. Writes only
 * records it creates and deletes again.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ErpError, ErpProxy, ErpProxyError } from '../../client/src/index.ts';
import { TEST_PROXY_KEY } from '../support/proxy-harness.ts';
import { discoverIds, LIVE_SERVERS, liveName, useCleanup, useLiveProxy } from './live-env.ts';

/** A `fetch` that lowers the major version in every version answer to `major`. */
function versionAs(major: number): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!String(input).endsWith('/api/erp/version')) return response;
    const envelope = (await response.json()) as { result: { version_info: unknown[]; version: string } };
    envelope.result.version_info[0] = major;
    envelope.result.version = `${major}.0`;
    return new Response(JSON.stringify(envelope), { status: response.status, headers: response.headers });
  };
}

describe.each(LIVE_SERVERS)('$label', (server) => {
  describe.skipIf(server.skipReason !== undefined)(server.title('the client against the live ERP'), () => {
    // The proxy as deployed by default (ERP_V2_TRANSPORT=json2): the client must choose the API itself.
    const proxy = useLiveProxy(server, { ERP_V2_TRANSPORT: 'json2' });
    const cleanup = useCleanup(server);
    let companies: number[] = [];

    beforeAll(async () => {
      companies = await discoverIds(server, 'res.partner', [['is_company', '=', true]], 3);
    });

    it('asks the version and chooses v2 for ERP 19 and later, v1 below', async () => {
      const erp = new ErpProxy({ url: proxy().harness.url, apiKey: TEST_PROXY_KEY }).erp({
        url: server.url,
        db: server.db,
        apiKey: server.key,
      });
      const info = await erp.version();
      expect(typeof info.version_info[0]).toBe('number');
      expect(Number(info.version_info[0]) >= 19).toBe(server.json2);
      expect(await erp.api()).toBe(server.json2 ? 'v2' : 'v1');
    });

    describe.each(
      server.json2
        ? [
            { as: 'as it is (v2)', fetch: undefined, api: 'v2' },
            { as: 'told the ERP is 18 (v1 translation)', fetch: versionAs(18), api: 'v1' },
          ]
        : [{ as: 'as it is (v1, chosen by itself)', fetch: undefined, api: 'v1' }],
    )('$as', ({ fetch, api }) => {
      const client = (
        credentials: { apiKey: string; userId: number } = { apiKey: server.key, userId: server.uid },
      ) =>
        new ErpProxy({
          url: proxy().harness.url,
          apiKey: TEST_PROXY_KEY,
          timeoutSeconds: 20,
          ...(fetch ? { fetch } : {}),
        }).erp({
          url: server.url,
          db: server.db,
          ...credentials,
        });

      it(`uses ${api}`, async () => {
        expect(await client().api()).toBe(api);
      });

      it('searchRead, search, searchCount, read and fieldsGet', async () => {
        const erp = client();
        const domain = [['id', 'in', companies]];
        expect(await erp.searchCount('res.partner', domain)).toBe(companies.length);
        expect(await erp.search('res.partner', domain, { order: 'id desc', limit: 2 })).toEqual(
          [...companies].reverse().slice(0, 2),
        );
        const rows = await erp.searchRead('res.partner', domain, {
          fields: ['is_company'],
          offset: 1,
          order: 'id asc',
        });
        expect(rows.map((row) => [row.id, row.is_company])).toEqual(
          companies.slice(1).map((id) => [id, true]),
        );
        const read = await erp.read('res.partner', companies, { fields: ['is_company'] });
        expect(read.map((row) => row.id)).toEqual(companies);
        expect(await erp.fieldsGet('res.partner', { allfields: ['name'], attributes: ['type'] })).toEqual({
          name: { type: 'char' },
        });
      });

      it('create (one and several), write, call and unlink', async () => {
        const erp = client();
        const name = liveName(`client ${api}`);
        const id = await erp.create('res.partner', { name });
        cleanup.track('res.partner', id);
        const more = await erp.create('res.partner', [{ name: `${name} a` }, { name: `${name} b` }]);
        cleanup.track('res.partner', more);
        expect(typeof id).toBe('number');
        expect(more).toHaveLength(2);
        expect(
          await erp.write(
            'res.partner',
            [id],
            { email: 'client-live@example.com' },
            { context: { lang: 'en_US' } },
          ),
        ).toBe(true);
        expect(await erp.read('res.partner', [id], { fields: ['name', 'email'] })).toEqual([
          { id, name, email: 'client-live@example.com' },
        ]);
        expect(await erp.call('res.partner', 'name_search', { name, operator: '=', limit: 1 })).toEqual([
          [id, name],
        ]);
        expect(await erp.unlink('res.partner', [id, ...more])).toBe(true);
        expect(await erp.searchCount('res.partner', [['id', 'in', [id, ...more]]])).toBe(0);
      });

      it('an unknown model is an ErpError', async () => {
        const error = await client()
          .searchCount('x_no.such_model')
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(ErpError);
        expect((error as ErpError).code).toBe(api === 'v2' ? 404 : 0);
        expect((error as ErpError).retryable).toBe(false);
      });

      it.skipIf(server.limited === undefined)(
        `the limited user creating a partner is an AccessError${server.optionalSkip('LIMITED_UID', 'LIMITED_KEY')}`,
        async () => {
          const limited = server.limited as { uid: number; key: string };
          const error = await client({ apiKey: limited.key, userId: limited.uid })
            .create('res.partner', { name: liveName('not allowed') })
            .catch((caught: unknown) => caught);
          expect(error).toBeInstanceOf(ErpError);
          expect(error).toMatchObject({ code: api === 'v2' ? 403 : 0, name: 'odoo.exceptions.AccessError' });
        },
      );
    });

    it('a wrong proxy key is an ErpProxyError -32000 that did not run', async () => {
      const erp = new ErpProxy({ url: proxy().harness.url, apiKey: 'not-a-proxy-key-0123456789' }).erp({
        url: server.url,
        db: server.db,
        apiKey: server.key,
      });
      await expect(erp.version()).rejects.toMatchObject({ code: -32000, httpStatus: 401, mayHaveRun: false });
      await expect(erp.version()).rejects.toBeInstanceOf(ErpProxyError);
    });
  });
});
