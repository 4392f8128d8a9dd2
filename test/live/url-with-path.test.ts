/**
 * The address bar's URL on the real ERPs: Odoo 17 and later show `<ERP>/odoo/...` in the browser,
 * and that address pasted as the ERP's URL is answered with a redirect or an HTML page, not as an
 * ERP. The proxy's -32005 then names the ERP's address without the path, which works (the same
 * calls with it answer); on Odoo 16 and 17 a v2 call too (their /json/2 is missing there, and so
 * is their version: no ERP at that address, not an ERP older than 19). test/integration/url-with-path.test.ts holds the same with the double.
 */
import { describe, expect, it } from 'vitest';
import { adminInstance, LIVE_SERVERS, resultOf, useLiveProxy, v2Instance } from './live-env.ts';

describe.each(LIVE_SERVERS)('$label', (server) => {
  describe.skipIf(server.skipReason !== undefined)(server.title('an ERP URL with a path'), () => {
    const proxy = useLiveProxy(server);
    const pasted = () => `${server.url}/odoo/action-12`;
    const hint = () => `try ${new URL(server.url).origin} (`;

    it('v1 and the version endpoint: -32005 naming the address without the path; that address answers', async () => {
      const v1 = await proxy().v1(
        { action: 'search_count', params: [[]] },
        { ...adminInstance(server), url: pasted() },
      );
      expect([v1.status, v1.envelope.error?.code]).toEqual([502, -32005]);
      expect(v1.envelope.error?.message).toContain('The URL has a path (/odoo/action-12)');
      expect(v1.envelope.error?.message).toContain(hint());
      const version = await proxy().harness.post('/api/erp/version', { id: 'path', url: pasted() });
      expect(version.status).toBe(502);
      expect((version.json as { error: { message: string } }).error.message).toContain(hint());
      expect(resultOf(await proxy().v1({ action: 'search_count', params: [[]] }))).toEqual(
        expect.any(Number),
      );
    });

    it('v2: refused, nothing run: a -32005 says what came back, then names the address without the path', async () => {
      const v2 = await proxy().v2(
        'search_count',
        { domain: [] },
        { instance: { ...v2Instance(server), url: pasted() } },
      );
      expect([v2.status, v2.envelope.error?.code]).toEqual([502, -32005]);
      const message = v2.envelope.error?.message ?? '';
      // What each version answers under /odoo/...: 19 an HTML 400 on /json/2; 18 a redirect to its
      // database selector; 16 and 17 (no /odoo routes, no JSON-2) an HTML 404 on /json/2 and on
      // both version lookups, which is no ERP's answer: not "older than 19 (use v1)" (-32006).
      const answered =
        server.major >= 19
          ? /on \/json\/2 \(HTTP 400 text\/html/
          : server.major === 18
            ? /redirect \(HTTP 303 /
            : /neither GET \/web\/version \(HTTP 404 text\/html.*nor \/jsonrpc common\.version \(HTTP 404 text\/html/;
      expect(message).toMatch(answered);
      expect(message).toContain('The URL has a path (/odoo/action-12)');
      expect(message).toContain(hint());
      expect(message).not.toContain('use v1');
    });
  });
});
