/**
 * A tool's declaration is what its run sends (issue 55, item 1; issue 45, item 3 before it): over
 * valid arguments of every declared tool (fast-check, each draw checked by the tool's own schema),
 * on ERP 17, 19 and 20, with and without a key policy whose rules rewrite a request, and with an
 * ERP that lacks formatted_read_group or not:
 *
 * - the policy step (the tool's declaration, its lookups, the key's rules on each request) sends
 *   only the proxy's lookups (`fields_get`), never a request of the tool;
 * - the run sends only declared requests, each exactly as the policy step ruled it (its context
 *   set by the company rule), and never raises an internal error;
 * - a tool declared without `writes` declares only read methods; one declared with it declares a
 *   method outside the read list for some draw (else it is over-declared).
 *
 * And `ErpAccess` refuses, before the ERP, a request the declaration did not name, a non-read
 * method declared by a read tool, and a lookup the tool does not name: -32603, nothing sent.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErpAccess, type McpDeps } from '../../lambdas/core/mcp/erp-access.ts';
import { declaredRequests, runTool } from '../../lambdas/core/mcp/run-tool.ts';
import { TOOLS } from '../../lambdas/core/mcp/tools.ts';
import { parseProxyKeys } from '../../lambdas/platform/config.ts';
import { InternalError, KeyPolicyRefusedError } from '../../lambdas/platform/errors.ts';
import { isReadMethod, type KeyPolicy } from '../../lambdas/platform/key-policy.ts';
import type { CallContext, ErpCall, ErpOutcome } from '../../lambdas/upstream/erp-transport.ts';
import type { VersionClient } from '../../lambdas/upstream/version-client.ts';
import { mcpDeps, mcpInbound } from '../support/mcp-serve.ts';

const versionOf = (major: number) => ({
  version: `${major}.0`,
  version_info: [major, 0, 0, 'final', 0, ''],
});

/** A key whose company rule sets every request's context (so a ruled request differs from its declaration). */
function companiesPolicy(): KeyPolicy {
  const [entry] = parseProxyKeys(
    JSON.stringify({
      keys: [{ name: 'k', key: 'key-0123456789abcdef', policy: { companies: { erp_a: [1] } } }],
    }),
  );
  if (entry?.policy === undefined) throw new Error('no policy parsed');
  return entry.policy;
}

const CONTEXT: CallContext = {
  signal: new AbortController().signal,
  timeoutMs: 1_000,
  maxResponseBytes: 1_000_000,
  compressedResponse: false,
  clientIp: undefined,
  stripDebug: false,
  meter: { record: () => undefined } as unknown as CallContext['meter'],
};

const FIELDS_GET_ANSWER = { id: { type: 'integer' }, name: { type: 'char' }, image_1920: { type: 'binary' } };

/** An ERP of version `major` that records every call it is sent; `withoutFormatted`: a 19.0 build without formatted_read_group. */
function recordingErp(major: number, withoutFormatted = false) {
  const sent: ErpCall[] = [];
  const transport = {
    call: async (call: ErpCall): Promise<ErpOutcome> => {
      sent.push(call);
      if (call.method === 'fields_get') return { kind: 'result', value: FIELDS_GET_ANSWER };
      if (withoutFormatted && call.method === 'formatted_read_group')
        return { kind: 'erp_error', code: 404, message: 'no such method', data: {} };
      return { kind: 'result', value: [] };
    },
  };
  const version = versionOf(major);
  const deps: McpDeps = {
    ...mcpDeps(true, transport),
    versions: { cached: () => version, version: async () => version } as unknown as VersionClient,
  };
  return { deps, sent };
}

