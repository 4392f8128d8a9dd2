/**
 * What the live suite's files share: the real ERPs it runs against, calls through the proxy
 * (v1, v2, version) and straight to the ERP (discovery and cleanup), and a cleanup list for the
 * records a test creates. Nothing here assumes a record id, a record count or a database count.
 *
 * Five servers, each described by its own variables and skipped alone when they are missing:
 * - `ERP_LIVE_*`: an Odoo 19 (JSON-2), as `../shared/odoo19/start.sh` prints them;
 * - `ERP_LIVE20_*`: an Odoo 20 (none can be fetched here yet: its cases are written and skipped;
 *   `ERP_LIVE20_MCP_KEY`, optional, an API key of the admin with the `MCP` scope);
 * - `ERP_LIVE18_*`, `ERP_LIVE17_*`, `ERP_LIVE16_*`: an Odoo 18, 17 and 16 (`/jsonrpc` only), as
 *   `../shared/odoo18/start.sh`, `odoo17/start.sh` and `odoo16/start.sh` print them.
 * A file runs its cases once per server ({@link LIVE_SERVERS}); on 16-18 the proxy's v2 calls go
 * over `execute_kw` (`ERP_V2_TRANSPORT=auto`), which is the path such callers use. Each server's
 * cases fail when it reports another major version than its variables promise
 * ({@link checkServerVersion}): a case about 17 proves nothing when run against an 18.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  againstTolerance,
  answerDifferences,
  answerOf,
  asRecord,
  type Capture,
  createdIds,
  type DelegatedDocuments,
  otherModules,
  type Reply,
  replay,
  type Target,
  type Tolerance,
} from '../erp-double/capture-replay.ts';
import { DoublePool } from '../erp-double/double-replay.ts';
import type { Envelope } from '../support/fixtures.ts';
import { LIVE_SERVER_PREFIXES } from '../support/live-servers.ts';
import { type HttpAnswer, type ProxyHarness, startProxy } from '../support/proxy-harness.ts';

const env = process.env;

/** The variables of one live server, by the suffix after its prefix. */
const REQUIRED_SUFFIXES = ['URL', 'DB', 'UID', 'KEY'] as const;

/** One real ERP of the live suite. */
export interface LiveServer {
  /** `Odoo 20`, `Odoo 19`, `Odoo 18`, `Odoo 17` or `Odoo 16`: which server the variables describe. */
  readonly label: string;
  /** `ERP_LIVE20`, `ERP_LIVE`, `ERP_LIVE18`, `ERP_LIVE17` or `ERP_LIVE16`. */
  readonly prefix: string;
  /** The major version the server must report: exactly, or at least when {@link orLater}. */
  readonly major: number;
  /** True where any later major will do; false where the major must be exact (every server today). */
  readonly orLater: boolean;
  /** True for ERP 19+ (JSON-2, `/web/version`); false for 16-18 (`/jsonrpc` only). */
  readonly json2: boolean;
  /** Why this server's cases are skipped, or `undefined` when they run. */
  readonly skipReason: string | undefined;
  readonly url: string;
  readonly db: string;
  readonly uid: number;
  readonly key: string;
  /** A user of the main database without partner creation rights (`*_LIMITED_UID`/`*_LIMITED_KEY`). */
  readonly limited: { uid: number; key: string } | undefined;
  /** An expired API key of the admin (`*_EXPIRED_KEY`). */
  readonly expiredKey: string | undefined;
  /** A second database on the same server and its admin key (`*_DB2`/`*_KEY2`). */
  readonly secondDb: { db: string; key: string } | undefined;
  /** Proxy settings under which v2 calls reach this server: `ERP_V2_TRANSPORT=auto` below 19. */
  readonly v2Env: Readonly<Record<string, string>>;
  /** Why a case needing the optional `suffixes` (`LIMITED_KEY`...) is skipped ('' when all are set). */
  optionalSkip(...suffixes: string[]): string;
  /** The title of a `describe`: what it covers and where, or why it is skipped. */
  title(what: string): string;
}

