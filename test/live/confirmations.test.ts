/**
 * A person confirms what an agent writes (docs/guide/confirmations.md), against the real ERP 19 of
 * LIVE_SERVERS: the official v2 MCP client pinned to 2026-07-28 with its elicitation handler. A
 * confirmed `create` is on the ERP afterwards; a declined `write` changed nothing; the form showed
 * the model's and the record's display names, read from the real ERP.
 */
import { describe, expect, it } from 'vitest';
import { erpHeaders, json, withConfirmingClient } from '../support/mcp-client.ts';
import { erpResult, LIVE19, liveName, useCleanup, useLiveProxy } from './live-env.ts';

const AGENT_KEY = 'live-confirm-key-0123456789abcdef';
const PROXY_API_KEYS = JSON.stringify({
  keys: [{ name: 'live-confirm', key: AGENT_KEY, policy: { apis: ['mcp'], confirm: 'writes' } }],
});

const server = LIVE19;

describe.skipIf(server.skipReason !== undefined)(server.title('a person confirms MCP writes'), () => {
  const proxy = useLiveProxy(server, { PROXY_API_KEY: '', PROXY_API_KEYS, MCP_WRITE_TOOLS: 'true' });
  const cleanup = useCleanup(server);
  const headers = () => ({
    'x-api-key': AGENT_KEY,
    ...erpHeaders({ url: server.url, db: server.db, apiKey: server.key }),
  });

  it('a confirmed create is written once; a declined write changes nothing; the form names what the ERP calls them', async () => {
    const name = liveName('confirmed partner');
    const created = await withConfirmingClient(
      proxy().harness.url,
      headers(),
      'accept',
      async (client, forms) => {
        const result = await client.callTool({
          name: 'create',
          arguments: { model: 'res.partner', values: { name } },
        });
        expect(result.isError ?? false).toBe(false);
        expect(forms).toHaveLength(1);
        expect(forms[0]).toContain('Create 1 record of "Contact" ("res.partner").');
        expect(forms[0]).toContain(`  - "name": ${JSON.stringify(name)}`);
        return json(result) as number;
      },
    );
    cleanup.track('res.partner', created);
    const onErp = async () =>
      (await erpResult(server, 'res.partner', 'search_read', {
        domain: [['id', '=', created]],
        fields: ['name'],
      })) as { name: string }[];
    expect(await onErp()).toEqual([{ id: created, name }]);

    await withConfirmingClient(proxy().harness.url, headers(), 'decline', async (client, forms) => {
      const result = await client.callTool({
        name: 'write',
        arguments: { model: 'res.partner', ids: [created], values: { name: `${name} (renamed)` } },
      });
      expect(result.isError).toBe(false);
      expect(result.structuredContent).toEqual({ confirmed: false, outcome: 'declined' });
      expect(forms[0]).toContain(`  - id ${created}: ${JSON.stringify(name)}`);
    });
    expect(await onErp()).toEqual([{ id: created, name }]);
  });
});
