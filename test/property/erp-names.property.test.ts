/**
 * Names are names on every route and transport (issue 54, item 1; docs/guide/policies.md, "What each
 * rule reads"): generated model and method names with `/`, `?`, `#`, `%`, `..`, spaces, control and
 * non-ASCII characters go through v1 (over `/jsonrpc`, over JSON-2 by `ERP_V1_TRANSPORT=json2` and by
 * `auto` to an ERP 22), v2 (over JSON-2, and over `/jsonrpc` to an ERP 17 by `ERP_V2_TRANSPORT=auto`)
 * and MCP's `call_method` and `search_read`. The ERP is never asked for a path other than the one the
 * checked names make, and a name off the grammar reaches the ERP by no route: the call is refused
 * (-32600 on v1, -32007 on v2, a tool error on MCP) and nothing of it is sent.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isMethodName, isModelName } from '../../lambdas/platform/erp-names.ts';
import type { ErpMode } from '../erp-double/types.ts';
import { USERS, useErpAndProxy } from '../support/fixtures.ts';
import { TEST_PROXY_KEY } from '../support/proxy-harness.ts';

const admin = USERS.adminA;

/** Pieces a hostile name is made of, with enough plain ones to make valid names too. */
const PIECES = [
  '/',
  '?',
  '#',
  '%',
  '..',
  '.',
  ' ',
  '\u0000',
  '\n',
  '\t',
  '\\',
  '&',
  '=',
  ';',
  'é',
  '\u202e',
  '\u200b',
  '%2F',
  '%3f',
  '%2e%2e',
  '_',
  'a',
  'res',
  'partner',
  'Z9',
] as const;

const nameArb = fc.oneof(
  fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 8 }).map((pieces) => pieces.join('')),
  fc
    .tuple(
      fc.constantFrom('res.partner', 'res.users', 'search_read', 'write', 'read'),
      fc.array(fc.constantFrom(...PIECES), { maxLength: 4 }).map((pieces) => pieces.join('')),
    )
    .map(([name, tail]) => `${name}${tail}`),
  fc.constantFrom(
    'res.partner/write?',
    'res.partner%2Fwrite',
    '../res.users',
    'res.partner/../res.users',
    'res.partner#x',
    'res.partner?x=1',
    'res.partner ',
    'res..partner',
    'res.partner.',
    'read/../write',
    'res.partner',
    'read',
  ),
);

/** The paths that carry no name: the version lookups and `/jsonrpc`. */
const NAMELESS = new Set(['/jsonrpc', '/web/version', '/web/webclient/version_info']);

/** Every path the ERP was asked for since `before` is nameless, or made of the checked names. */
function expectOnlyCheckedPaths(
  requests: readonly { path: string; body: string }[],
  model: string,
  method: string,
): void {
  const valid = isModelName(model) && isMethodName(method);
  for (const request of requests) {
    const allowed =
      NAMELESS.has(request.path) ||
      (valid &&
        (request.path === `/json/2/${model}/${method}` || request.path === `/doc-bearer/${model}.json`));
    expect(
      allowed,
      `asked for ${JSON.stringify(request.path)} (model ${JSON.stringify(model)}, method ${JSON.stringify(method)})`,
    ).toBe(true);
    if (!valid && request.path === '/jsonrpc') {
      // Over /jsonrpc the names travel in the body: a refused name never does.
      expect(request.body.includes('execute_kw')).toBe(false);
    }
  }
  if (!valid) {
    expect(
      requests.filter(
        (request) => request.path.startsWith('/json/2') || request.path.startsWith('/doc-bearer'),
      ),
    ).toEqual([]);
  }
}

