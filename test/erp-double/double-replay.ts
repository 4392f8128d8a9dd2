/**
 * @module erp-double/double-replay
 * The double's side of a capture replay: which captures it imitates (and why not the others),
 * the keys it answers for each capture's `key_used`, the records earlier captures created that a
 * replay needs first, and one double per imitated version and `--db-filter` configuration.
 * Shared by `captures.test.ts`, `captures18.test.ts` and `test/live/capture-replay.test.ts`.
 */
import {
  asRecord,
  bareEtag,
  type Capture,
  captureServer,
  dbfilterOf,
  KEY_PLACEHOLDER,
  loadCapture,
  type Reply,
  replay,
  requestOf,
  send,
  type Target,
  withServerEtags,
} from './capture-replay.ts';
import {
  DOUBLE_USERS,
  ERP_A_ADMIN_KEY,
  ERP_A_EXPIRED_KEY,
  ERP_A_LIMITED_KEY,
  ERP_B_ADMIN_KEY,
  type ErpDouble,
  startErpDouble,
} from './index.ts';

/** Keys the real server had but the double does not know (so they fail like the captures show). */
export const REVOKED_KEY = 'deadbeefdeadbeefdeadbeefdeadbeefdeadbeef';
export const OTHER_SCOPE_KEY = '0badc0de0badc0de0badc0de0badc0de0badc0de';

/** `key_used` of a capture -> the key the double accepts (or deliberately does not). */
const KEY_FOR: Readonly<Record<string, string>> = {
  'erp_a admin rpc key': ERP_A_ADMIN_KEY,
  'erp_b admin rpc key': ERP_B_ADMIN_KEY,
  'erp_a limited rpc key': ERP_A_LIMITED_KEY,
  'erp_a admin EXPIRED key': ERP_A_EXPIRED_KEY,
  'erp_a admin expired key': ERP_A_EXPIRED_KEY,
  'erp_a admin REVOKED key': REVOKED_KEY,
  'erp_a admin key scope odoo.plugin.outlook': OTHER_SCOPE_KEY,
  // The Odoo 18 captures (o18-*): erp18_a and erp18_b are the double's erp_a and erp_b.
  'erp18_a admin rpc key': ERP_A_ADMIN_KEY,
  'erp18_b admin rpc key': ERP_B_ADMIN_KEY,
  'erp18_a limited rpc key': ERP_A_LIMITED_KEY,
  'erp18_a admin expired key': ERP_A_EXPIRED_KEY,
};

/** The double as a replay target: the captures' databases, uids and ids, the double's keys. */
export const DOUBLE_TARGET: Target = {
  keyFor(capture: Capture): string {
    if (capture.keyUsed === null)
      throw new Error(`${capture.file}: uses ${KEY_PLACEHOLDER} but has no key_used`);
    const key = KEY_FOR[capture.keyUsed];
    if (key === undefined) throw new Error(`${capture.file}: no key for key_used ${capture.keyUsed}`);
    return key;
  },
};

/**
 * The Odoo 18 captures (`o18-*`, recorded by record-captures18.ts) as the double gets them: the
 * databases erp18_a and erp18_b are the double's erp_a and erp_b, the limited user (uid 8 on
 * that server) is the double's uid 7, and the partners earlier captures created (see
 * {@link PREPARE18}) are the ones {@link prepare18} creates in the double.
 */
export function doubleTarget18(ids: ReadonlyMap<number, number>): Target {
  return {
    keyFor: DOUBLE_TARGET.keyFor,
    databases: new Map([
      ['erp18_a', 'erp_a'],
      ['erp18_b', 'erp_b'],
    ]),
    uids: new Map([[8, 7]]),
    ids: () => ids,
  };
}

/**
 * o18 captures whose request names partners that earlier o18 captures created on the real Odoo
 * 18, with those earlier captures: the ids are their results (record-captures18.ts creates one
 * partner from a dict and one from a list, copies the first twice, then deletes them all).
 */
export const PREPARE18: Readonly<Record<string, readonly string[]>> = {
  'o18-v1-copy-int.json': ['o18-v1-create-single.json'],
  'o18-v1-copy-list.json': ['o18-v1-create-single.json'],
  'o18-v1-write.json': ['o18-v1-create-single.json'],
  'o18-v1-action_archive.json': ['o18-v1-create-list.json'],
  'o18-v1-named-write.json': ['o18-v1-create-single.json'],
  'o18-v1-unlink.json': [
    'o18-v1-create-single.json',
    'o18-v1-create-list.json',
    'o18-v1-copy-int.json',
    'o18-v1-copy-list.json',
  ],
};

