/**
 * The version endpoints (all three paths), companies in the context (`allowed_company_ids`, a
 * company of the admin and one it cannot access) and a large answer compressed with gzip, against
 * each real ERP (v2 over execute_kw on Odoo 16-18). Read-only; ids are discovered.
 */
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_PROXY_KEY } from '../support/proxy-harness.ts';
import {
  adminInstance,
  directVersion,
  discoverIds,
  erpResult,
  LIVE_SERVERS,
  resultOf,
  useLiveProxy,
} from './live-env.ts';

/** A POST to the proxy with Node's http client, which leaves the body as it came (no decoding). */
function rawPost(
  url: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': TEST_PROXY_KEY, ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe.each(LIVE_SERVERS)('$label', (server) => {
  describe.skipIf(server.skipReason !== undefined)(server.title('version, companies and gzip, live'), () => {
    const proxy = useLiveProxy(server);

    it('the version is the same on /api/erp/version, /v1/erp/version and /v2/erp/version, and is the ERP’s', async () => {
      // The ERP's own answer: /web/version on 19+, common.version (mapped as the spec says) below.
      const direct = await directVersion(server);
      const answers = [];
      for (const path of ['/api/erp/version', '/v1/erp/version', '/v2/erp/version'])
        answers.push(resultOf(await proxy().version(path)));
      expect(answers[0]).toEqual(direct);
      expect(answers[1]).toEqual(direct);
      expect(answers[2]).toEqual(direct);
      const major = (direct.version_info as unknown[])[0];
      expect(typeof major === 'number' && major >= 19, `version_info[0] = ${String(major)}`).toBe(
        server.json2,
      );
    });

    describe('allowed_company_ids in the context', () => {
      let company = 0;
      let inaccessible = 0;
      let partners: number[] = [];

      beforeAll(async () => {
        // Prepare: the admin's company, an id above every company there is (so none the admin has),
        // and companies seen from the admin's company (a multi-company server has partners of one
        // company only, which a call restricted to another does not see).
        const [admin] = (await erpResult(server, 'res.users', 'read', {
          ids: [server.uid],
          fields: ['company_id', 'company_ids'],
        })) as Array<{ company_id: [number, string]; company_ids: number[] }>;
        company = admin?.company_id[0] ?? 0;
        const all = (await erpResult(server, 'res.company', 'search', {
          domain: [],
          context: { active_test: false },
        })) as number[];
        inaccessible = Math.max(...all, ...(admin?.company_ids ?? [])) + 1;
        partners = await discoverIds(
          server,
          'res.partner',
          [
            ['is_company', '=', true],
            ['company_id', 'in', [false, company]],
          ],
          2,
        );
      });

      it('a company of the user: the call runs, on v1 and v2 alike', async () => {
        const context = { allowed_company_ids: [company] };
        const domain = [['id', 'in', partners]];
        const keyword = { fields: ['name', 'company_id'], order: 'id asc', context };
        const a = resultOf(await proxy().v1({ action: 'search_read', params: [domain], keyword }));
        const b = resultOf(await proxy().v2('search_read', { domain, ...keyword }));
        expect(a).toEqual(b);
        expect((a as Array<{ id: number }>).map((row) => row.id)).toEqual(partners);
      });

      it('a company the user cannot access: the ERP AccessError (v1 code 0, v2 403)', async () => {
        const context = { allowed_company_ids: [inaccessible] };
        const domain = [['id', 'in', partners]];
        const message = 'Access to unauthorized or invalid companies.';
        const a = await proxy().v1({
          action: 'search_read',
          params: [domain],
          keyword: { fields: ['name'], context },
        });
        expect(a.status).toBe(200);
        expect([a.envelope.error?.code, a.envelope.error?.data?.name, a.envelope.error?.message]).toEqual([
          0,
          'odoo.exceptions.AccessError',
          message,
        ]);
        const b = await proxy().v2('search_read', { domain, fields: ['name'], context });
        expect(b.status).toBe(200);
        expect([b.envelope.error?.code, b.envelope.error?.data?.name, b.envelope.error?.message]).toEqual([
          403,
          'odoo.exceptions.AccessError',
          message,
        ]);
      });
    });

    it('a large search_read with Accept-Encoding: gzip comes back gzip-compressed, and decodes to the envelope', async () => {
      // Prepare: every field of a handful of discovered partners (well over 1 KiB), plain first.
      const ids = await discoverIds(server, 'res.partner', [], 10);
      const body = {
        id: 'live-gzip',
        action: 'search_read',
        model_id: 'res.partner',
        params: [[['id', 'in', ids]]],
        keyword: {
          fields: ['name', 'display_name', 'email', 'street', 'city', 'country_id', 'comment'],
          order: 'id asc',
        },
        erp_instance: adminInstance(server),
      };
      const plain = await rawPost(proxy().harness.url, '/api/erp/execute', body, {});

      // Act
      const zipped = await rawPost(proxy().harness.url, '/api/erp/execute', body, {
        'accept-encoding': 'gzip',
      });

      // Assess
      expect(plain.status).toBe(200);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.body.length).toBeGreaterThanOrEqual(1024);
      expect(zipped.status).toBe(200);
      expect(zipped.headers['content-encoding']).toBe('gzip');
      expect(zipped.body.length).toBeLessThan(plain.body.length);
      const decoded = JSON.parse(gunzipSync(zipped.body).toString('utf8')) as Record<string, unknown>;
      expect(decoded).toEqual(JSON.parse(plain.body.toString('utf8')));
      expect(decoded.id).toBe('live-gzip');
      expect(decoded.error).toBeNull();
      expect((decoded.result as Array<{ id: number }>).map((row) => row.id)).toEqual(ids);
    });
  });
});