const ROUTES: readonly {
  readonly label: string;
  readonly mode: ErpMode;
  readonly env: Record<string, string>;
  readonly api: 'v1' | 'v2' | 'mcp';
}[] = [
  { label: 'v1 over /jsonrpc (ERP 17)', mode: '17', env: {}, api: 'v1' },
  {
    label: 'v1 over JSON-2 (ERP_V1_TRANSPORT=json2, ERP 19)',
    mode: '19',
    env: { ERP_V1_TRANSPORT: 'json2' },
    api: 'v1',
  },
  { label: 'v1 over JSON-2 (auto, ERP 22)', mode: '22', env: {}, api: 'v1' },
  { label: 'v2 over JSON-2 (ERP 19)', mode: '19', env: {}, api: 'v2' },
  {
    label: 'v2 over /jsonrpc (ERP_V2_TRANSPORT=auto, ERP 17)',
    mode: '17',
    env: { ERP_V2_TRANSPORT: 'auto' },
    api: 'v2',
  },
  { label: 'MCP over JSON-2 (ERP 19)', mode: '19', env: { MCP_WRITE_TOOLS: 'true' }, api: 'mcp' },
  { label: 'MCP over /jsonrpc (ERP 17)', mode: '17', env: { MCP_WRITE_TOOLS: 'true' }, api: 'mcp' },
];

describe.each(ROUTES)('names are names: $label', ({ mode, env, api }) => {
  const { double, proxy } = useErpAndProxy({ mode }, { env });
  const instance = () => ({ url: double.url, db: 'erp_a', api_key: admin.apiKey, user_id: admin.uid });

  /** One call naming `model` and `method`; answers the error code, or `undefined` when it ran. */
  async function send(model: string, method: string, asAction: boolean): Promise<number | undefined> {
    if (api === 'mcp') {
      const tool = asAction
        ? { name: 'search_read', arguments: { model, limit: 1, fields: ['name'] } }
        : { name: 'call_method', arguments: { model, method, ids: [1] } };
      const answer = await proxy.post(
        '/mcp',
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: tool },
        {
          authorization: `Bearer ${TEST_PROXY_KEY}`,
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          'x-erp-url': double.url,
          'x-erp-db': 'erp_a',
          'x-erp-api-key': admin.apiKey,
          'x-erp-user-id': String(admin.uid),
        },
      );
      const message = answer.json as {
        error?: { code: number };
        result?: { isError?: boolean; structuredContent?: { error?: { code?: number } } };
      };
      if (message.error !== undefined) return message.error.code;
      return message.result?.isError === true
        ? (message.result.structuredContent?.error?.code ?? -1)
        : undefined;
    }
    const body =
      api === 'v1'
        ? asAction
          ? { id: 'n', action: 'read', model_id: model, params: [[1], ['name']], erp_instance: instance() }
          : {
              id: 'n',
              action: 'call_method',
              fn_name: method,
              model_id: model,
              params: [[1]],
              erp_instance: instance(),
            }
        : { id: 'n', model_id: model, method, kwargs: { ids: [1] }, erp_instance: instance() };
    const answer = await proxy.post(api === 'v1' ? '/api/erp/execute' : '/v2/erp/execute', body);
    if (answer.headers.get('content-type')?.startsWith('text/plain')) return 400;
    const envelope = answer.json as { error: { code: number } | null };
    return envelope.error === null ? undefined : envelope.error.code;
  }

  it('the ERP is asked only for the paths the checked names make; a name off the grammar is refused before the ERP', async () => {
    await fc.assert(
      fc.asyncProperty(nameArb, nameArb, fc.boolean(), async (model, rawMethod, asAction) => {
        // A v1 action and MCP's search_read name their method themselves; v1's fn_name is trimmed.
        const method =
          asAction && api !== 'v2'
            ? api === 'v1'
              ? 'read'
              : 'search_read'
            : api === 'v1'
              ? rawMethod.trim()
              : rawMethod;
        const before = double.requests.length;
        const code = await send(model, rawMethod, asAction && api !== 'v2');
        const sent = double.requests.slice(before);
        expectOnlyCheckedPaths(sent, model, method);
        if (!(isModelName(model) && isMethodName(method))) {
          const shown = `model ${JSON.stringify(model)}, method ${JSON.stringify(method)}`;
          expect(code, shown).not.toBeUndefined();
          if (api === 'v2') expect(code, shown).toBe(-32007);
          // v1: the schema reads model_id first; an empty fn_name is -32002.
          if (api === 'v1') expect(code, shown).toBe(!isModelName(model) || method !== '' ? -32600 : -32002);
          expect(
            sent.filter((request) => !NAMELESS.has(request.path) || request.body.includes('execute_kw')),
          ).toEqual([]);
        }
      }),
      { numRuns: 60 },
    );
  });
});