/** The ids of the records the capture's request names, from the results of {@link PREPARE18}. */
export function createdIds18(file: string): number[] {
  return (PREPARE18[file] ?? []).flatMap((source) => {
    const result = asRecord(loadCapture(source).response.body).result;
    const ids = Array.isArray(result) ? result : [result];
    if (!ids.every((id) => typeof id === 'number')) throw new Error(`${source}: no created ids`);
    return ids as number[];
  });
}

/** Creates in the double one partner per id of {@link createdIds18}; returns captured id -> the double's id. */
export async function prepare18(double: ErpDouble, file: string): Promise<ReadonlyMap<number, number>> {
  const captured = createdIds18(file);
  if (captured.length === 0) return new Map();
  const vals = captured.map((id) => ({ name: `Prepared for ${id}` }));
  const ids = await jsonRpc(double, 'object', 'execute_kw', [
    'erp_a',
    2,
    ERP_A_ADMIN_KEY,
    'res.partner',
    'create',
    [vals],
  ]);
  if (!Array.isArray(ids) || ids.length !== captured.length)
    throw new Error(`${file}: preparing the double gave ids ${JSON.stringify(ids)}`);
  return new Map(captured.map((id, index) => [id, Number(ids[index])]));
}

/** Captures the double does not imitate, with the reason. */
export const SKIPPED: Readonly<Record<string, string>> = {
  'timing-search_count-loopback.json': 'latency measurements, not a request/response pair',
  'bridge-timing-v1-vs-json2.json':
    'latency measurements (v1 vs JSON-2 medians), not a request/response pair',
  'v1-xmlrpc-common-version.json': 'XML-RPC (/xmlrpc/2) is not imitated',
  'v1-xmlrpc-object-bad-key.json': 'XML-RPC (/xmlrpc/2) is not imitated',
  'v1-xmlrpc-object-search_count.json': 'XML-RPC (/xmlrpc/2) is not imitated',
  'v1-web-dataset-call_kw-nosession.json': '/web/dataset/call_kw and web sessions are not imitated',
  'v1-web-dataset-call_kw-session-ok.json': '/web/dataset/call_kw and web sessions are not imitated',
  'web-session-authenticate-ok.json': 'web sessions (/web/session/authenticate) are not imitated',
  'web-root-no-db.json': 'the web client (GET /) is not imitated',
  'v2-session-cookie-and-other-db-header.json':
    'session cookies are ignored by the double (needs a real session)',
  'v2-session-cookie-no-bearer.json': 'session cookies are ignored by the double (needs a real session)',
  'v2-session-cookie-other-user-key.json': 'session cookies are ignored by the double (needs a real session)',
  'v1-lock-conflict-cron-write.json': 'needs another transaction holding a row lock on ir.cron',
  'v2-lock-conflict-cron-write.json': 'needs another transaction holding a row lock on ir.cron',
};

/**
 * Records that earlier captures created on the real server (ids are sequential in the double:
 * partners from 43, attachments from 211). Created through /jsonrpc before the replay. For the
 * bridge captures the partners go up to the id before the one the capture created, so the double
 * hands out the captured ids too (the real ids 58-60 went to failed creates).
 */
export const PREPARE: Readonly<Record<string, { model: 'res.partner' | 'ir.attachment'; upTo: number }>> = {
  'v1-write-ok.json': { model: 'res.partner', upTo: 43 },
  'v1-action_archive-ok.json': { model: 'res.partner', upTo: 44 },
  'v1-unlink-ok.json': { model: 'res.partner', upTo: 45 },
  'v2-write-ok.json': { model: 'res.partner', upTo: 48 },
  'v2-action_archive-ok.json': { model: 'res.partner', upTo: 49 },
  'v2-action_archive-check.json': { model: 'res.partner', upTo: 50 },
  'v2-unlink-ok.json': { model: 'res.partner', upTo: 51 },
  'v1-read-attachment-datas-ok.json': { model: 'ir.attachment', upTo: 211 },
  'v2-read-attachment-datas-ok.json': { model: 'ir.attachment', upTo: 211 },
  'v2-write-attachment-ok.json': { model: 'ir.attachment', upTo: 211 },
  'v2-unlink-attachment-ok.json': { model: 'ir.attachment', upTo: 211 },
  'bridge-create-v1.json': { model: 'res.partner', upTo: 53 },
  'bridge-create-json2.json': { model: 'res.partner', upTo: 54 },
  'bridge-write-v1.json': { model: 'res.partner', upTo: 54 },
  'bridge-write-json2.json': { model: 'res.partner', upTo: 54 },
  'bridge-copy-v1.json': { model: 'res.partner', upTo: 55 },
  'bridge-copy-json2.json': { model: 'res.partner', upTo: 56 },
  'bridge-action_archive-v1.json': { model: 'res.partner', upTo: 56 },
  'bridge-action_archive-json2.json': { model: 'res.partner', upTo: 57 },
  'bridge-unlink-v1.json': { model: 'res.partner', upTo: 56 },
  'bridge-unlink-json2.json': { model: 'res.partner', upTo: 57 },
  'bridge-named-create-positional-list-v1.json': { model: 'res.partner', upTo: 60 },
  'bridge-named-write-v1.json': { model: 'res.partner', upTo: 61 },
  'bridge-named-copy-v1.json': { model: 'res.partner', upTo: 61 },
  'bridge-named-action_archive-v1.json': { model: 'res.partner', upTo: 62 },
  'bridge-named-unlink-v1.json': { model: 'res.partner', upTo: 62 },
};