function liveServer(prefix: string, major: number, orLater = false): LiveServer {
  const label = `Odoo ${major}${orLater ? '+' : ''}`;
  const json2 = major >= 19;
  const read = (suffix: string): string => env[`${prefix}_${suffix}`] ?? '';
  const missing = REQUIRED_SUFFIXES.map((suffix) => `${prefix}_${suffix}`).filter((name) => !env[name]);
  const skipReason =
    missing.length > 0 ? `set ${missing.join(', ')} to run it against a real ${label}` : undefined;
  const limitedUid = read('LIMITED_UID');
  const limitedKey = read('LIMITED_KEY');
  const secondDb = read('DB2');
  const secondKey = read('KEY2');
  return {
    label,
    prefix,
    major,
    orLater,
    json2,
    skipReason,
    url: read('URL'),
    db: read('DB'),
    uid: Number(read('UID')),
    key: read('KEY'),
    limited: limitedUid && limitedKey ? { uid: Number(limitedUid), key: limitedKey } : undefined,
    expiredKey: read('EXPIRED_KEY') || undefined,
    secondDb: secondDb && secondKey ? { db: secondDb, key: secondKey } : undefined,
    v2Env: json2 ? {} : { ERP_V2_TRANSPORT: 'auto' },
    optionalSkip(...suffixes) {
      const absent = suffixes.map((suffix) => `${prefix}_${suffix}`).filter((name) => !env[name]);
      return absent.length > 0 ? ` (skipped: set ${absent.join(', ')})` : '';
    },
    title(what) {
      return skipReason
        ? `${what}, ${label} (skipped: ${skipReason})`
        : `${what}, ${label} at ${read('URL')}`;
    },
  };
}

/** The live servers, each of which a file's cases run against (skipped alone when unset). */
export const LIVE_SERVERS: readonly LiveServer[] = LIVE_SERVER_PREFIXES.map(({ prefix, major, orLater }) =>
  liveServer(prefix, major, orLater),
);
const byMajor = (major: number): LiveServer => {
  const server = LIVE_SERVERS.find((candidate) => candidate.major === major);
  if (!server) throw new Error(`no live server for Odoo ${major}`);
  return server;
};
/** An Odoo 19: `ERP_LIVE_*` (../shared/odoo19/start.sh). */
export const LIVE19: LiveServer = byMajor(19);
/** An Odoo 20: `ERP_LIVE20_*` (none in CI yet: its cases are skipped). */
export const LIVE20: LiveServer = byMajor(20);
/** An Odoo 18: `ERP_LIVE18_*` (../shared/odoo18/start.sh). */
export const LIVE18: LiveServer = byMajor(18);
/** An Odoo 17: `ERP_LIVE17_*` (../shared/odoo17/start.sh). */
export const LIVE17: LiveServer = byMajor(17);
/** An Odoo 16: `ERP_LIVE16_*` (../shared/odoo16/start.sh). */
export const LIVE16: LiveServer = byMajor(16);
/** The live servers older than 19 (no JSON-2: v2 over `execute_kw`). */
export const LIVE_BEFORE_19: readonly LiveServer[] = LIVE_SERVERS.filter((server) => !server.json2);

for (const server of LIVE_SERVERS)
  if (server.skipReason)
    process.stderr.write(`live suite, ${server.label}: skipped (${server.skipReason})\n`);

export interface Instance {
  url: string;
  db: string;
  user_id?: number;
  api_key: string;
}

/** The admin's `erp_instance` (v1 form, with `user_id`, which v2 over JSON-2 ignores). */
export const adminInstance = (server: LiveServer): Instance => ({
  url: server.url,
  db: server.db,
  user_id: server.uid,
  api_key: server.key,
});

