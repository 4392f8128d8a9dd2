/**
 * Key policies against each real ERP of LIVE_SERVERS (README, "Key policies"): a key whose policy
 * says `access: read` reads through v1, v2 and `POST /mcp`, and cannot create, write, unlink or
 * archive on any of them (-32008, HTTP 403, or an MCP tool result with `isError`); the ERP itself
 * then shows that nothing was created or changed. The partner the writes aim at is created straight
 * on the ERP by the suite and deleted again; ids are discovered, never assumed.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { erpHeaders, isError, json, toolError, withMcpClient } from '../support/mcp-client.ts';
import {
  adminInstance,
  erpResult,
  LIVE_SERVERS,
  type LiveServer,
  liveName,
  useCleanup,
  useLiveProxy,
  v2Instance,
} from './live-env.ts';

const READ_KEY = 'live-read-key-0123456789abcdef';
const MCP_READ_KEY = 'live-mcp-read-key-0123456789abcdef';

const PROXY_API_KEYS = JSON.stringify({
  keys: [
    { name: 'live-reporting', key: READ_KEY, policy: { apis: ['v1', 'v2', 'version'], access: 'read' } },
    {
      name: 'live-agent',
      key: MCP_READ_KEY,
      policy: { apis: ['mcp'], access: 'read', models: ['res.partner'] },
    },
  ],
});

interface Envelope {
  id: string | null;
  result: unknown;
  error: { code: number; message: string } | null;
}

/** What the ERP itself says of a partner: its name and whether it is active. */
async function partnerState(server: LiveServer, id: number): Promise<{ name: string; active: boolean }[]> {
  return (await erpResult(server, 'res.partner', 'search_read', {
    domain: [['id', '=', id]],
    fields: ['name', 'active'],
    context: { active_test: false },
  })) as { name: string; active: boolean }[];
}

/** How many partners carry `name` (archived ones included), as the ERP itself counts them. */
async function partnersNamed(server: LiveServer, name: string): Promise<number> {
  return (await erpResult(server, 'res.partner', 'search_count', {
    domain: [['name', '=', name]],
    context: { active_test: false },
  })) as number;
}

describe.each(LIVE_SERVERS)('$label', (server) => {
  describe.skipIf(server.skipReason !== undefined)(server.title('key policies: a read key'), () => {
    const proxy = useLiveProxy(server, { PROXY_API_KEY: '', PROXY_API_KEYS, MCP_WRITE_TOOLS: 'true' });
    const cleanup = useCleanup(server);
    const original = liveName('policy target');
    const attempted = liveName('policy create');
    let target = 0;

    beforeAll(async () => {
      const [created] = await cleanup.create('res.partner', [{ name: original }]);
      if (created === undefined) throw new Error('the ERP created no partner');
      target = created;
    });

    const post = async (path: string, body: Record<string, unknown>) => {
      const answer = await proxy().harness.post(path, body, { 'x-api-key': READ_KEY });
      return { status: answer.status, envelope: answer.json as Envelope, text: answer.text };
    };
    const expectRefused = (answer: { status: number; envelope: Envelope; text: string }, id: string) => {
      expect(answer.status, answer.text).toBe(403);
      expect(answer.envelope.id).toBe(id);
      expect(answer.envelope.error?.code).toBe(-32008);
      expect(answer.envelope.error?.message).toMatch(/^Refused by this key's policy: this key may only read/);
      expect(answer.text).not.toContain(READ_KEY);
      expect(answer.text).not.toContain(server.key);
    };

    it('reads on v1 and v2', async () => {
      const v1 = await post('/api/erp/execute', {
        id: 'read-v1',
        model_id: 'res.partner',
        action: 'search_read',
        params: [[['id', '=', target]]],
        keyword: { fields: ['name'] },
        erp_instance: adminInstance(server),
      });
      expect(v1.envelope.error).toBeNull();
      expect(v1.envelope.result).toEqual([{ id: target, name: original }]);
      const v2 = await post('/v2/erp/execute', {
        id: 'read-v2',
        model_id: 'res.partner',
        method: 'search_count',
        kwargs: { domain: [['id', '=', target]] },
        erp_instance: v2Instance(server),
      });
      expect(v2.envelope.error).toBeNull();
      expect(v2.envelope.result).toBe(1);
    });

    it('cannot create, write, unlink or archive on v1, v2 or /mcp, and the ERP shows nothing changed', async () => {
      const v1Calls: [string, Record<string, unknown>][] = [
        ['create', { action: 'create', params: [{ name: attempted }] }],
        ['write', { action: 'write', params: [[target], { name: `${original} (renamed)` }] }],
        ['unlink', { action: 'unlink', params: [[target]] }],
        ['archive', { action: 'call_method', fn_name: 'action_archive', params: [[target]] }],
      ];
      for (const [what, body] of v1Calls) {
        const id = `v1-${what}`;
        expectRefused(
          await post('/api/erp/execute', {
            id,
            model_id: 'res.partner',
            erp_instance: adminInstance(server),
            ...body,
          }),
          id,
        );
      }
      const v2Calls: [string, Record<string, unknown>][] = [
        ['create', { vals_list: [{ name: attempted }] }],
        ['write', { ids: [target], vals: { name: `${original} (renamed)` } }],
        ['unlink', { ids: [target] }],
        ['action_archive', { ids: [target] }],
      ];
      for (const [method, kwargs] of v2Calls) {
        const id = `v2-${method}`;
        expectRefused(
          await post('/v2/erp/execute', {
            id,
            model_id: 'res.partner',
            method,
            kwargs,
            erp_instance: v2Instance(server),
          }),
          id,
        );
      }
      const headers = {
        'x-api-key': MCP_READ_KEY,
        ...erpHeaders({ url: server.url, db: server.db, apiKey: server.key, uid: server.uid }),
      };
      await withMcpClient(proxy().harness.url, headers, async (client) => {
        const tools = (await client.listTools()).tools.map((tool) => tool.name);
        expect(tools).not.toContain('create');
        expect(tools).not.toContain('call_method');
        const toolCalls: [string, Record<string, unknown>][] = [
          ['create', { model: 'res.partner', values: { name: attempted } }],
          ['write', { model: 'res.partner', ids: [target], values: { name: `${original} (renamed)` } }],
          ['unlink', { model: 'res.partner', ids: [target] }],
          ['call_method', { model: 'res.partner', method: 'action_archive', ids: [target] }],
        ];
        for (const [name, args] of toolCalls) {
          const error = toolError(await client.callTool({ name, arguments: args }));
          expect(error).toMatchObject({ source: 'proxy', code: -32008 });
        }
        // The agent key reads its one model, and no other.
        const count = await client.callTool({
          name: 'search_count',
          arguments: { model: 'res.partner', domain: [['id', '=', target]] },
        });
        expect(json(count)).toBe(1);
        const users = await client.callTool({ name: 'search_count', arguments: { model: 'res.users' } });
        expect(isError(users)).toBe(true);
        expect(toolError(users).message).toMatch(/model res\.users is not in this key's models/);
      });

      // The ERP itself: the partner is there, active and unrenamed; nothing was created.
      expect(await partnerState(server, target)).toEqual([{ id: target, name: original, active: true }]);
      expect(await partnersNamed(server, attempted)).toBe(0);
    });
  });
});
