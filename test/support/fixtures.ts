/**
 * What the integration suites share: the envelope type, the double's users by role, and the
 * lifecycle of an ERP double with a proxy in front of it.
 */
import { afterAll, beforeAll } from 'vitest';
import { DOUBLE_USERS, type ErpDouble, type ErpDoubleOptions, startErpDouble } from '../erp-double/index.ts';
import { type ProxyHarness, startProxy } from './proxy-harness.ts';

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
 * Starts an ERP double and a proxy before the enclosing `describe` block's tests and closes
 * both after them; `bind` receives the two once they run.
 */
export function useErpAndProxy(
  bind: (double: ErpDouble, proxy: ProxyHarness) => void,
  options: ErpDoubleOptions = {},
  env: Record<string, string> = {},
): void {
  let double: ErpDouble | undefined;
  let proxy: ProxyHarness | undefined;
  beforeAll(async () => {
    double = await startErpDouble(options);
    proxy = await startProxy(env);
    bind(double, proxy);
  });
  afterAll(async () => {
    await proxy?.close();
    await double?.close();
  });
}
