/**
 * What the live suite's files share: the ERP_LIVE_* variables that `../shared/odoo19/start.sh`
 * prints (four required, the rest optional), the one-line skip reasons, calls through the proxy
 * (v1, v2, version) and straight to the ERP (discovery and cleanup), and a cleanup list for the
 * records a test creates. Nothing here assumes a record id or a record count.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import type { Envelope } from '../support/fixtures.ts';
import { type HttpAnswer, type ProxyHarness, startProxy } from '../support/proxy-harness.ts';

const env = process.env;

/** The variables without which the live suite is skipped. */
export const REQUIRED_VARIABLES = ['ERP_LIVE_URL', 'ERP_LIVE_DB', 'ERP_LIVE_UID', 'ERP_LIVE_KEY'] as const;
const missing = REQUIRED_VARIABLES.filter((name) => !env[name]);

/** Why the live suite is skipped, or `undefined` when it runs. */
export const LIVE_SKIP_REASON: string | undefined =
  missing.length > 0 ? `set ${missing.join(', ')} to run the live suite against a real ERP` : undefined;

/** The admin of the main database (start.sh: erp_a, with demo data). */
export const LIVE = {
  url: env.ERP_LIVE_URL ?? '',
  db: env.ERP_LIVE_DB ?? '',
  uid: Number(env.ERP_LIVE_UID ?? ''),
  key: env.ERP_LIVE_KEY ?? '',
} as const;

/** A user of the main database without partner creation rights (ERP_LIVE_LIMITED_UID/KEY). */
export const LIMITED: { uid: number; key: string } | undefined =
  env.ERP_LIVE_LIMITED_UID && env.ERP_LIVE_LIMITED_KEY
    ? { uid: Number(env.ERP_LIVE_LIMITED_UID), key: env.ERP_LIVE_LIMITED_KEY }
    : undefined;

/** An expired API key of the admin (ERP_LIVE_EXPIRED_KEY). */
export const EXPIRED_KEY: string | undefined = env.ERP_LIVE_EXPIRED_KEY || undefined;

/** A second database on the same server and its admin key (ERP_LIVE_DB2/KEY2). */
export const SECOND_DB: { db: string; key: string } | undefined =
  env.ERP_LIVE_DB2 && env.ERP_LIVE_KEY2 ? { db: env.ERP_LIVE_DB2, key: env.ERP_LIVE_KEY2 } : undefined;

/** Why a case needing the optional `names` is skipped ('' when they are all set). */
export function optionalSkip(...names: string[]): string {
  const absent = names.filter((name) => !env[name]);
  return absent.length > 0 ? ` (skipped: set ${absent.join(', ')})` : '';
}

/** The title of a live file's `describe`: what it covers, or why it is skipped. */
export function liveTitle(what: string): string {
  return LIVE_SKIP_REASON ? `${what} (live suite skipped: ${LIVE_SKIP_REASON})` : `${what} at ${LIVE.url}`;
}

/** The API keys of the live suite (the leak guard, test/support/leak-guard.ts, reads the same variables). */
export function liveKeys(): string[] {
  return [env.ERP_LIVE_KEY, env.ERP_LIVE_LIMITED_KEY, env.ERP_LIVE_EXPIRED_KEY, env.ERP_LIVE_KEY2].filter(
    (key): key is string => typeof key === 'string' && key.length > 0,
  );
}

export interface Instance {
  url: string;
  db: string;
  user_id?: number;
  api_key: string;
}

/** The admin's `erp_instance` (v1 form; v2 ignores `user_id`). */
export const adminInstance = (): Instance => ({
  url: LIVE.url,
  db: LIVE.db,
  user_id: LIVE.uid,
  api_key: LIVE.key,
});

/** An answer of the proxy's execute or version endpoint. */
export interface ProxyAnswer {
  status: number;
  envelope: Envelope;
  raw: HttpAnswer;
}

const toProxyAnswer = (raw: HttpAnswer): ProxyAnswer => ({
  status: raw.status,
  envelope: raw.json as Envelope,
  raw,
});

/** Calls through the proxy (in-process, on loopback) to the live ERP. */
export interface LiveProxy {
  readonly harness: ProxyHarness;
  v1(body: Record<string, unknown>, instance?: Instance): Promise<ProxyAnswer>;
  v2(
    method: string,
    kwargs: unknown,
    options?: { model?: string; instance?: Instance },
  ): Promise<ProxyAnswer>;
  version(path: string): Promise<ProxyAnswer>;
}

/**
 * Starts the proxy (with `env` on top of the test defaults) before the enclosing `describe`
 * block's tests and closes it after them.
 * `get()` returns it once started. The proxy logs at DEBUG, which the leak guard scans.
 */
