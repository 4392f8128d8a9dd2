/**
 * "One envelope for every ERP version" (README): every v1 action in every `ERP_V1_TRANSPORT`
 * mode against ERP 16, 17, 18, 19, 20 and 21 (with and without /jsonrpc) and 22 (the double), each answer compared with the same call
 * over `/jsonrpc` on the same version (without /jsonrpc: on ERP 19; the native v1 answer), and which protocol served it; then v2 with
 * `ERP_V2_TRANSPORT` against the same versions; then the calls written for ERP 16-19 that ERP 20
 * and later no longer take (README, "ERP 20 and 21").
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { ErpDouble, ErpDoubleOptions } from '../erp-double/index.ts';
import { type Envelope, USERS, useErpAndProxy } from '../support/fixtures.ts';
import { type ProxyHarness, TEST_PROXY_KEY } from '../support/proxy-harness.ts';

const admin = USERS.adminA;
type Call = (body: Record<string, unknown>) => Promise<Envelope>;

function v1Caller(double: ErpDouble, proxy: ProxyHarness): Call {
  return async (body) => {
    const answer = await proxy.post('/api/erp/execute', {
      id: 'b1',
      model_id: 'res.partner',
      erp_instance: { url: double.url, db: 'erp_a', user_id: admin.uid, api_key: admin.apiKey },
      ...body,
    });
    return answer.json as Envelope;
  };
}

const companies = [['is_company', '=', true]];

/** read_group in its 16-19 form, as 19 takes it and 20+ no longer does (positional, `lazy` by name). */
const OLD_READ_GROUP = {
  action: 'call_method',
  fn_name: 'read_group',
  params: [[], ['is_company'], ['is_company']],
  keyword: { lazy: true },
};

/** The 9 actions, and `call_method` on a documented, an undocumented and a `None` method. */
const CASES: ReadonlyArray<{
  name: string;
  /** A call of ERP 16-19 only (ERP 20+: the block "calls written for ERP 16-19" below). */
  upTo19?: boolean;
  run: (call: Call) => Promise<Envelope>;
}> = [
  { name: 'search_count', run: (call) => call({ action: 'search_count', params: [companies] }) },
  {
    name: 'search (offset, limit, order by position)',
    run: (call) => call({ action: 'search', params: [companies, 1, 3, 'name desc'] }),
  },
  {
    name: 'read (fields by position)',
    run: async (call) => {
      const ids = (await call({ action: 'search', params: [[]], keyword: { limit: 3 } })).result;
      return call({ action: 'read', params: [ids, ['name', 'country_id']] });
    },
  },
  {
    name: 'fields_get (by position and by name)',
    run: (call) =>
      call({ action: 'fields_get', params: [['name', 'email']], keyword: { attributes: ['type'] } }),
  },
  {
    name: 'search_read (keyword with context)',
    run: (call) =>
      call({
        action: 'search_read',
        params: [companies],
        keyword: { fields: ['name'], limit: 2, offset: 1, order: 'name asc', context: { lang: 'en_US' } },
      }),
  },
  {
    name: 'create from one dict (a bare id) and read back',
    run: async (call) => {
      const created = await call({ action: 'create', params: [{ name: 'Bridge Co', is_company: true }] });
      const read = await call({ action: 'read', params: [[created.result], ['name']] });
      return { ...created, result: [created.result, read.result] };
    },
  },
  {
    name: 'create from a list (a list of ids)',
    run: (call) => call({ action: 'create', params: [[{ name: 'One' }, { name: 'Two' }]] }),
  },
  {
    name: 'write',
    run: async (call) => {
      const ids = (await call({ action: 'search', params: [companies], keyword: { limit: 1 } })).result;
      const written = await call({ action: 'write', params: [ids, { phone: '+1 555 0100' }] });
      const read = await call({ action: 'read', params: [ids, ['phone']] });
      return { ...written, result: [written.result, read.result] };
    },
  },
  {
    name: 'unlink',
    run: async (call) => {
      const created = await call({ action: 'create', params: [{ name: 'Doomed' }] });
      const unlinked = await call({ action: 'unlink', params: [[created.result]] });
      const count = await call({ action: 'search_count', params: [[['id', '=', created.result]]] });
      return { ...unlinked, result: [unlinked.result, count.result] };
    },
  },
  {
    name: 'call_method name_search (documented, name by position)',
    run: (call) => call({ action: 'call_method', fn_name: 'name_search', params: ['Azure'] }),
  },
  {
    name: 'call_method copy (record method: ids then default)',
    run: async (call) => {
      const ids = (await call({ action: 'search', params: [companies], keyword: { limit: 1 } })).result;
      return call({ action: 'call_method', fn_name: 'copy', params: [ids, { name: 'Copied' }] });
    },
  },
  {
    name: 'call_method action_archive (returns None: result null)',
    run: async (call) => {
      const ids = (await call({ action: 'search', params: [companies], keyword: { limit: 1 } })).result;
      return call({ action: 'call_method', fn_name: 'action_archive', params: [ids] });
    },
  },
  {
    name: 'call_method read_group (deprecated, not documented: the built-in table)',
    upTo19: true,
    run: (call) => call(OLD_READ_GROUP),
  },
  {
    name: 'an ERP error (a validation error: create without a name)',
    run: (call) => call({ action: 'create', params: [{ email: 'x@example.com' }] }),
  },
];

