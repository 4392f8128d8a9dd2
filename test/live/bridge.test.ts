/**
 * `ERP_V1_TRANSPORT=json2` against the real ERP (README, "One envelope for every ERP version"):
 * on Odoo 19+ every v1 action translated to JSON-2 gives the same answer as the same call over
 * `/jsonrpc`, and ERP errors keep v1's shape; on Odoo 16-18 (no JSON-2) v1 stays on `/jsonrpc`
 * under every setting. Records are created per side and deleted again.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_PROXY_KEY } from '../support/proxy-harness.ts';
import {
  adminInstance,
  discoverIds,
  LIVE_BEFORE_19,
  LIVE19,
  type LiveProxy,
  liveName,
  type ProxyAnswer,
  resultOf,
  useCleanup,
  useLiveProxy,
} from './live-env.ts';

/** What must agree between the two protocols: the result, or code, class and message of an error. */
function comparable(answer: ProxyAnswer): unknown {
  const { envelope } = answer;
  if (!envelope.error) return { status: answer.status, result: envelope.result };
  const { code, message, data } = envelope.error;
  return { status: answer.status, code, message, name: data?.name };
}

const LIMITED = LIVE19.limited;

describe.skipIf(LIVE19.skipReason !== undefined)(LIVE19.title('v1 over JSON-2 against the live ERP'), () => {
  const native = useLiveProxy(LIVE19, { ERP_V1_TRANSPORT: 'jsonrpc' });
  const bridged = useLiveProxy(LIVE19, { ERP_V1_TRANSPORT: 'json2' });
  const cleanup = useCleanup(LIVE19);
  let companies: number[] = [];

  beforeAll(async () => {
    companies = await discoverIds(LIVE19, 'res.partner', [['is_company', '=', true]], 3);
  });

  /** The same call both ways. */
  const both = async (run: (proxy: LiveProxy) => Promise<ProxyAnswer>) => ({
    jsonrpc: await run(native()),
    json2: await run(bridged()),
  });

  const domain = () => [['id', 'in', companies]];
  const READ_ONLY: ReadonlyArray<[string, Record<string, unknown> | (() => Record<string, unknown>)]> = [
    ['search_count', () => ({ action: 'search_count', params: [domain()] })],
    [
      'search, offset/limit/order by position',
      () => ({ action: 'search', params: [domain(), 0, 2, 'id desc'] }),
    ],
    ['read, fields by position', () => ({ action: 'read', params: [companies, ['name', 'is_company']] })],
    [
      'fields_get',
      { action: 'fields_get', params: [['name', 'email']], keyword: { attributes: ['type', 'string'] } },
    ],
    [
      'search_read with context',
      () => ({
        action: 'search_read',
        params: [domain()],
        keyword: { fields: ['name'], limit: 2, order: 'id asc', context: { lang: 'en_US' } },
      }),
    ],
    [
      'call_method name_search (positional name, from /doc-bearer)',
      { action: 'call_method', fn_name: 'name_search', params: ['a'], keyword: { limit: 5 } },
    ],
    [
      'call_method read_group (deprecated: built-in table)',
      () => ({
        action: 'call_method',
        fn_name: 'read_group',
        params: [domain(), ['is_company'], ['is_company']],
      }),
    ],
    [
      'an unknown field in the domain (ERP error)',
      { action: 'search_count', params: [[['no_such_field', '=', 1]]] },
    ],
    ['a missing record to write (ERP error)', { action: 'write', params: [[999999999], { name: 'x' }] }],
    ['create without a name (validation error)', { action: 'create', params: [{ email: 'x@example.com' }] }],
  ];

  it.each(READ_ONLY)('%s: same answer', async (_name, body) => {
    const request = typeof body === 'function' ? body() : body;
    const { jsonrpc, json2 } = await both((proxy) => proxy.v1(request));
    expect(comparable(json2)).toEqual(comparable(jsonrpc));
  });

  it('create from one dict (bare id), write, copy, action_archive (null), unlink: same shapes and effects', async () => {
    for (const [side, proxy] of [
      ['jsonrpc', native()],
      ['json2', bridged()],
    ] as const) {
      const created = await proxy.v1({ action: 'create', params: [{ name: liveName(`bridge ${side}`) }] });
      expect(created.envelope.error, side).toBeNull();
      const id = created.envelope.result as number;
      expect(Number.isInteger(id), side).toBe(true);
      cleanup.track('res.partner', id);
      const listed = await proxy.v1({
        action: 'create',
        params: [[{ name: liveName(`bridge list ${side}`) }]],
      });
      const listedIds = listed.envelope.result as number[];
      expect(Array.isArray(listedIds), side).toBe(true);
      for (const other of listedIds) cleanup.track('res.partner', other);

      const written = await proxy.v1({ action: 'write', params: [[id], { phone: '+1 555 0199' }] });
      expect(written.envelope.result, side).toBe(true);
      const read = await proxy.v1({ action: 'read', params: [[id], ['phone']] });
      expect((read.envelope.result as Array<{ phone: string }>)[0]?.phone, side).toBe('+1 555 0199');

      const copied = await proxy.v1({
        action: 'call_method',
        fn_name: 'copy',
        params: [[id], { name: liveName('copy') }],
      });
      const copies = copied.envelope.result as number[];
      expect(Array.isArray(copies) && copies.length === 1, side).toBe(true);
      for (const other of copies) cleanup.track('res.partner', other);

      const archived = await proxy.v1({ action: 'call_method', fn_name: 'action_archive', params: [[id]] });
      expect(archived.envelope, side).toMatchObject({ result: null, error: null });

      const unlinked = await proxy.v1({ action: 'unlink', params: [[...copies, ...listedIds, id]] });
      expect(unlinked.envelope.result, side).toBe(true);
    }
  });

  it.skipIf(LIMITED === undefined)(
    'an access error keeps v1 shape: code 0, same class and message',
    async () => {
      const limited = { ...adminInstance(LIVE19), user_id: LIMITED?.uid, api_key: LIMITED?.key ?? '' };
      const { jsonrpc, json2 } = await both((proxy) =>
        proxy.v1({ action: 'create', params: [{ name: liveName('limited') }] }, limited),
      );
      expect(json2.envelope.error?.code).toBe(0);
      expect(comparable(json2)).toEqual(comparable(jsonrpc));
    },
  );

  it('a wrong key: code 0 both ways; data.name is what each protocol says', async () => {
    const wrong = { ...adminInstance(LIVE19), api_key: 'not-a-valid-key-0000000000' };
    const { jsonrpc, json2 } = await both((proxy) =>
      proxy.v1({ action: 'search_count', params: [[]] }, wrong),
    );
    expect(jsonrpc.envelope.error?.code).toBe(0);
    expect(json2.envelope.error?.code).toBe(0);
    expect(jsonrpc.envelope.error?.data?.name).toBe('odoo.exceptions.AccessDenied');
    expect(json2.envelope.error?.data?.name).toBe('werkzeug.exceptions.Unauthorized');
  });

  it('the json2 proxy served its calls over JSON-2, the other over /jsonrpc (metrics)', async () => {
    const key = { 'x-api-key': TEST_PROXY_KEY };
    const bridgedMetrics = (await bridged().harness.get('/_/metrics', key)).text;
    const nativeMetrics = (await native().harness.get('/_/metrics', key)).text;
    expect(bridgedMetrics).toMatch(/^erp_proxy_upstream_calls\{api="v1",protocol="json2"\} [1-9]/m);
    expect(bridgedMetrics).not.toMatch(/protocol="jsonrpc"\} [1-9]/);
    expect(nativeMetrics).toMatch(/^erp_proxy_upstream_calls\{api="v1",protocol="jsonrpc"\} [1-9]/m);
  });
});

describe.each(LIVE_BEFORE_19)('$label', (server) => {
  describe.skipIf(server.skipReason !== undefined)(
    server.title('v1 with ERP_V1_TRANSPORT=auto and json2 below 19: /jsonrpc'),
    () => {
      describe.each(['auto', 'json2'] as const)('ERP_V1_TRANSPORT=%s', (transport) => {
        const proxy = useLiveProxy(server, { ERP_V1_TRANSPORT: transport });

        it('runs the v1 calls over /jsonrpc, as the README matrix says', async () => {
          const [id] = await discoverIds(server, 'res.partner', [], 1);
          expect(resultOf(await proxy().v1({ action: 'search_count', params: [[['id', '=', id]]] }))).toBe(1);
          const metrics = (await proxy().harness.get('/_/metrics', { 'x-api-key': TEST_PROXY_KEY })).text;
          expect(metrics).toMatch(/^erp_proxy_upstream_calls\{api="v1",protocol="jsonrpc"\} [1-9]/m);
          expect(metrics).not.toMatch(/protocol="json2"\} [1-9]/);
        });
      });
    },
  );
});