/** Captures whose request only means something after another capture's request: replayed first. */
export const REPLAY_FIRST: Readonly<Record<string, string>> = {
  // The failed create by name must have left nothing behind (rolled back).
  'bridge-named-create-vals_list-check-v1.json': 'bridge-named-create-vals_list-v1.json',
};

async function jsonRpc(
  double: ErpDouble,
  service: string,
  method: string,
  args: unknown[],
): Promise<unknown> {
  const body = JSON.stringify({ jsonrpc: '2.0', method: 'call', params: { service, method, args }, id: 0 });
  const reply = await send(`${double.url}/jsonrpc`, 'POST', { 'Content-Type': 'application/json' }, body);
  return asRecord(JSON.parse(reply.body)).result;
}

/** Creates in the double the records the capture's request names (see {@link PREPARE}). */
export async function prepare(double: ErpDouble, file: string): Promise<void> {
  const plan = PREPARE[file];
  if (!plan) return;
  const firstFree = plan.model === 'res.partner' ? 43 : 211;
  const vals = Array.from({ length: plan.upTo - firstFree + 1 }, (_, index) =>
    plan.model === 'res.partner'
      ? { name: `Prepared ${index}` }
      : {
          name: 'proxy-capture.txt',
          datas: 'aGVsbG8gcHJveHkK',
          mimetype: 'text/plain',
          res_model: 'res.partner',
          res_id: 15,
        },
  );
  const ids = await jsonRpc(double, 'object', 'execute_kw', [
    'erp_a',
    2,
    ERP_A_ADMIN_KEY,
    plan.model,
    'create',
    [vals],
  ]);
  if (!Array.isArray(ids) || !ids.includes(plan.upTo))
    throw new Error(`${file}: preparing the double gave ids ${JSON.stringify(ids)}, without ${plan.upTo}`);
}

/** Sends the capture's request to the double (with `headers` instead of its own, if given). */
export function replayOnDouble(
  double: ErpDouble,
  capture: Capture,
  headers?: Record<string, string>,
): Promise<Reply> {
  return replay(double.url, capture, DOUBLE_TARGET, headers);
}

/**
 * The capture's request headers for the double, with every ETag of `sources` in If-None-Match
 * (quoted, weak or bare, as captured) replaced by the ETag the double answers to that ETag's
 * source request: the real server's ETags are HMACs under its database secret.
 */
export function withDoubleEtags(
  double: ErpDouble,
  capture: Capture,
  sources: ReadonlyMap<string, Capture>,
): Promise<Record<string, string>> {
  return withServerEtags(requestOf(capture, DOUBLE_TARGET).headers, sources, async (source) =>
    bareEtag(String((await replayOnDouble(double, source)).headers.etag ?? '')),
  );
}

/** Doubles, one per imitated version and `--db-filter` configuration of the captures, started on first use. */
export class DoublePool {
  private readonly doubles = new Map<string, Promise<ErpDouble>>();

  /** The double for this capture's server (Odoo 18 or 19, from the file name) and flags, reset. */
  async for(capture: Capture): Promise<ErpDouble> {
    const dbfilter = dbfilterOf(capture);
    const mode = captureServer(capture.file);
    const cacheKey = `${mode} ${dbfilter ?? ''}`;
    let started = this.doubles.get(cacheKey);
    if (!started) {
      started = startErpDouble({
        mode,
        databases: ['erp_a', 'erp_b'],
        dbfilter,
        users: [...DOUBLE_USERS],
      });
      this.doubles.set(cacheKey, started);
    }
    const double = await started;
    double.reset();
    return double;
  }

  async close(): Promise<void> {
    for (const started of this.doubles.values()) await (await started).close();
    this.doubles.clear();
  }
}