export function useLiveProxy(env: Record<string, string> = {}): () => LiveProxy {
  let proxy: LiveProxy | undefined;
  beforeAll(async () => {
    const harness = await startProxy({
      env: {
        ...(process.env.ERP_ALLOWED_TARGETS ? { ERP_ALLOWED_TARGETS: process.env.ERP_ALLOWED_TARGETS } : {}),
        ...env,
      },
    });
    let sequence = 0;
    const id = (prefix: string) => `${prefix}-${++sequence}`;
    proxy = {
      harness,
      v1: async (body, instance = adminInstance()) =>
        toProxyAnswer(
          await harness.post('/api/erp/execute', {
            id: id('live-v1'),
            model_id: 'res.partner',
            erp_instance: instance,
            ...body,
          }),
        ),
      v2: async (method, kwargs, options = {}) =>
        toProxyAnswer(
          await harness.post('/v2/erp/execute', {
            id: id('live-v2'),
            model_id: options.model ?? 'res.partner',
            method,
            kwargs,
            erp_instance: options.instance ?? { url: LIVE.url, db: LIVE.db, api_key: LIVE.key },
          }),
        ),
      version: async (path) =>
        toProxyAnswer(await harness.post(path, { id: id('live-version'), url: LIVE.url })),
    };
  });
  afterAll(async () => proxy?.harness.close());
  return () => {
    if (!proxy) throw new Error('the live proxy is not started yet');
    return proxy;
  };
}

/** A JSON-2 answer straight from the ERP (not through the proxy). */
export interface ErpAnswer {
  status: number;
  body: unknown;
}

/** Calls the live ERP's JSON-2 API directly, as the admin unless `key`/`db` say otherwise. */
export async function erpJson2(
  model: string,
  method: string,
  kwargs: Record<string, unknown>,
  credentials: { db?: string; key?: string } = {},
): Promise<ErpAnswer> {
  const response = await fetch(`${LIVE.url}/json/2/${model}/${method}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `bearer ${credentials.key ?? LIVE.key}`,
      'x-odoo-database': credentials.db ?? LIVE.db,
    },
    body: JSON.stringify(kwargs),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: response.status, body };
}

/** Like {@link erpJson2} for a call that must succeed: its result. */
export async function erpResult(
  model: string,
  method: string,
  kwargs: Record<string, unknown>,
): Promise<unknown> {
  const answer = await erpJson2(model, method, kwargs);
  if (answer.status !== 200)
    throw new Error(
      `${model}/${method}: ERP answered ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`,
    );
  return answer.body;
}

/** Ids of up to `limit` records of `model` matching `domain`, lowest id first (discovered). */
export async function discoverIds(model: string, domain: unknown[], limit: number): Promise<number[]> {
  const ids = (await erpResult(model, 'search', { domain, limit, order: 'id asc' })) as number[];
  if (ids.length === 0)
    throw new Error(`no ${model} record matches ${JSON.stringify(domain)} on the live ERP`);
  return ids;
}

/** A name that marks the records this suite creates (and only them). */
export const liveName = (what: string): string =>
  `erp-proxy live ${what} ${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;

/**
 * Records a test creates, deleted again after the file (archived ones too). A record already
 * deleted by the test itself is skipped.
 */
export class Cleanup {
  private readonly ids = new Map<string, Set<number>>();

  track(model: string, ids: unknown): void {
    const list = Array.isArray(ids) ? ids : [ids];
    const set = this.ids.get(model) ?? new Set<number>();
    for (const id of list) if (Number.isInteger(id)) set.add(id as number);
    this.ids.set(model, set);
  }

  /** Creates `vals` as the admin (straight to the ERP) and tracks the new ids. */
  async create(model: string, vals: Record<string, unknown>[]): Promise<number[]> {
    const ids = (await erpResult(model, 'create', { vals_list: vals })) as number[];
    this.track(model, ids);
    return ids;
  }

  async run(): Promise<void> {
    const failures: string[] = [];
    for (const [model, set] of this.ids) {
      if (set.size === 0) continue;
      const existing = await erpJson2(model, 'search', {
        domain: [['id', 'in', [...set]]],
        context: { active_test: false },
      });
      if (existing.status !== 200) {
        failures.push(`${model}: search answered ${existing.status}`);
        continue;
      }
      const ids = existing.body as number[];
      if (ids.length > 0) {
        const unlinked = await erpJson2(model, 'unlink', { ids });
        if (unlinked.status !== 200)
          failures.push(`${model} ${JSON.stringify(ids)}: unlink answered ${unlinked.status}`);
      }
      set.clear();
    }
    if (failures.length > 0) throw new Error(`live cleanup failed: ${failures.join('; ')}`);
  }
}

/** A {@link Cleanup} that runs after the enclosing `describe` block. */
export function useCleanup(): Cleanup {
  const cleanup = new Cleanup();
  afterAll(async () => {
    if (!LIVE_SKIP_REASON) await cleanup.run();
  });
  return cleanup;
}

/** The answer of a successful call: HTTP 200, no error, its result. */
export function resultOf(answer: ProxyAnswer): unknown {
  expect(answer.status).toBe(200);
  expect(answer.envelope.error).toBeNull();
  return answer.envelope.result;
}

/** A partner to `name_search` for: its id, display name and the first word of its name. */
export async function partnerToSearch(
  id: number | undefined,
): Promise<{ id: number; display_name: string; word: string }> {
  const [partner] = (await erpResult('res.partner', 'read', {
    ids: [id],
    fields: ['name', 'display_name'],
  })) as Array<{ id: number; name: string; display_name: string }>;
  return {
    id: partner?.id ?? 0,
    display_name: partner?.display_name ?? '',
    word: String(partner?.name).split(/\s+/)[0] ?? '',
  };
}

/**
 * The partners among `ids` (a list as a call returned it, not checked here) that still exist,
 * archived ones included; `[]` once they are deleted.
 */
export function remainingPartners(ids: unknown): Promise<unknown> {
  return erpResult('res.partner', 'search', {
    domain: [['id', 'in', ids]],
    context: { active_test: false },
  });
}
