/**
 * @module erp-double/double-replay
 * The double's side of a capture replay: which captures it imitates (and why not the others),
 * the keys it answers for each capture's `key_used`, the records earlier captures created that a
 * replay needs first, and one double per imitated version and `--db-filter` configuration.
 * Shared by `captures.test.ts`, `captures16-18.test.ts`, `test/live/capture-replay.test.ts` and
 * `test/live/capture-replay16-18.ts`.
 */
import {
  asRecord,
  bareEtag,
  type Capture,
  captureServer,
  dbfilterOf,
  KEY_PLACEHOLDER,
  loadCapture,
  RECORDED_VERSIONS,
  type RecordedVersion,
  type Reply,
  recordedKeyNames,
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
  // The captures of Odoo 18, 17 and 16 (o18-*, o17-*, o16-*): erpNN_a and erpNN_b are the
  // double's erp_a and erp_b. 16 and 17 have no key expiry: their old key is a revoked one.
  ...Object.fromEntries(
    RECORDED_VERSIONS.flatMap((version) => {
      const names = recordedKeyNames(version);
      return [
        [names.admin, ERP_A_ADMIN_KEY],
        [names.secondDb, ERP_B_ADMIN_KEY],
        [names.limited, ERP_A_LIMITED_KEY],
        [names.old, version === '18' ? ERP_A_EXPIRED_KEY : REVOKED_KEY],
      ];
    }),
  ),
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

/** The recorded version of an `o18-*`, `o17-*` or `o16-*` capture file. */
function recordedVersion(file: string): RecordedVersion {
  const version = captureServer(file);
  if (version === '19') throw new Error(`${file}: not a capture of Odoo 16-18`);
  return version;
}

/** The limited user's uid on the server a version's captures come from (the uid of its limited create). */
function limitedUidOf(version: RecordedVersion): unknown {
  const args = asRecord(
    asRecord(loadCapture(`o${version}-v1-err-limited-create.json`).request.body).params,
  ).args;
  return Array.isArray(args) ? args[1] : undefined;
}

/**
 * The captures of Odoo 18, 17 and 16 (`o18-*`, `o17-*`, `o16-*`, recorded by record-captures.ts)
 * as the double gets them: the databases erpNN_a and erpNN_b are the double's erp_a and erp_b,
 * the limited user (uid 8 on those servers) is the double's uid 7, and the partners earlier
 * captures created (see {@link PREPARE_RECORDED}) are the ones {@link prepareRecorded} creates in
 * the double.
 */
export function doubleTargetRecorded(file: string, ids: ReadonlyMap<number, number>): Target {
  const version = recordedVersion(file);
  const limitedUid = limitedUidOf(version);
  if (typeof limitedUid !== 'number') throw new Error(`o${version}: no limited uid in its limited create`);
  return {
    keyFor: DOUBLE_TARGET.keyFor,
    databases: new Map([
      [`erp${version}_a`, 'erp_a'],
      [`erp${version}_b`, 'erp_b'],
    ]),
    uids: new Map([[limitedUid, 7]]),
    ids: () => ids,
  };
}

/**
 * Captures of 16-18 (named without their `oNN-` prefix) whose request names partners that earlier
 * captures of the same server created, with those earlier captures: the ids are their results
 * (record-captures.ts creates one partner from a dict and one from a list, copies the first twice,
 * then deletes them all).
 */
const PREPARE_CASES: Readonly<Record<string, readonly string[]>> = {
  'v1-copy-int.json': ['v1-create-single.json'],
  'v1-copy-list.json': ['v1-create-single.json'],
  'v1-write.json': ['v1-create-single.json'],
  'v1-action_archive.json': ['v1-create-list.json'],
  'v1-named-write.json': ['v1-create-single.json'],
  'v1-unlink.json': ['v1-create-single.json', 'v1-create-list.json', 'v1-copy-int.json', 'v1-copy-list.json'],
};

/** {@link PREPARE_CASES} for the captures of every recorded version: `o17-v1-write.json` -> `[o17-v1-create-single.json]`. */
export const PREPARE_RECORDED: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  RECORDED_VERSIONS.flatMap((version) =>
    Object.entries(PREPARE_CASES).map(([file, sources]) => [
      `o${version}-${file}`,
      sources.map((source) => `o${version}-${source}`),
    ]),
  ),
);

/** The ids of the records the capture's request names, from the results of {@link PREPARE_RECORDED} (an int or a list each). */
export function createdIdsRecorded(file: string): number[] {
  return (PREPARE_RECORDED[file] ?? []).flatMap((source) => {
    const result = asRecord(loadCapture(source).response.body).result;
    const ids = Array.isArray(result) ? result : [result];
    if (!ids.every((id) => typeof id === 'number')) throw new Error(`${source}: no created ids`);
    return ids as number[];
  });
}

/** Creates in the double one partner per id of {@link createdIdsRecorded}; returns captured id -> the double's id. */
export async function prepareRecorded(double: ErpDouble, file: string): Promise<ReadonlyMap<number, number>> {
  const captured = createdIdsRecorded(file);
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

  /** The double for this capture's server (Odoo 16, 17, 18 or 19, from the file name) and flags, reset. */
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