/** The `erp_instance` a v2 caller sends: no `user_id` on 19+, with it below (v2 over execute_kw needs it). */
export const v2Instance = (server: LiveServer, apiKey = server.key, uid = server.uid): Instance => ({
  url: server.url,
  db: server.db,
  ...(server.json2 ? {} : { user_id: uid }),
  api_key: apiKey,
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

/** Calls through the proxy (in-process, on loopback) to one live ERP. */
export interface LiveProxy {
  readonly harness: ProxyHarness;
  readonly server: LiveServer;
  v1(body: Record<string, unknown>, instance?: Instance): Promise<ProxyAnswer>;
  v2(
    method: string,
    kwargs: unknown,
    options?: { model?: string; instance?: Instance },
  ): Promise<ProxyAnswer>;
  version(path: string): Promise<ProxyAnswer>;
}

/**
 * Starts a proxy for `server` before the enclosing `describe` block's tests and closes it after
 * them. Its settings are the test defaults, then the server's {@link LiveServer.v2Env}, then `env`.
 * `get()` returns it once started. The proxy logs at DEBUG, which the leak guard scans.
 */
export function useLiveProxy(server: LiveServer, env: Record<string, string> = {}): () => LiveProxy {
  let proxy: LiveProxy | undefined;
  /** Why every case of the block fails: the server is not the version its variables promise. */
  let wrongVersion: Error | undefined;
  beforeAll(async () => {
    wrongVersion = await checkServerVersion(server).then(
      () => undefined,
      (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
    );
    const harness = await startProxy({
      env: {
        ...(process.env.ERP_ALLOWED_TARGETS ? { ERP_ALLOWED_TARGETS: process.env.ERP_ALLOWED_TARGETS } : {}),
        ...server.v2Env,
        ...env,
      },
    });
    let sequence = 0;
    const id = (prefix: string) => `${prefix}-${++sequence}`;
    proxy = {
      harness,
      server,
      v1: async (body, instance = adminInstance(server)) =>
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
            erp_instance: options.instance ?? v2Instance(server),
          }),
        ),
      version: async (path) =>
        toProxyAnswer(await harness.post(path, { id: id('live-version'), url: server.url })),
    };
  });
  afterAll(async () => proxy?.harness.close());
  return () => {
    if (wrongVersion) throw wrongVersion;
    if (!proxy) throw new Error('the live proxy is not started yet');
    return proxy;
  };
}

/** An answer straight from the ERP (not through the proxy): 200 and the result, or the error. */
export interface ErpAnswer {
  status: number;
  body: unknown;
}

/** Who calls the ERP directly: the server's admin unless `key`/`db`/`uid` say otherwise. */
export interface DirectCredentials {
  db?: string;
  key?: string;
  uid?: number;
}

/** Calls the live ERP's JSON-2 API directly (ERP 19+ only). */
export async function erpJson2(
  server: LiveServer,
  model: string,
  method: string,
  kwargs: Record<string, unknown>,
  credentials: DirectCredentials = {},
): Promise<ErpAnswer> {
  const response = await fetch(`${server.url}/json/2/${model}/${method}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `bearer ${credentials.key ?? server.key}`,
      'x-odoo-database': credentials.db ?? server.db,
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

/** One `/jsonrpc` call straight to the ERP: the whole JSON-RPC answer. */
export async function erpJsonRpc(
  server: LiveServer,
  service: string,
  method: string,
  args: unknown[],
): Promise<Record<string, unknown>> {
  const response = await fetch(`${server.url}/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'call', id: 1, params: { service, method, args } }),
  });
  return (await response.json()) as Record<string, unknown>;
}

/**
 * Calls `model.method` with named arguments straight to the ERP, the way the server speaks: JSON-2
 * on 19+, `execute_kw` below (`ids` go first by position, as do `create`'s `vals_list`, which
 * Odoo 16-18 cannot take by name, and `search`'s domain, which Odoo 16 names `args`). An `execute_kw` error is status 500 with the ERP's `error.data`.
 */
export async function erpCall(
  server: LiveServer,
  model: string,
  method: string,
  kwargs: Record<string, unknown>,
  credentials: DirectCredentials = {},
): Promise<ErpAnswer> {
  if (server.json2) return erpJson2(server, model, method, kwargs, credentials);
  const { ids, vals_list: valsList, ...named } = kwargs;
  let positional = method === 'create' ? [valsList] : ids === undefined ? [] : [ids];
  if ((method === 'search' || method === 'search_count') && 'domain' in named) {
    // Odoo 16 names search's domain `args` (17 renamed it): by position it fits every version.
    positional = [named.domain];
    delete named.domain;
  }
  const answer = await erpJsonRpc(server, 'object', 'execute_kw', [
    credentials.db ?? server.db,
    credentials.uid ?? server.uid,
    credentials.key ?? server.key,
    model,
    method,
    positional,
    named,
  ]);
  if ('error' in answer) return { status: 500, body: (answer.error as { data?: unknown }).data };
  return { status: 200, body: answer.result ?? null };
}

/** Like {@link erpCall} for a call that must succeed: its result. */
export async function erpResult(
  server: LiveServer,
  model: string,
  method: string,
  kwargs: Record<string, unknown>,
): Promise<unknown> {
  const answer = await erpCall(server, model, method, kwargs);
  if (answer.status !== 200)
    throw new Error(
      `${model}/${method}: ERP answered ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`,
    );
  return answer.body;
}