/** An envelope with what differs between ERP builds and protocols left out (tracebacks). */
function comparable(envelope: Envelope): unknown {
  if (!envelope.error) return { result: envelope.result };
  const { code, message, data } = envelope.error;
  return { code, message, name: data?.name, dataMessage: data?.message };
}

/** An imitated ERP: its version, and whether it kept `/jsonrpc`. */
interface Target {
  readonly erp: ErpDoubleOptions & { readonly mode: NonNullable<ErpDoubleOptions['mode']> };
  /** ERP 22, or an ERP 19-21 whose front proxy blocks /jsonrpc. */
  readonly noJsonRpc: boolean;
}

const TARGETS: ReadonlyArray<readonly [string, Target]> = [
  ['16', { erp: { mode: '16' }, noJsonRpc: false }],
  ['17', { erp: { mode: '17' }, noJsonRpc: false }],
  ['18', { erp: { mode: '18' }, noJsonRpc: false }],
  ['19', { erp: { mode: '19' }, noJsonRpc: false }],
  ['20', { erp: { mode: '20' }, noJsonRpc: false }],
  ['20 without /jsonrpc', { erp: { mode: '20', jsonRpc: false }, noJsonRpc: true }],
  ['21', { erp: { mode: '21' }, noJsonRpc: false }],
  ['21 without /jsonrpc', { erp: { mode: '21', jsonRpc: false }, noJsonRpc: true }],
  ['22', { erp: { mode: '22' }, noJsonRpc: true }],
];
const V1_TRANSPORTS = ['auto', 'json2', 'jsonrpc'] as const;

/** Which protocol serves a v1 execute call, by transport setting and ERP version. */
function expectedProtocol(
  transport: (typeof V1_TRANSPORTS)[number],
  target: Target,
): 'jsonrpc' | 'json2' | 'none' {
  if (target.noJsonRpc) return transport === 'jsonrpc' ? 'none' : 'json2';
  if (transport === 'json2' && Number(target.erp.mode) >= 19) return 'json2';
  return 'jsonrpc';
}

describe.each(TARGETS)('v1 against ERP %s', (_label, target) => {
  // The native answer: the same version over /jsonrpc (without /jsonrpc: ERP 19's).
  const reference = useErpAndProxy(
    { mode: target.noJsonRpc ? '19' : target.erp.mode },
    { env: { ERP_V1_TRANSPORT: 'jsonrpc' } },
  );
  const expected = new Map<string, unknown>();

  describe.each(V1_TRANSPORTS)('ERP_V1_TRANSPORT=%s', (transport) => {
    const { double, proxy } = useErpAndProxy(target.erp, { env: { ERP_V1_TRANSPORT: transport } });
    beforeEach(() => {
      double.reset();
      reference.double.reset();
    });

    const cases = CASES.filter((c) => !c.upTo19 || Number(target.erp.mode) < 20);
    it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, testCase) => {
      let want = expected.get(testCase.name);
      if (want === undefined) {
        want = comparable(await testCase.run(v1Caller(reference.double, reference.proxy)));
        expected.set(testCase.name, want);
        reference.double.reset();
      }
      const got = await testCase.run(v1Caller(double, proxy));
      const protocol = expectedProtocol(transport, target);
      if (protocol === 'none') {
        expect(got.error?.code).toBe(-32005);
        expect(got.error?.message).toMatch(/22 or later.*v2/s);
        return;
      }
      expect(comparable(got)).toEqual(want);
      const execute = double.requests.filter((r) => r.path === '/jsonrpc' || r.path.startsWith('/json/2/'));
      const callPaths = execute.filter((r) => !r.body.includes('"service":"common"')).map((r) => r.path);
      if (protocol === 'json2') {
        expect(callPaths.filter((path) => path.startsWith('/json/2/')).length).toBeGreaterThan(0);
        // No /jsonrpc, auto mode: one 404 from /jsonrpc, the first time only (then the version
        // answer, which the 404 made the proxy ask for, or the JSON-2 route is remembered).
        expect(callPaths.filter((path) => path === '/jsonrpc').length).toBeLessThanOrEqual(
          transport === 'auto' && testCase === CASES[0] ? 1 : 0,
        );
      } else expect(callPaths.every((path) => path === '/jsonrpc')).toBe(true);
      // Every /jsonrpc call carries the database header.
      for (const request of double.requests.filter(
        (r) => r.path === '/jsonrpc' && r.body.includes('execute_kw'),
      )) {
        expect(request.headers['x-odoo-database']).toBe('erp_a');
      }
      // The standard actions never ask for the method documentation.
      if (!testCase.name.startsWith('call_method')) {
        expect(double.requests.some((r) => r.path.startsWith('/doc-bearer/'))).toBe(false);
      }
    });
  });
});

