/**
 * What the integration suites share: the envelope type, the double's users by role, and the
 * lifecycle of an ERP double and a proxy (the local server with its own runtime, see
 * proxy-harness.ts) for a `describe` block or for one test.
 *
 * For a block, `useErpAndProxy`, `useProxy` and `useErpDouble` start in `beforeAll`, close in
 * `afterAll`, and hand back the double and the proxy at once, to be used inside the tests:
 *
 *   const { double, proxy } = useErpAndProxy({ mode: '19' });
 *   it('...', async () => { await proxy.post('/api/erp/execute', { ..., url: double.url }); });
 *
 * For one test with its own settings, `withProxy` and `withErpAndProxy` start, run the test body
 * and close whatever happens.
 */
import { afterAll, beforeAll } from 'vitest';
import { DOUBLE_USERS, type ErpDouble, type ErpDoubleOptions, startErpDouble } from '../erp-double/index.ts';
import { type ProxyHarness, type ProxyOptions, startProxy } from './proxy-harness.ts';

/** A response envelope as the tests read it. */
export interface Envelope {
  jsonrpc: string;
  id: string | null;
  result: unknown;
  error: { code: number; message: string; data: Record<string, unknown> | null } | null;
}

const user = (predicate: (u: (typeof DOUBLE_USERS)[number]) => boolean) => {
  const found = DOUBLE_USERS.find(predicate);
  if (!found) throw new Error('the ERP double lacks a user the tests expect');
  return found;
};

/** The double's users by role. */
export const USERS = {
  adminA: user((u) => u.db === 'erp_a' && u.uid === 2 && !u.expired),
  adminB: user((u) => u.db === 'erp_b' && u.uid === 2),
  limitedA: user((u) => u.db === 'erp_a' && u.limited === true),
  expiredA: user((u) => u.db === 'erp_a' && u.expired === true),
} as const;

/**
 * The body of `res.partner` search_count([]) on the double's erp_a as its admin, at `url`: a v1
 * execute body (`action`, `params`) or a v2 one (`method`, `kwargs`), with the envelope id `id`.
 */
export function searchCountBody(api: 'v1' | 'v2', url: string, id: string): Record<string, unknown> {
  const erpInstance = { url, db: 'erp_a', user_id: USERS.adminA.uid, api_key: USERS.adminA.apiKey };
  return api === 'v1'
    ? { id, action: 'search_count', model_id: 'res.partner', params: [[]], erp_instance: erpInstance }
    : {
        id,
        model_id: 'res.partner',
        method: 'search_count',
        kwargs: { domain: [] },
        erp_instance: erpInstance,
      };
}

/**
 * A stand-in for an object that exists only once `beforeAll` has run: every property read goes
 * to the current object, so a block can name it at collection time and use it in its tests.
 */
function startedLater<T extends object>(what: string, current: () => T | undefined): T {
  const target = (): T => {
    const value = current();
    if (value === undefined) throw new Error(`${what} is used outside the tests of its describe block`);
    return value;
  };
  return new Proxy({} as T, {
    get(_stub, key) {
      const value = target();
      const member: unknown = Reflect.get(value, key, value);
      return typeof member === 'function' ? member.bind(value) : member;
    },
    set: (_stub, key, member) => Reflect.set(target(), key, member),
    has: (_stub, key) => Reflect.has(target(), key),
  });
}

/**
 * Starts something for the enclosing block's tests (`beforeAll`) and closes it after them
 * (`afterAll`). After-all hooks run in reverse order, so what a block starts last closes first.
 */
function useStarted<T extends { close(): Promise<void> }>(what: string, start: () => Promise<T>): T {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  });
  afterAll(async () => {
    await started?.close();
  });
  return startedLater(what, () => started);
}

/** Starts an ERP double for the enclosing block's tests; closes it after them. */
export function useErpDouble(options: ErpDoubleOptions = {}): ErpDouble {
  return useStarted('the ERP double', () => startErpDouble(options));
}

/** Starts a proxy for the enclosing block's tests; closes it after them. */
export function useProxy(options: ProxyOptions = {}): ProxyHarness {
  return useStarted('the proxy', () => startProxy(options));
}

/**
 * Starts an ERP double and a proxy for the enclosing block's tests; closes both after them, the
 * proxy first (its kept-alive connections to the double go with it).
 */
export function useErpAndProxy(
  erp: ErpDoubleOptions = {},
  options: ProxyOptions = {},
): { double: ErpDouble; proxy: ProxyHarness } {
  const double = useErpDouble(erp);
  const proxy = useProxy(options);
  return { double, proxy };
}

/** Runs `test` against a proxy started for it alone, and closes the proxy whatever happens. */
export async function withProxy<T>(
  options: ProxyOptions,
  test: (proxy: ProxyHarness) => Promise<T>,
): Promise<T> {
  const proxy = await startProxy(options);
  try {
    return await test(proxy);
  } finally {
    await proxy.close();
  }
}

/**
 * Runs `test` against an ERP double and a default proxy started for it alone, and closes both
 * whatever happens (the proxy first).
 */
export async function withErpAndProxy<T>(
  erp: ErpDoubleOptions,
  test: (double: ErpDouble, proxy: ProxyHarness) => Promise<T>,
): Promise<T> {
  const double = await startErpDouble(erp);
  try {
    return await withProxy({}, (proxy) => test(double, proxy));
  } finally {
    await double.close();
  }
}

/** A v1 or v2 execute call's answer, with its envelope. */
export type ExecuteAnswer = Awaited<ReturnType<ProxyHarness['post']>> & { readonly envelope: Envelope };

/**
 * `v1` and `v2` execute calls through `proxy` to the ERP `instance()` names, as the key `key`:
 * the body's fields over an empty call (`params`/`keyword`, `kwargs`); the envelope id defaults
 * to `v1-<label>` and `v2-<label>`.
 */
export function executeCalls(
  proxy: ProxyHarness,
  instance: () => Record<string, unknown>,
  label: string,
): {
  v1(key: string, body: Record<string, unknown>, id?: string): Promise<ExecuteAnswer>;
  v2(key: string, body: Record<string, unknown>, id?: string): Promise<ExecuteAnswer>;
} {
  const call = async (
    path: string,
    base: Record<string, unknown>,
    key: string,
    body: Record<string, unknown>,
  ) => {
    const answer = await proxy.post(
      path,
      { erp_instance: instance(), ...base, ...body },
      { 'x-api-key': key },
    );
    return { ...answer, envelope: answer.json as Envelope };
  };
  return {
    v1: (key, body, id = `v1-${label}`) =>
      call('/api/erp/execute', { id, params: [], keyword: {} }, key, body),
    v2: (key, body, id = `v2-${label}`) => call('/v2/erp/execute', { id, kwargs: {} }, key, body),
  };
}
