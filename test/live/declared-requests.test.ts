/**
 * The gate rules on an MCP tool's declared ERP request before anything else (issue 55), against
 * each real Odoo of LIVE_SERVERS: a key whose writes a person confirms, with a `methods`, a
 * `fields` or a `companies` rule that refuses an agent's `create`, and one call a day, under the
 * ERP's `in_flight` cap of 1 held by another key's slow call. The create is -32008 with the rule's
 * words, no form is shown, nothing of it reaches the ERP, and the key's one call of the day is
 * still there (and then used up: the limit holds).
 *
 * The calls go through a loopback front of the real ERP (test/support/erp-front.ts), which holds
 * the other key's read for a while (so the cap is full) and lists what reached the ERP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ErpFront, startErpFront } from '../support/erp-front.ts';
import {
  erpHeaders,
  isError,
  toolError,
  withConfirmingClient,
  withMcpClient,
} from '../support/mcp-client.ts';
import { erpResult, LIVE_SERVERS, type LiveServer, liveName, useLiveProxy } from './live-env.ts';

const KEYS = {
  method: 'live-declared-method-0123456789abcdef',
  field: 'live-declared-field-0123456789abcdef',
  company: 'live-declared-company-0123456789abcdef',
  holder: 'live-declared-holder-0123456789abcdef',
} as const;

/** The proxy keys: each confirming key has one rule, `confirm: "writes"` and one call a day. */
function proxyKeys(server: LiveServer, company: number): string {
  const confirming = (name: keyof typeof KEYS, rule: Record<string, unknown>) => ({
    name,
    key: KEYS[name],
    policy: { ...rule, confirm: 'writes', limits: [{ requests: 1, per: 'day' }] },
  });
  return JSON.stringify({
    keys: [
      confirming('method', { methods: { 'res.partner': ['search_count'] } }),
      confirming('field', { fields: { 'res.partner': { deny: ['email'] } } }),
      confirming('company', { companies: { [server.db]: [company] } }),
      { name: 'holder', key: KEYS.holder },
    ],
  });
}

/** Whether a call that reached the ERP is a create (JSON-2, or `execute_kw` on /jsonrpc). */
const isCreate = (call: { path: string; body: string }): boolean =>
  /\/json\/2\/[^/]+\/create$/.test(call.path) || (call.path === '/jsonrpc' && call.body.includes('"create"'));

/** The holder's read, which the front holds: the only `search_read` of the file. */
const isHeld = (call: { path: string; body: string }): boolean =>
  call.path.endsWith('/search_read') || (call.path === '/jsonrpc' && call.body.includes('"search_read"'));

for (const server of LIVE_SERVERS) {
  describe.skipIf(server.skipReason !== undefined)(
    server.title('a confirming key is never asked about a call its rules refuse (declared requests)'),
    () => {
      let front: ErpFront | undefined;
      /** The admin's company (the company key's) and a company id it does not name. */
      let companies = { main: 0, other: 0 };
      beforeAll(async () => {
        if (server.skipReason !== undefined) return;
        front = await startErpFront(server.url);
        const [admin] = (await erpResult(server, 'res.users', 'read', {
          ids: [server.uid],
          fields: ['company_id'],
        })) as Array<{ company_id: [number, string] }>;
        const main = admin?.company_id[0] ?? 0;
        const others = (await erpResult(server, 'res.company', 'search', {
          domain: [['id', '!=', main]],
          limit: 1,
        })) as number[];
        companies = { main, other: others[0] ?? main + 1 };
        keys = proxyKeys(server, main);
      });
      afterAll(async () => front?.close());
      /** Set by the `beforeAll` above, which runs before the proxy starts (it reads the getter then). */
      let keys = proxyKeys(server, 0);
      const proxy = useLiveProxy(server, {
        PROXY_API_KEY: '',
        get PROXY_API_KEYS() {
          return keys;
        },
        MCP_WRITE_TOOLS: 'true',
        ERP_TARGET_LIMITS: JSON.stringify({ '127.0.0.1': { in_flight: 1 } }),
      });
      const headers = (key: string) => ({
        'x-api-key': key,
        ...erpHeaders({
          url: (front as ErpFront).url,
          db: server.db,
          apiKey: server.key,
          ...(server.json2 ? {} : { uid: server.uid }),
        }),
      });

      it.each([
        { rule: 'method', words: 'method create is not in', values: () => ({}) },
        { rule: 'field', words: 'email', values: () => ({ email: 'declared@example.com' }) },
        { rule: 'company', words: 'compan', values: () => ({ company_id: companies.other }) },
      ] as const)(
        "the $rule rule: -32008 at once, no form, nothing sent, the day's call left",
        async ({ rule, words, values }) => {
          const erp = front as ErpFront;
          const name = liveName(`declared ${rule}`);
          const key = KEYS[rule];
          // The calls the front saw before this case (its calls of the earlier cases stay listed).
          const from = erp.calls.length;
          const since = () => erp.calls.slice(from);
          await withConfirmingClient(proxy().harness.url, headers(key), 'accept', async (client, forms) => {
            // The holder's read takes the ERP's one slot and keeps it for a while.
            erp.plan = (call) => (isHeld(call) ? { delayMs: 2_000 } : 'forward');
            const held = withMcpClient(proxy().harness.url, headers(KEYS.holder), async (holder) =>
              isError(
                await holder.callTool({
                  name: 'search_read',
                  arguments: { model: 'res.partner', fields: ['name'], limit: 1 },
                }),
              ),
            );
            try {
              await expect
                .poll(() => since().filter(isHeld).length, { interval: 20, timeout: 20_000 })
                .toBe(1);
              const result = await client.callTool({
                name: 'create',
                arguments: { model: 'res.partner', values: { name, ...values() } },
              });
              const error = toolError(result);
              expect(error.code).toBe(-32008);
              expect(error.message).toContain(words);
              expect(await held).toBe(false);
            } finally {
              erp.plan = () => 'forward';
            }
            expect(forms).toEqual([]);
            expect(since().filter(isCreate)).toEqual([]);
            // The key's one call of the day is still there, and then used up.
            const counted = await client.callTool({
              name: 'search_count',
              arguments: { model: 'res.partner' },
            });
            expect(isError(counted)).toBe(false);
            const over = await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } });
            expect(toolError(over).code).toBe(-32004);
          });
          // Nothing was created.
          expect(
            await erpResult(server, 'res.partner', 'search', {
              domain: [['name', '=', name]],
              context: { active_test: false },
            }),
          ).toEqual([]);
        },
      );
    },
  );
}