function inbound(keyPolicy?: KeyPolicy) {
  return mcpInbound(
    {},
    {},
    {
      erp: {
        from: 'headers',
        headers: { url: 'http://127.0.0.1:9', db: 'erp_a', apiKey: 'b'.repeat(40), userId: '2' },
      },
      keyPolicy,
    },
  );
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

/** What identifies a request on the wire: its model, method and arguments as sent. */
const wire = (call: ErpCall): string =>
  JSON.stringify([call.model, call.method, call.argsJson ?? null, call.kwargsJson]);

describe('declared requests are what a tool sends', () => {
  it.each(TOOLS.map((tool) => [tool.name, tool] as const))('%s', async (_name, tool) => {
    const schema = tool.input();
    const own = new Set(Object.keys((schema as unknown as { shape: Record<string, unknown> }).shape));
    const declaredByAll: string[] = [];
    await fc.assert(
      fc.asyncProperty(
        ARGUMENTS,
        fc.constantFrom(17, 19, 20),
        fc.boolean(),
        fc.boolean(),
        async (drawn, major, withPolicy, withoutFormatted) => {
          const parsed = schema.safeParse(
            Object.fromEntries(Object.entries(drawn).filter(([key]) => own.has(key))),
          );
          fc.pre(parsed.success);
          const { deps, sent } = recordingErp(major, withoutFormatted);
          const request = inbound(withPolicy ? companiesPolicy() : undefined);
          const call = { tool, args: parsed.data };
          const declaring = declaredRequests(call, new ErpAccess(request, deps, CONTEXT, tool));
          const declared = await declaring.catch((refusal: unknown) => {
            // A rule may refuse a request (a method whose values the company rule cannot read).
            expect(refusal).toBeInstanceOf(KeyPolicyRefusedError);
            return undefined;
          });
          // The policy step sends the proxy's lookups only.
          for (const lookup of sent) expect(lookup.method).toBe('fields_get');
          if (declared === undefined) return;
          const lookups = sent.length;
          const ruled = new Set(Array.from(declared.ruled.values(), (value) => wire(value.call)));
          declaredByAll.push(...declared.requests.map((declaredRequest) => declaredRequest.method));
          if (!tool.writes)
            for (const declaredRequest of declared.requests)
              expect(isReadMethod(declaredRequest.method), declaredRequest.method).toBe(true);
          // A tool with a method of its own (asked before its lookups) declares only that method.
          if (tool.method !== undefined)
            for (const declaredRequest of declared.requests) expect(declaredRequest.method).toBe(tool.method);
          const error = await tool
            .run(
              parsed.data as never,
              new ErpAccess(request, deps, CONTEXT, tool, declared),
              declared.requests,
            )
            .then(
              () => undefined,
              (thrown: unknown) => thrown,
            );
          expect(error).not.toBeInstanceOf(InternalError);
          // Every request the run sent is a declared one, exactly as ruled.
          for (const call of sent.slice(lookups)) expect(ruled.has(wire(call)), wire(call)).toBe(true);
          if (withPolicy)
            for (const call of sent.slice(lookups))
              expect(JSON.parse(call.kwargsJson).context?.allowed_company_ids).toEqual([1]);
        },
      ),
      { numRuns: 80 },
    );
    // A tool declared with writes declares a method outside the read list (else it is over-declared).
    if (tool.writes) expect(declaredByAll.some((declaredMethod) => !isReadMethod(declaredMethod))).toBe(true);
  });

  it('ErpAccess refuses a read tool declaring a write, and any request not declared: -32603, nothing sent', async () => {
    const { deps, sent } = recordingErp(19);
    const request = inbound();
    const reader = new ErpAccess(request, deps, CONTEXT, { name: 'search_read', writes: false });
    await expect(
      reader.rule({ model: 'res.partner', method: 'action_archive', kwargs: { ids: [1] } }),
    ).rejects.toBeInstanceOf(InternalError);
    await expect(
      reader.rule({ model: 'res.partner', method: 'unlink', args: [[1]], kwargs: {} }),
    ).rejects.toBeInstanceOf(InternalError);
    // A request the declaration did not name, even one equal to a declared one, is not sent.
    const search = { model: 'res.partner', method: 'search_read', kwargs: { domain: [] } };
    const declared = {
      requests: [search],
      ruled: new Map([[search, await reader.rule(search)]]),
      refused: new Map(),
      version: undefined,
    };
    const running = new ErpAccess(request, deps, CONTEXT, { name: 'search_read', writes: false }, declared);
    await expect(running.send({ ...search })).rejects.toBeInstanceOf(InternalError);
    await expect(running.send(undefined)).rejects.toBeInstanceOf(InternalError);
    expect(sent).toEqual([]);
    await running.send(search);
    expect(sent.map((call) => call.method)).toEqual(['search_read']);
    // Declared with writes, a write is ruled.
    const writer = new ErpAccess(request, deps, CONTEXT, { name: 'call_method', writes: true });
    await expect(
      writer.rule({ model: 'res.partner', method: 'action_archive', kwargs: { ids: [1] } }),
    ).resolves.toMatchObject({ call: { method: 'action_archive' } });
  });

  const searchCount = TOOLS.find((tool) => tool.name === 'search_count');
  if (searchCount === undefined) throw new Error('search_count is declared');
  const request = () => inbound();

  it.each([
    [
      'declares a write though declared without writes',
      { declare: () => [{ model: 'res.partner', method: 'action_archive', kwargs: { ids: [1] } }] },
    ],
    [
      'sends a request it did not declare',
      {
        run: (_args: unknown, erp: ErpAccess) =>
          erp.send({ model: 'res.partner', method: 'search_count', kwargs: { domain: [] } }),
      },
    ],
    [
      'reads a lookup it does not name',
      { declare: (_args: unknown, lookups: { version(): unknown }) => lookups.version() },
    ],
  ] as const)(
    'a tool that %s: its call is -32603 to the client, logged, nothing sent',
    async (_what, lie) => {
      const lying = { ...searchCount, ...lie } as unknown as typeof searchCount;
      const { deps, sent } = recordingErp(19);
      const run = await runTool({ tool: lying, args: { model: 'res.partner' } }, request(), deps);
      expect(run.outcome.ok).toBe(false);
      expect(run.outcome.ok ? '' : run.outcome.text).toContain('-32603');
      expect(run.facts).toMatchObject({ outcome: 'proxy_error', errorCode: -32603 });
      expect(run.facts.internalError).toBeInstanceOf(Error);
      expect(sent).toEqual([]);
    },
  );

  it("aggregate's conditional read_group: a rule refusing it does not refuse the call; it refuses only if the run needs it", async () => {
    const aggregate = TOOLS.find((tool) => tool.name === 'aggregate');
    if (aggregate === undefined) throw new Error('aggregate is declared');
    const [entry] = parseProxyKeys(
      JSON.stringify({
        keys: [
          {
            name: 'k',
            key: 'key-0123456789abcdef',
            policy: { methods: { 'res.partner': ['formatted_read_group'] } },
          },
        ],
      }),
    );
    const args = { model: 'res.partner', group_by: ['country_id'] };
    for (const withoutFormatted of [false, true]) {
      const { deps, sent } = recordingErp(19, withoutFormatted);
      const run = await runTool({ tool: aggregate, args }, inbound(entry?.policy), deps);
      if (withoutFormatted) {
        // formatted_read_group 404'd; the read_group the key's methods do not list is refused, not sent.
        expect(run.outcome.ok ? '' : run.outcome.text).toContain('method read_group is not in');
      } else {
        expect(run.outcome.ok).toBe(true);
      }
      expect(sent.map((call) => call.method)).toEqual(['formatted_read_group']);
    }
  });
});
