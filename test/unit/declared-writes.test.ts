/**
 * A tool's `writes` declaration is what its `run` does (issue 45, item 3): over valid arguments of
 * every declared tool (fast-check, each draw checked by the tool's own schema), a tool declared
 * without `writes` sends only methods of the read list through the real {@link ErpAccess}, and a
 * tool declared with it can send a method outside the list. And `ErpAccess` refuses a method
 * outside the list to a tool declared without `writes`: an internal error (-32603), nothing sent.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErpAccess } from '../../lambdas/core/mcp/erp-access.ts';
import { runTool } from '../../lambdas/core/mcp/run-tool.ts';
import { TOOLS } from '../../lambdas/core/mcp/tools.ts';
import { InternalError } from '../../lambdas/platform/errors.ts';
import { isReadMethod } from '../../lambdas/platform/key-policy.ts';
import type { CallContext, ErpCall, ErpOutcome } from '../../lambdas/upstream/erp-transport.ts';
import type { VersionClient } from '../../lambdas/upstream/version-client.ts';
import { mcpDeps, mcpInbound } from '../support/mcp-serve.ts';

const VERSION = { version: '19.0', version_info: [19, 0, 0, 'final', 0, ''] };

/** The real ERP access of one tool call, with a transport that records every call it is asked to send. */
function recordingAccess(tool: { readonly name: string; readonly writes: boolean }) {
  const sent: ErpCall[] = [];
  const erp = {
    call: async (call: ErpCall): Promise<ErpOutcome> => {
      sent.push(call);
      return { kind: 'result', value: [] };
    },
  };
  const deps = {
    ...mcpDeps(true, erp),
    versions: { cached: () => VERSION, version: async () => VERSION } as unknown as VersionClient,
  };
  const inbound = mcpInbound(
    {},
    {},
    {
      erp: {
        from: 'headers',
        headers: { url: 'http://127.0.0.1:9', db: 'erp_a', apiKey: 'b'.repeat(40), userId: '2' },
      },
    },
  );
  const context: CallContext = {
    signal: new AbortController().signal,
    timeoutMs: 1_000,
    maxResponseBytes: 1_000_000,
    compressedResponse: false,
    clientIp: undefined,
    stripDebug: false,
    meter: { record: () => undefined } as unknown as CallContext['meter'],
  };
  return { access: new ErpAccess(inbound, deps, context, tool), sent };
}

const name = fc.stringMatching(/^[a-z][a-z_]{0,11}$/);
const method = fc.oneof(
  fc.constantFrom(
    'name_search',
    'read',
    'search_read',
    'action_archive',
    'write',
    'unlink',
    'copy',
    'fields_get',
  ),
  name,
);
/** Every argument a tool takes, by its name; each tool keeps those of its own schema. */
const ARGUMENTS = fc.record(
  {
    model: fc.constantFrom('res.partner', 'sale.order', 'ir.model'),
    domain: fc.constantFrom([], [['is_company', '=', true]]),
    fields: fc.array(name, { maxLength: 3 }),
    limit: fc.integer({ min: 1, max: 1000 }),
    offset: fc.integer({ min: 0, max: 100 }),
    order: fc.constantFrom('name asc', 'id desc'),
    context: fc.constantFrom({}, { lang: 'fr_FR' }),
    ids: fc.array(fc.integer({ min: 1, max: 1000 }), { minLength: 1, maxLength: 3 }),
    group_by: fc.constantFrom([], ['country_id'], ['create_date:month']),
    aggregates: fc.constantFrom([], ['amount_total:sum']),
    attributes: fc.constantFrom(['string'], ['type', 'relation']),
    search: fc.constantFrom('partner', 'sale'),
    values: fc.constantFrom({ name: 'Acme' }, {}),
    method,
    args: fc.array(fc.integer(), { maxLength: 2 }),
    kwargs: fc.constantFrom({}, { limit: 5 }),
    idempotency_key: fc.stringMatching(/^[a-z0-9]{1,16}$/),
  },
  { requiredKeys: [] },
);

describe('declared writes are what a tool sends', () => {
  it.each(TOOLS.map((tool) => [tool.name, tool] as const))('%s', async (_name, tool) => {
    const schema = tool.input();
    const own = new Set(Object.keys((schema as unknown as { shape: Record<string, unknown> }).shape));
    const sentByAll: string[] = [];
    await fc.assert(
      fc.asyncProperty(ARGUMENTS, async (drawn) => {
        const parsed = schema.safeParse(
          Object.fromEntries(Object.entries(drawn).filter(([key]) => own.has(key))),
        );
        fc.pre(parsed.success);
        const { access, sent } = recordingAccess(tool);
        const error = await tool.run(parsed.data as never, access).then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(error).not.toBeInstanceOf(InternalError);
        sentByAll.push(...sent.map((call) => call.method));
        if (!tool.writes) for (const call of sent) expect(isReadMethod(call.method), call.method).toBe(true);
      }),
      { numRuns: 60 },
    );
    // A tool declared with writes can send a method outside the read list (else it is over-declared).
    if (tool.writes) expect(sentByAll.some((sentMethod) => !isReadMethod(sentMethod))).toBe(true);
  });

  it('ErpAccess refuses a method outside the read list to a tool declared without writes: -32603, nothing sent', async () => {
    const { access, sent } = recordingAccess({ name: 'search_read', writes: false });
    await expect(access.named('res.partner', 'action_archive', { ids: [1] })).rejects.toBeInstanceOf(
      InternalError,
    );
    await expect(access.positional('res.partner', 'unlink', [[1]], {})).rejects.toBeInstanceOf(InternalError);
    expect(sent).toEqual([]);
    // Declared with writes, the same call is sent.
    const writer = recordingAccess({ name: 'call_method', writes: true });
    await writer.access.named('res.partner', 'action_archive', { ids: [1] });
    expect(writer.sent.map((call) => call.method)).toEqual(['action_archive']);
  });

  it('a tool declared without writes whose run archives: its call is -32603 to the client, logged, nothing sent', async () => {
    const declared = TOOLS.find((tool) => tool.name === 'search_count');
    if (declared === undefined) throw new Error('search_count is declared');
    const lying = {
      ...declared,
      run: (_args: unknown, erp: ErpAccess) => erp.named('res.partner', 'action_archive', { ids: [1] }),
    } as unknown as typeof declared;
    const sent: ErpCall[] = [];
    const deps = mcpDeps(false, {
      call: async (call: ErpCall): Promise<ErpOutcome> => {
        sent.push(call);
        return { kind: 'result', value: true };
      },
    });
    const request = mcpInbound(
      {},
      {},
      {
        erp: {
          from: 'headers',
          headers: { url: 'http://127.0.0.1:9', db: 'erp_a', apiKey: 'b'.repeat(40), userId: '2' },
        },
      },
    );
    const run = await runTool({ tool: lying, args: { model: 'res.partner' } }, request, deps);
    expect(run.outcome.ok).toBe(false);
    expect(run.outcome.ok ? '' : run.outcome.text).toContain('-32603');
    expect(run.facts).toMatchObject({ outcome: 'proxy_error', errorCode: -32603 });
    expect(run.facts.internalError).toBeInstanceOf(Error);
    expect(sent).toEqual([]);
  });
});