type V2Call = (
  method: string,
  kwargs: Record<string, unknown>,
  instance?: Record<string, unknown>,
) => Promise<Envelope>;

function v2Caller(double: ErpDouble, proxy: ProxyHarness, model = 'res.partner'): V2Call {
  return async (method, kwargs, instance = {}) => {
    const answer = await proxy.post('/v2/erp/execute', {
      id: 'b2',
      model_id: model,
      method,
      kwargs,
      erp_instance: { url: double.url, db: 'erp_a', user_id: admin.uid, api_key: admin.apiKey, ...instance },
    });
    return answer.json as Envelope;
  };
}

/** v2 calls, each with what must agree with JSON-2's own answer (`code`: the error code and `data.name` only). */
const V2_CASES: ReadonlyArray<{
  name: string;
  compare?: 'code';
  model?: string;
  run: (call: V2Call) => Promise<Envelope>;
}> = [
  { name: 'search_count', run: (call) => call('search_count', { domain: companies }) },
  {
    name: 'search',
    run: (call) => call('search', { domain: companies, offset: 1, limit: 3, order: 'name desc' }),
  },
  {
    name: 'read (ids first, fields by name)',
    run: async (call) => {
      const ids = (await call('search', { domain: [], limit: 3 })).result;
      return call('read', { ids, fields: ['name', 'country_id'] });
    },
  },
  {
    name: 'fields_get',
    run: (call) => call('fields_get', { allfields: ['name', 'email'], attributes: ['type'] }),
  },
  {
    name: 'search_read with context',
    run: (call) =>
      call('search_read', { domain: companies, fields: ['name'], limit: 2, context: { lang: 'en_US' } }),
  },
  {
    name: 'create from a list (a list of ids)',
    run: (call) => call('create', { vals_list: [{ name: 'A' }, { name: 'B' }] }),
  },
  {
    name: 'create from one dict (still a list)',
    run: (call) => call('create', { vals_list: { name: 'Solo' } }),
  },
  {
    name: 'write',
    run: async (call) => {
      const ids = (await call('search', { domain: companies, limit: 1 })).result;
      return call('write', { ids, vals: { phone: '+1 555 0101' } });
    },
  },
  {
    name: 'unlink',
    run: async (call) => {
      const ids = (await call('create', { vals_list: [{ name: 'Doomed' }] })).result;
      return call('unlink', { ids });
    },
  },
  { name: 'name_search', run: (call) => call('name_search', { name: 'Azure' }) },
  {
    name: 'copy (a list of ids)',
    run: async (call) => {
      const ids = (await call('search', { domain: companies, limit: 1 })).result;
      return call('copy', { ids, default: { name: 'Copied' } });
    },
  },
  {
    name: 'action_archive (null)',
    run: async (call) => {
      const ids = (await call('search', { domain: companies, limit: 1 })).result;
      return call('action_archive', { ids });
    },
  },
  {
    name: 'a validation error (422)',
    run: (call) => call('create', { vals_list: [{ email: 'x@example.com' }] }),
  },
  {
    name: 'ids on a model method (422)',
    compare: 'code',
    run: (call) => call('search_count', { ids: [1], domain: [] }),
  },
  {
    name: 'an unknown model (404)',
    compare: 'code',
    model: 'res.partnerx',
    run: (call) => call('search', { domain: [] }),
  },
  {
    name: 'a bad key (401)',
    compare: 'code',
    run: (call) => call('search_count', { domain: [] }, { api_key: 'not-a-valid-key-0000' }),
  },
];

const V2_TRANSPORTS = ['json2', 'auto'] as const;