/** Ids of up to `limit` records of `model` matching `domain`, lowest id first (discovered). */
export async function discoverIds(
  server: LiveServer,
  model: string,
  domain: unknown[],
  limit: number,
): Promise<number[]> {
  const ids = (await erpResult(server, model, 'search', { domain, limit, order: 'id asc' })) as number[];
  if (ids.length === 0)
    throw new Error(`no ${model} record matches ${JSON.stringify(domain)} on the live ${server.label}`);
  return ids;
}

/** The server's version as the ERP itself reports it: `/web/version` on 19+, `common.version` below. */
export async function directVersion(server: LiveServer): Promise<Record<string, unknown>> {
  if (server.json2)
    return (await (await fetch(`${server.url}/web/version`)).json()) as Record<string, unknown>;
  const result = (await erpJsonRpc(server, 'common', 'version', [])).result as Record<string, unknown>;
  return { version_info: result.server_version_info, version: result.server_version };
}

const versionChecks = new Map<LiveServer, Promise<void>>();

/**
 * Fails (once per server and file, for every case that uses the server) when the server reports
 * another major version than {@link LiveServer.major}: `ERP_LIVE17_*` pointed at an Odoo 18 makes
 * every Odoo 17 case fail rather than pass on the wrong ERP. The version is the ERP's own answer
 * (`common.version`, `/web/version`), a nightly's `17.0-20240709` included.
 */
export function checkServerVersion(server: LiveServer): Promise<void> {
  let check = versionChecks.get(server);
  if (!check) {
    check = directVersion(server).then(({ version_info: info, version }) => {
      const major = Array.isArray(info) ? Number(info[0]) : Number.NaN;
      const fits = server.orLater ? major >= server.major : major === server.major;
      if (!fits)
        throw new Error(
          `${server.prefix}_URL (${server.url}) is an Odoo ${String(version)}, not the ${server.label} its ` +
            `variables promise: the ${server.label} cases prove nothing there`,
        );
    });
    versionChecks.set(server, check);
  }
  return check;
}

/** The admin's company, a second company it joined for a file, and how to leave that one again. */
export interface SecondCompany {
  readonly main: number;
  readonly second: number;
  leave(): Promise<void>;
}

/**
 * Makes the admin a member of a second company (found by name, created the first time) for the
 * file that asks, and says which company is the admin's own: the company rules' live cases need two.
 * The admin leaves it again with `leave()`. `res.users.write` names its argument `values` on 16-18
 * (its overrides in base/models/res_users.py), `vals` on 19 (over JSON-2).
 */
export async function joinSecondCompany(server: LiveServer): Promise<SecondCompany> {
  const [admin] = (await erpResult(server, 'res.users', 'read', {
    ids: [server.uid],
    fields: ['company_id'],
  })) as Array<{ company_id: [number, string] }>;
  const named = 'erp-proxy live second company';
  const existing = (await erpResult(server, 'res.company', 'search', {
    domain: [['name', '=', named]],
  })) as number[];
  const second =
    existing[0] ??
    ((await erpResult(server, 'res.company', 'create', { vals_list: [{ name: named }] })) as number[])[0] ??
    0;
  const member = (command: 3 | 4) =>
    erpResult(server, 'res.users', 'write', {
      ids: [server.uid],
      [server.major < 19 ? 'values' : 'vals']: { company_ids: [[command, second]] },
    });
  await member(4);
  return {
    main: admin?.company_id[0] ?? 0,
    second,
    leave: async () => {
      if (second !== 0) await member(3);
    },
  };
}

