/**
 * Remote agents with OAuth against each real ERP (README, "Remote agents with OAuth"): a real
 * OpenID provider on loopback (oidc-provider), the local proxy with OAuth on, and the identity map
 * pointing at the live server's admin. The MCP SDK client completes its OAuth flow (the person's
 * sign-in driven by the test) and then calls tools as the mapped Odoo user: what it reads is the
 * ERP's own answer, what it creates exists on the ERP (and is deleted again), and a person mapped
 * with a read policy can create nothing. Ids are discovered; the records are the test's own.
 */
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, toolError } from '../support/mcp-client.ts';
import { TestConnectorAuth } from '../support/oauth-client.ts';
import { type OidcIssuer, startOidcIssuer } from '../support/oidc-issuer.ts';
import { freePort, type ProxyHarness, startProxy } from '../support/proxy-harness.ts';
import {
  checkServerVersion,
  erpResult,
  LIVE_SERVERS,
  liveName,
  remainingPartners,
  useCleanup,
} from './live-env.ts';

describe.each(LIVE_SERVERS)('$label', (server) => {
  describe.skipIf(server.skipReason !== undefined)(
    server.title('POST /mcp with OAuth, as the mapped Odoo user'),
    () => {
      const cleanup = useCleanup(server);
      let oidc: OidcIssuer;
      let proxy: ProxyHarness;
      let resource = '';

      beforeAll(async () => {
        await checkServerVersion(server);
        oidc = await startOidcIssuer({
          accounts: { ann: { groups: ['admins'] }, rita: { groups: ['readers'] } },
        });
        const port = await freePort();
        resource = `http://127.0.0.1:${port}/mcp`;
        const erp = { url: server.url, db: server.db, user_id: server.uid, api_key: server.key };
        proxy = await startProxy({
          env: {
            ...(process.env.ERP_ALLOWED_TARGETS
              ? { ERP_ALLOWED_TARGETS: process.env.ERP_ALLOWED_TARGETS }
              : {}),
            ...server.v2Env,
            PORT: String(port),
            MCP_WRITE_TOOLS: 'true',
            MCP_OAUTH_ISSUER: oidc.issuer,
            MCP_OAUTH_AUDIENCE: resource,
            MCP_OAUTH_IDENTITIES: JSON.stringify({
              identities: [
                { name: 'admins', match: { claim: 'groups', value: 'admins' }, erp },
                {
                  name: 'readers',
                  match: { claim: 'groups', value: 'readers' },
                  erp,
                  policy: { access: 'read', models: ['res.partner'] },
                },
              ],
            }),
          },
        });
      });
      afterAll(async () => {
        await proxy?.close();
        await oidc?.close();
      });

      /** The SDK client, after `account` signed in at the OpenID provider (the test is the browser). */
      async function signedIn(account: string): Promise<Client> {
        const connector = new TestConnectorAuth();
        const url = new URL(resource);
        const client = new Client({ name: 'erp-proxy-live-oauth', version: '1.0.0' });
        await expect(
          client.connect(new StreamableHTTPClientTransport(url, { authProvider: connector })),
        ).rejects.toBeInstanceOf(UnauthorizedError);
        const transport = new StreamableHTTPClientTransport(url, { authProvider: connector });
        await transport.finishAuth(
          (await oidc.signIn(connector.authorizationUrl ?? '', account)).get('code') ?? '',
        );
        await client.connect(transport);
        return client;
      }

      it('reads and writes as the mapped user: the ERP answers, and the record it creates is there', async () => {
        const client = await signedIn('ann');
        try {
          const direct = await erpResult(server, 'res.partner', 'search_count', {
            domain: [['is_company', '=', true]],
          });
          const counted = json(
            await client.callTool({
              name: 'search_count',
              arguments: { model: 'res.partner', domain: [['is_company', '=', true]] },
            }),
          );
          expect(counted).toBe(direct);
          const name = liveName('oauth create');
          const created = json(
            await client.callTool({ name: 'create', arguments: { model: 'res.partner', values: { name } } }),
          );
          cleanup.track('res.partner', created);
          expect(await remainingPartners(server, Array.isArray(created) ? created : [created])).toHaveLength(
            1,
          );
        } finally {
          await client.close();
        }
      });

      it('a person mapped with a read policy sees no write tool and creates nothing', async () => {
        const client = await signedIn('rita');
        try {
          const tools = (await client.listTools()).tools.map((tool) => tool.name);
          expect(tools).toContain('search_read');
          expect(tools).not.toContain('create');
          const name = liveName('oauth refused');
          const refused = await client.callTool({
            name: 'create',
            arguments: { model: 'res.partner', values: { name } },
          });
          expect(toolError(refused)).toMatchObject({ source: 'proxy', code: -32008 });
          expect(
            await erpResult(server, 'res.partner', 'search', {
              domain: [['name', '=', name]],
              context: { active_test: false },
            }),
          ).toEqual([]);
        } finally {
          await client.close();
        }
      });
    },
  );
});