/** What a v2 caller tells failures apart by: the code and the exception's name. */
const codeAndName = (envelope: Envelope) => ({
  code: envelope.error?.code,
  name: envelope.error?.data?.name,
});

describe.each(TARGETS)('v2 against ERP %s', (_label, target) => {
  const reference = useErpAndProxy({ mode: '19' });
  const expected = new Map<string, unknown>();
  const old = Number(target.erp.mode) < 19;

  describe.each(V2_TRANSPORTS)('ERP_V2_TRANSPORT=%s', (transport) => {
    const { double, proxy } = useErpAndProxy(target.erp, { env: { ERP_V2_TRANSPORT: transport } });
    beforeEach(() => {
      double.reset();
      reference.double.reset();
    });

    it.each(V2_CASES.map((c) => [c.name, c] as const))('%s', async (name, testCase) => {
      let want = expected.get(name);
      if (want === undefined) {
        const native = await testCase.run(v2Caller(reference.double, reference.proxy, testCase.model));
        want = testCase.compare === 'code' ? codeAndName(native) : comparable(native);
        expected.set(name, want);
        reference.double.reset();
      }
      const got = await testCase.run(v2Caller(double, proxy, testCase.model));
      if (old && transport === 'json2') {
        expect(got.error?.code).toBe(-32006);
        return;
      }
      expect(testCase.compare === 'code' ? codeAndName(got) : comparable(got)).toEqual(want);
      const paths = double.requests.map((r) => r.path);
      if (old) {
        // Over execute_kw; JSON-2 is tried (404) only until the version is known, once per target.
        // ids sent to a model method are refused as JSON-2 refuses them, before any call.
        const refusedBeforeCall = testCase.name.startsWith('ids on a model method');
        expect(double.requests.some((r) => r.path === '/jsonrpc' && r.body.includes('execute_kw'))).toBe(
          !refusedBeforeCall,
        );
        expect(paths.filter((path) => path.startsWith('/json/2/')).length).toBeLessThanOrEqual(
          testCase === V2_CASES[0] ? 1 : 0,
        );
      } else {
        expect(paths.filter((path) => path === '/jsonrpc')).toEqual([]);
      }
    });
  });
});

describe('v2 over /jsonrpc (ERP_V2_TRANSPORT=auto) needs erp_instance.user_id', () => {
  const { double, proxy } = useErpAndProxy({ mode: '17' }, { env: { ERP_V2_TRANSPORT: 'auto' } });

  it('-32006 naming user_id when it is missing; the ERP never runs the call', async () => {
    const answer = await proxy.post('/v2/erp/execute', {
      id: 'no-uid',
      model_id: 'res.partner',
      method: 'search_count',
      kwargs: { domain: [] },
      erp_instance: { url: double.url, db: 'erp_a', api_key: admin.apiKey },
    });
    const envelope = answer.json as Envelope;
    expect(answer.status).toBe(502);
    expect(envelope.error?.code).toBe(-32006);
    expect(envelope.error?.message).toMatch(/user_id/);
    expect(double.requests.filter((r) => r.body.includes('execute_kw'))).toEqual([]);
  });
});