/** A name that marks the records this suite creates (and only them). */
export const liveName = (what: string): string =>
  `erp-proxy live ${what} ${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;

/**
 * Records a test creates on one server, deleted again after the file (archived ones too). A
 * record already deleted by the test itself is skipped.
 */
export class Cleanup {
  private readonly ids = new Map<string, Set<number>>();

  constructor(private readonly server: LiveServer) {}

  track(model: string, ids: unknown): void {
    const list = Array.isArray(ids) ? ids : [ids];
    const set = this.ids.get(model) ?? new Set<number>();
    for (const id of list) if (Number.isInteger(id)) set.add(id as number);
    this.ids.set(model, set);
  }

  /** Creates `vals` as the admin (straight to the ERP) and tracks the new ids. */
  async create(model: string, vals: Record<string, unknown>[]): Promise<number[]> {
    const ids = (await erpResult(this.server, model, 'create', { vals_list: vals })) as number[];
    this.track(model, ids);
    return ids;
  }

  /** Tracks what the capture's request created, from the server's reply (a create or copy). */
  trackReply(capture: Capture, reply: Reply): void {
    const created = createdIds(capture, reply);
    if (created) this.track(created.model, created.ids);
  }

  async run(): Promise<void> {
    const failures: string[] = [];
    for (const [model, set] of this.ids) {
      if (set.size === 0) continue;
      const existing = await erpCall(this.server, model, 'search', {
        domain: [['id', 'in', [...set]]],
        context: { active_test: false },
      });
      if (existing.status !== 200) {
        failures.push(`${model}: search answered ${existing.status}`);
        continue;
      }
      const ids = existing.body as number[];
      if (ids.length > 0) {
        const unlinked = await erpCall(this.server, model, 'unlink', { ids });
        if (unlinked.status !== 200)
          failures.push(`${model} ${JSON.stringify(ids)}: unlink answered ${unlinked.status}`);
      }
      set.clear();
    }
    if (failures.length > 0) throw new Error(`live cleanup failed: ${failures.join('; ')}`);
  }
}

/** A {@link Cleanup} for `server` that runs after the enclosing `describe` block. */
export function useCleanup(server: LiveServer): Cleanup {
  const cleanup = new Cleanup(server);
  afterAll(async () => {
    if (!server.skipReason) await cleanup.run();
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
  server: LiveServer,
  id: number | undefined,
): Promise<{ id: number; display_name: string; word: string }> {
  const [partner] = (await erpResult(server, 'res.partner', 'read', {
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
export function remainingPartners(server: LiveServer, ids: unknown): Promise<unknown> {
  return erpResult(server, 'res.partner', 'search', {
    domain: [['id', 'in', ids]],
    context: { active_test: false },
  });
}

/** A demo partner a capture names: its id on the capture server, its name and kind. */
export interface DemoPartner {
  id: number;
  name: string;
  is_company: boolean;
}

/**
 * The live server's partners for the demo partners the captures name: by name first (a server
 * with the same demo data), else a partner of the same kind (company or person) not mapped yet,
 * whose answers have the same shape. Returns captured id -> live id and the ones mapped by kind.
 */
export async function mapDemoPartners(
  server: LiveServer,
  partners: readonly DemoPartner[],
): Promise<{ ids: Map<number, number>; byKind: string[] }> {
  const ids = new Map<number, number>();
  const byKind: string[] = [];
  const first = async (domain: unknown[]): Promise<number | undefined> => {
    const answer = await erpCall(server, 'res.partner', 'search', {
      domain,
      order: 'id asc',
      limit: 1,
      context: { active_test: false },
    });
    return answer.status === 200 ? (answer.body as number[])[0] : undefined;
  };
  /** A live partner's complete_name, the key of Odoo's partner order ('' if unreadable). */
  const completeName = async (id: number): Promise<string> => {
    const answer = await erpCall(server, 'res.partner', 'read', {
      ids: [id],
      fields: ['complete_name'],
      context: { active_test: false },
    });
    const [record] = answer.status === 200 ? (answer.body as Array<{ complete_name?: unknown }>) : [];
    return String(record?.complete_name ?? '');
  };
  const unmatched: DemoPartner[] = [];
  const placed: Array<{ name: string; liveName: string }> = [];
  for (const partner of partners) {
    const liveId = await first([['name', '=', partner.name]]);
    if (liveId === undefined) unmatched.push(partner);
    else {
      ids.set(partner.id, liveId);
      placed.push({ name: partner.name, liveName: await completeName(liveId) });
    }
  }
  // A partner of the same kind whose name sorts, against the partners already mapped, where the
  // captured one did: the captures list partners in Odoo's order (complete_name), so a stand-in
  // sorting elsewhere would pair each listed record with another's (any partner of the kind if
  // none does).
  for (const { id, name, is_company } of unmatched) {
    const kind = [
      ['is_company', '=', is_company],
      ['active', '=', true],
      ['id', 'not in', [...ids.values()]],
    ];
    const sorted = placed.map(({ name: other, liveName }) => [
      'complete_name',
      other.localeCompare(name, 'en') < 0 ? '>' : '<',
      liveName,
    ]);
    const liveId = (await first([...kind, ...sorted])) ?? (await first(kind));
    if (liveId !== undefined) {
      ids.set(id, liveId);
      placed.push({ name, liveName: await completeName(liveId) });
    }
    byKind.push(`${name} (${id}) -> ${liveId ?? 'none'}`);
  }
  return { ids, byKind };
}

/** The login of the server's admin (`ERP_*_UID`), for captures that authenticate as `admin`. */
export async function adminLogin(server: LiveServer): Promise<string> {
  const [user] = (await erpResult(server, 'res.users', 'read', {
    ids: [server.uid],
    fields: ['login'],
  })) as Array<{ login: string }>;
  if (!user) throw new Error(`no user ${server.uid} on the live ${server.label}`);
  return user.login;
}

/** A capture's key from its `key_used`, by `keys` (the live server's); unknown or unset ones throw. */
export const liveKeyFor =
  (keys: Readonly<Record<string, string | undefined>>) =>
  (capture: Capture): string => {
    const key = keys[capture.keyUsed ?? ''];
    if (key === undefined) throw new Error(`${capture.file}: no live key for key_used ${capture.keyUsed}`);
    return key;
  };

/**
 * The optional variables of `server` a capture needs, by what its request uses: the limited user
 * (its `key_used`, or `limitedUid` as the uid of an `/jsonrpc` call), the expired key, the second
 * database (its name `secondDb` anywhere in the request).
 */
export function captureNeeds(
  server: LiveServer,
  capture: Capture,
  names: { limitedUid: number; secondDb: string },
): string[] {
  const text = JSON.stringify(capture.request);
  const args = asRecord(asRecord(capture.request.body).params).args;
  const needs: string[] = [];
  if (capture.keyUsed?.includes('limited') || (Array.isArray(args) && args[1] === names.limitedUid))
    if (!server.limited) needs.push(`${server.prefix}_LIMITED_UID`, `${server.prefix}_LIMITED_KEY`);
  if (/expired/i.test(capture.keyUsed ?? '') && !server.expiredKey)
    needs.push(`${server.prefix}_EXPIRED_KEY`);
  if (text.includes(names.secondDb) && !server.secondDb)
    needs.push(`${server.prefix}_DB2`, `${server.prefix}_KEY2`);
  return needs;
}

/**
 * What a capture replay on a live server found: the differences per capture (failing unless
 * tolerated) and the tolerances that did not show, reported after the run, never failed.
 */
class ReplayLog {
  private readonly found = new Map<string, string[]>();
  private readonly unneeded = new Map<string, string[]>();
  /** Fields and methods of a model document that another module defines on the live server. */
  private readonly otherModules = new Map<string, string[]>();

  constructor(
    private readonly server: LiveServer,
    private readonly tolerated: Readonly<Record<string, Tolerance>>,
  ) {}

  /** Records what {@link otherModules} left out of a capture's comparison (reported). */
  leftOut(file: string, items: readonly string[]): void {
    if (items.length > 0) this.otherModules.set(file, [...items]);
  }

  /** Records a capture's differences; returns those no tolerance explains. */
  record(file: string, differences: string[]): string[] {
    if (differences.length > 0) this.found.set(file, differences);
    const { unexplained, gone } = againstTolerance(this.tolerated[file], differences);
    if (gone.length > 0) this.unneeded.set(file, gone);
    return unexplained;
  }

  /** The report on stderr: what differed (and why it is tolerated), and the tolerances not needed. */
  report(title: string, counts: { replayed: number; skipped: number }, sharedServer: string): void {
    const tolerated = [...this.found.keys()].filter((file) => this.tolerated[file]).length;
    const lines = [...this.found].map(
      ([file, differences]) =>
        `  ${file}: ${differences.join('; ')}${this.tolerated[file] ? ` [accepted: ${this.tolerated[file].why}]` : ''}`,
    );
    process.stderr.write(
      `${title}: ${this.found.size} of ${counts.replayed} replayed captures differ between the live ERP and the double` +
        ` (accepted with a reason: ${tolerated}), ${counts.skipped} skipped\n${lines.join('\n')}${lines.length ? '\n' : ''}`,
    );
    if (this.otherModules.size > 0)
      process.stderr.write(
        `${title}: left out as defined by modules the capture server lacks (or by others under the same name):\n${[
          ...this.otherModules,
        ]
          .map(([file, items]) => `  ${file}: ${items.join(', ')}`)
          .join('\n')}\n`,
      );
    const notNeeded = [...this.unneeded].map(([file, patterns]) => `  ${file}: ${patterns.join(', ')}`);
    if (notNeeded.length > 0)
      process.stderr.write(
        `${title}: ${notNeeded.length} tolerated differences did not show on ${this.server.url}; if this is the shared ` +
          `server (${sharedServer}), drop them from ACCEPTED:\n${notNeeded.join('\n')}\n`,
      );
  }
}

/** A capture replay on a live server and on the double: see {@link useLiveReplay}. */
export interface LiveReplay {
  readonly doubles: DoublePool;
  readonly cleanup: Cleanup;
  /** The captures' demo partner ids -> the live server's (discovered before the tests). */
  demoIds(): ReadonlyMap<number, number>;
  /** The live admin's login (for captures that authenticate as `admin`). */
  login(): string;
  /**
   * Replays `capture` on the live server (after `first`, if given) with the target `makeTarget`
   * makes (it may create records, tracked in {@link cleanup}), with `headers` if given; what the
   * replays created is deleted before this returns.
   */
  replayLive(
    capture: Capture,
    makeTarget: () => Promise<Target>,
    options?: { first?: Capture; headers?: (target: Target) => Promise<Record<string, string>> },
  ): Promise<Reply>;
  /**
   * Expects the live and the double's replies to differ only as {@link Tolerance}s allow; a model
   * document's `_inherits` fields are placed by the documents of `delegates` ({@link otherModules}).
   */
  compare(capture: Capture, live: Reply, double: Reply, delegates?: DelegatedDocuments): void;
}

/**
 * Sets up the enclosing `describe` block for a capture replay on `server` and on the double: the
 * demo partners mapped and the admin's login read before its tests, a test that every demo partner
 * is mapped, and after them the doubles closed, the created records deleted and a report on stderr
 * of the differences found and the tolerances that did not show ({@link ReplayLog}).
 */
export function useLiveReplay(
  server: LiveServer,
  options: {
    title: string;
    accepted: Readonly<Record<string, Tolerance>>;
    counts: { replayed: number; skipped: number };
    /** The shared server the tolerances are meant for, named in the report. */
    sharedServer: string;
    /** The demo partners the captures name (read before the tests). */
    demoPartners: () => Promise<readonly DemoPartner[]>;
  },
): LiveReplay {
  const doubles = new DoublePool();
  const cleanup = new Cleanup(server);
  const log = new ReplayLog(server, options.accepted);
  let partners: readonly DemoPartner[] = [];
  let demoIds = new Map<number, number>();
  let byKind: string[] = [];
  let login = '';

  beforeAll(async () => {
    await checkServerVersion(server);
    partners = await options.demoPartners();
    ({ ids: demoIds, byKind } = await mapDemoPartners(server, partners));
    login = await adminLogin(server);
  });

  afterAll(async () => {
    await doubles.close();
    await cleanup.run();
    log.report(options.title, options.counts, options.sharedServer);
  });

  it('maps every demo partner the captures name to a live partner (by name, else by kind)', () => {
    if (byKind.length > 0)
      process.stderr.write(
        `${options.title}: demo partners not found by name, mapped by kind: ${byKind.join('; ')}\n`,
      );
    const numeric = (ids: Iterable<number>) => [...ids].sort((a, b) => a - b);
    expect(partners.length).toBeGreaterThan(0);
    expect(numeric(demoIds.keys())).toEqual(numeric(partners.map(({ id }) => id)));
  });

  return {
    doubles,
    cleanup,
    demoIds: () => demoIds,
    login: () => login,
    async replayLive(capture, makeTarget, { first, headers } = {}) {
      try {
        const target = await makeTarget();
        if (first !== undefined) cleanup.trackReply(first, await replay(server.url, first, target));
        const reply = await replay(server.url, capture, target, await headers?.(target));
        cleanup.trackReply(capture, reply);
        return reply;
      } finally {
        await cleanup.run();
      }
    },
    compare(capture, live, double, delegates) {
      const liveAnswer = answerOf(live);
      const doubleAnswer = answerOf(double);
      const compared = otherModules(capture.request.path, liveAnswer.body, doubleAnswer.body, delegates);
      log.leftOut(capture.file, compared.leftOut);
      const differences = answerDifferences(
        { ...liveAnswer, body: compared.live },
        { ...doubleAnswer, body: compared.double },
        capture.request.path,
      );
      expect(log.record(capture.file, differences), `${capture.caseText}: live → double`).toEqual([]);
    },
  };
}