/** v1 calls written for ERP 16-19 that ERP 20 and later no longer take (README, "ERP 20 and 21"). */
const OLD_FORM_CASES: ReadonlyArray<{
  name: string;
  method: string;
  run: (call: Call) => Promise<Envelope>;
  /** What the ERP answers when the call reaches it untranslated (over /jsonrpc). */
  erpAnswer: { name: string; message: RegExp };
  /** The -32600 message when it would be translated to JSON-2. */
  refusal: RegExp;
}> = [
  {
    name: 'read_group in its 16-19 form (positional, lazy by name)',
    method: 'read_group',
    run: (call) => call(OLD_READ_GROUP),
    erpAnswer: { name: 'builtins.TypeError', message: /unexpected keyword argument 'lazy'/ },
    refusal:
      /read_group is written in its ERP 16-19 form.*formatted_read_group\(domain, groupby, aggregates.*through call_method/s,
  },
  {
    name: 'read_group in its 16-19 form (positional only)',
    method: 'read_group',
    run: (call) =>
      call({ action: 'call_method', fn_name: 'read_group', params: [[], ['id:sum'], ['is_company']] }),
    erpAnswer: { name: 'builtins.ValueError', message: /Granularity set on a no-datetime field/ },
    refusal: /read_group is written in its ERP 16-19 form/,
  },
  {
    name: 'toggle_active',
    method: 'toggle_active',
    run: async (call) => {
      const ids = (await call({ action: 'search', params: [companies], keyword: { limit: 1 } })).result;
      return call({ action: 'call_method', fn_name: 'toggle_active', params: [ids] });
    },
    erpAnswer: { name: 'builtins.AttributeError', message: /toggle_active' does not exist/ },
    refusal: /toggle_active does not exist on ERP \d+.*action_archive.*action_unarchive/s,
  },
];

const TWENTY_TARGETS = TARGETS.filter(([, target]) => Number(target.erp.mode) >= 20);

describe.each(TWENTY_TARGETS)('v1 calls written for ERP 16-19, against ERP %s', (_label, target) => {
  describe.each(V1_TRANSPORTS)('ERP_V1_TRANSPORT=%s', (transport) => {
    const { double, proxy } = useErpAndProxy(target.erp, { env: { ERP_V1_TRANSPORT: transport } });
    beforeEach(() => double.reset());

    it.each(OLD_FORM_CASES.map((c) => [c.name, c] as const))('%s', async (_name, testCase) => {
      const got = await testCase.run(v1Caller(double, proxy));
      const protocol = expectedProtocol(transport, target);
      const overJson2 = double.requests.filter((r) => r.path === `/json/2/res.partner/${testCase.method}`);
      const overJsonRpc = double.requests.filter(
        (r) => r.path === '/jsonrpc' && r.body.includes(`"${testCase.method}"`),
      );
      if (protocol === 'none') {
        expect(got.error?.code).toBe(-32005);
      } else if (protocol === 'json2') {
        // Refused before the ERP, results never reshaped.
        expect(got.error?.code).toBe(-32600);
        expect(got.error?.message).toMatch(testCase.refusal);
        expect(got.result ?? null).toBeNull();
        // Nothing reached JSON-2 (a /jsonrpc that answered 404 ran nothing either).
        expect(overJson2).toEqual([]);
      } else {
        // Over /jsonrpc, untranslated: Odoo's own error.
        expect(got.error?.code).toBe(0);
        expect(got.error?.data?.name).toBe(testCase.erpAnswer.name);
        expect(got.error?.message).toMatch(testCase.erpAnswer.message);
        expect(overJsonRpc.length).toBe(1);
        expect(overJson2).toEqual([]);
      }
    });

    it('read_group in its 20 form through call_method: the same tuples over either protocol', async () => {
      const got = await v1Caller(
        double,
        proxy,
      )({
        action: 'call_method',
        fn_name: 'read_group',
        params: [companies, ['country_id'], ['__count']],
        keyword: { order: 'country_id' },
      });
      if (expectedProtocol(transport, target) === 'none') {
        expect(got.error?.code).toBe(-32005);
        return;
      }
      expect(got.error ?? null).toBeNull();
      const groups = got.result as unknown[][];
      expect(groups.length).toBeGreaterThan(0);
      expect(groups.every((group) => group.length === 2 && typeof group[1] === 'number')).toBe(true);
    });
  });
});

describe('operators see which way calls went', () => {
  const { double, proxy } = useErpAndProxy(
    { mode: '19' },
    { env: { ERP_V1_TRANSPORT: 'json2', ERP_V2_TRANSPORT: 'auto' } },
  );
  const key = { 'x-api-key': TEST_PROXY_KEY };

  it('/_/about shows the transports in effect', async () => {
    const about = (await proxy.get('/_/about')).json as { transports: unknown };
    expect(about.transports).toEqual({ v1: 'json2', v2: 'auto' });
  });

  it('the request log line and the metrics name the protocol that served the call', async () => {
    const written: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      await v1Caller(double, proxy)({ action: 'search_count', params: [[]] });
    } finally {
      spy.mockRestore();
    }
    const line = written
      .flatMap((chunk) => chunk.split('\n'))
      .filter((text) => text.startsWith('{'))
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((entry) => entry.message === 'request' && entry.api === 'v1');
    expect(line?.upstream_protocol).toBe('json2');

    await proxy.post(
      '/v2/erp/execute',
      {
        id: 'm',
        model_id: 'res.partner',
        method: 'search_count',
        kwargs: { domain: [] },
        erp_instance: { url: double.url, db: 'erp_a', api_key: admin.apiKey },
      },
      key,
    );
    const metrics = (await proxy.get('/_/metrics', key)).text;
    expect(metrics).toMatch(/^erp_proxy_upstream_calls\{api="v1",protocol="json2"\} 1$/m);
    expect(metrics).toMatch(/^erp_proxy_upstream_calls\{api="v2",protocol="json2"\} 1$/m);
    expect(metrics).not.toMatch(/protocol="jsonrpc"\} [1-9]/);
  });
});
