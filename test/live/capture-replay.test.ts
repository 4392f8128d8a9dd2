/**
 * Replays the captures of test/erp-double/captures against the real ERP and against the ERP
 * double (the same request to both), and compares the two answers by status, content type and
 * body shape (capture-replay.ts `shapeDifferences`, the comparison the double's own capture test
 * uses). Every difference is either listed in {@link ACCEPTED} with the reason, or the test
 * fails: a new one means the double (test/erp-double) is wrong, or the list must say why not.
 *
 * What is not replayed, and why, is in {@link LIVE_SKIPPED}. Captures that write run only when
 * {@link WRITES} says why that is safe: on records the test creates first (the captured ids are
 * mapped to them), as creates whose new ids are deleted after, or because the ERP refuses them.
 * Databases, uids, keys, the admin's login and the demo partners the captures name are mapped to
 * the live server's.
 */
import { describe, expect, it } from 'vitest';
import {
  answerOf,
  bareEtag,
  type Capture,
  callOf,
  captureFiles,
  type DelegatedDocuments,
  dbfilterOf,
  delegatedModels,
  etagSources,
  isModelDocument,
  loadCapture,
  type Reply,
  replay,
  requestOf,
  send,
  type Target,
  type Tolerance,
  WRITE_SAFE,
  WRITING_METHODS,
  withServerEtags,
} from '../erp-double/capture-replay.ts';
import {
  OTHER_SCOPE_KEY,
  PREPARE,
  prepare,
  REPLAY_FIRST,
  REVOKED_KEY,
  replayOnDouble,
  SKIPPED,
  withDoubleEtags,
} from '../erp-double/double-replay.ts';
import { DOUBLE_USERS, type ErpDouble } from '../erp-double/index.ts';
import { captureNeeds, type DemoPartner, LIVE19, liveKeyFor, liveName, useLiveReplay } from './live-env.ts';

/** The captures come from an Odoo 19: they are replayed on the live Odoo 19. */
const LIVE = LIVE19;
const { limited: LIMITED, expiredKey: EXPIRED_KEY, secondDb: SECOND_DB } = LIVE;

/** Captures not replayed against the real server, with the reason. */
const LIVE_SKIPPED: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    Object.entries(SKIPPED).map(([file, reason]) => [
      file,
      `nothing to compare with: the double skips it (${reason})`,
    ]),
  ),
  'v2-session-cookie-same-user-key-ok.json':
    'needs a web session cookie of the capture server (the double ignores cookies; the other session captures are skipped by the double)',
  'v1-row-lock-wait-then-retry.json':
    'needs another transaction holding a row lock; and it writes the shared demo partner 15',
  'v2-row-lock-wait-then-retry.json':
    'needs another transaction holding a row lock; and it writes the shared demo partner 15',
};

/** Why a capture is skipped for server flags: start.sh's server has no --db-filter. */
const dbfilterSkip = (capture: Capture): string | undefined => {
  const dbfilter = dbfilterOf(capture);
  return dbfilter === undefined
    ? undefined
    : `needs the server restarted with --db-filter='${dbfilter}' (start.sh runs without a db filter)`;
};

/** Records the capture's request names that a capture session created: made fresh on the live server. */
const RECORDS: Readonly<Record<string, { model: 'res.partner' | 'ir.attachment'; ids: number[] }>> = {
  'v1-write-ok.json': { model: 'res.partner', ids: [43] },
  'v1-action_archive-ok.json': { model: 'res.partner', ids: [44] },
  'v1-unlink-ok.json': { model: 'res.partner', ids: [44, 45] },
  'v2-write-ok.json': { model: 'res.partner', ids: [48] },
  'v2-action_archive-ok.json': { model: 'res.partner', ids: [49] },
  'v2-action_archive-check.json': { model: 'res.partner', ids: [49, 50] },
  'v2-unlink-ok.json': { model: 'res.partner', ids: [49, 50, 51] },
  'v1-read-attachment-datas-ok.json': { model: 'ir.attachment', ids: [211] },
  'v2-read-attachment-datas-ok.json': { model: 'ir.attachment', ids: [211] },
  'v2-write-attachment-ok.json': { model: 'ir.attachment', ids: [211] },
  'v2-unlink-attachment-ok.json': { model: 'ir.attachment', ids: [211] },
  'bridge-write-v1.json': { model: 'res.partner', ids: [54] },
  'bridge-write-json2.json': { model: 'res.partner', ids: [54] },
  'bridge-copy-v1.json': { model: 'res.partner', ids: [54] },
  'bridge-copy-json2.json': { model: 'res.partner', ids: [54] },
  'bridge-action_archive-v1.json': { model: 'res.partner', ids: [56] },
  'bridge-action_archive-json2.json': { model: 'res.partner', ids: [57] },
  'bridge-unlink-v1.json': { model: 'res.partner', ids: [54, 56] },
  'bridge-unlink-json2.json': { model: 'res.partner', ids: [55, 57] },
  'bridge-named-write-v1.json': { model: 'res.partner', ids: [61] },
  'bridge-named-copy-v1.json': { model: 'res.partner', ids: [61] },
  'bridge-named-action_archive-v1.json': { model: 'res.partner', ids: [62] },
  'bridge-named-unlink-v1.json': { model: 'res.partner', ids: [61, 62] },
};

const { ownRecords: OWN_RECORDS, creates: CREATES, refused: REFUSED } = WRITE_SAFE;

/**
 * Why replaying a capture on a shared server is safe: every replayed capture that calls a writing
 * method is here (and those that read records of their own).
 */
const WRITES: Readonly<Record<string, string>> = {
  ...Object.fromEntries(Object.keys(RECORDS).map((file) => [file, OWN_RECORDS])),
  'bridge-copy-v1.json': `${OWN_RECORDS}; the copy too`,
  'bridge-copy-json2.json': `${OWN_RECORDS}; the copy too`,
  'bridge-named-copy-v1.json': `${OWN_RECORDS}; the copy too`,
  'v1-create-single-ok.json': CREATES,
  'v1-create-list-ok.json': CREATES,
  'v2-create-ok.json': CREATES,
  'v2-create-multi-ok.json': CREATES,
  'v2-create-dict-ok.json': CREATES,
  'v2-create-attachment-ok.json': CREATES,
  'bridge-create-v1.json': CREATES,
  'bridge-create-json2.json': CREATES,
  'bridge-named-create-positional-list-v1.json': CREATES,
  'bridge-named-create-vals_list-v1.json': `${CREATES} (the ERP rolls this one back: IndexError after the create)`,
  'v1-validation-error-noname.json': `${REFUSED} (ValidationError)`,
  'v2-validation-error-noname.json': `${REFUSED} (ValidationError)`,
  'bridge-err-validation-noname-v1.json': `${REFUSED} (ValidationError)`,
  'bridge-err-validation-noname-json2.json': `${REFUSED} (ValidationError)`,
  'v1-validation-error-unique.json': `${REFUSED} (the login admin exists)`,
  'v2-validation-error-unique.json': `${REFUSED} (the login admin exists)`,
  'v1-access-error-limited-create.json': `${REFUSED} (AccessError)`,
  'v2-access-denied-limited-create.json': `${REFUSED} (AccessError)`,
  'bridge-err-limited-create-v1.json': `${REFUSED} (AccessError)`,
  'bridge-err-limited-create-json2.json': `${REFUSED} (AccessError)`,
  'v1-write-missing-record.json': `${REFUSED} (id 999999 does not exist)`,
  'v2-write-missing-record.json': `${REFUSED} (id 999999 does not exist)`,
  'bridge-err-missing-write-v1.json': `${REFUSED} (id 999999 does not exist)`,
  'bridge-err-missing-write-json2.json': `${REFUSED} (id 999999 does not exist)`,
  'v1-record-method-missing-id.json': `${REFUSED} (id 999999 does not exist)`,
  'v2-record-method-missing-id.json': `${REFUSED} (id 999999 does not exist)`,
  'bridge-err-record-method-empty-ids-v1.json': 'acts on no record (ids [])',
  'bridge-err-record-method-empty-ids-json2.json': 'acts on no record (ids [])',
  'bridge-err-record-method-no-ids-v1.json': `${REFUSED} (IndexError: no ids)`,
  'bridge-err-record-method-no-ids-json2.json': 'acts on no record (no ids: an empty recordset)',
  'v2-ids-on-model-method-create-error.json': `${REFUSED} (422 at the signature bind)`,
  'v2-kwargs-as-array-write.json': `${REFUSED} (422 at the signature bind: no vals)`,
  'v2-missing-required-arg-error.json': `${REFUSED} (422 at the signature bind: no vals)`,
};

const TRIMMED =
  'the live server is the trimmed Odoo of odoo19/ (base, web, rpc: no contacts, no mail); the captures, ' +
  'and so the double, come from a server with contacts and mail (mail adds these fields and methods)';
const PARTNER_FIELDS =
  "the double's res.partner has a subset of Odoo's fields (the ones the captures use); the trimmed live " +
  'server has 73, a server with contacts 109';
const MAIL_FIELD_READ =
  "reads notification_type, a field of mail: the trimmed server answers ValueError (invalid field), the double the capture server's values";

/**
 * Differences between the real server and the double that are tolerated, each with the reason
 * and one pattern per difference line. The test fails on a difference no pattern explains. A
 * tolerated difference may show or not (a server with contacts and mail, like the capture
 * server, shows fewer): one that no longer shows is reported after the run, without failing, so
 * the list can be trimmed when the shared server stops needing it.
 */
const ACCEPTED: Readonly<Record<string, Tolerance>> = {
  'bridge-fields_get-v1.json': { why: PARTNER_FIELDS, differences: [/^\$\.result: \d+ keys missing \(/] },
  'bridge-fields_get-json2.json': { why: PARTNER_FIELDS, differences: [/^\$: \d+ keys missing \(/] },
  'v1-fields_get-ok.json': { why: PARTNER_FIELDS, differences: [/^\$\.result: \d+ keys missing \(/] },
  'v2-fields_get-ok.json': { why: PARTNER_FIELDS, differences: [/^\$: \d+ keys missing \(/] },
  'v1-read-users-mixed-ok.json': {
    why: MAIL_FIELD_READ,
    differences: [/^result present: false, got true$/, /^error present: true, got false$/],
  },
  'v2-read-users-mixed-ok.json': {
    why: MAIL_FIELD_READ,
    differences: [/^status: 500, got 200$/, /^name: "builtins\.ValueError", got undefined$/, /^keys: /],
  },
  'doc-bearer-index-admin.json': {
    why:
      "the double's index lists the 9 models it has and the capture server's modules (contacts and mail " +
      'among them); the live one every model of the trimmed server',
    differences: [/^\$\.(modules|models)\b/, /^and \d+ more$/],
  },
  'doc-bearer-ir.attachment-admin.json': {
    why: TRIMMED,
    differences: [/^\$\.fields: \d+ keys extra \(/, /^\$\.methods: \d+ keys extra \(/],
  },
  'doc-bearer-res.users-admin.json': {
    why: TRIMMED,
    differences: [/^\$\.fields: \d+ keys extra \(/, /^\$\.methods: \d+ keys extra \(/],
  },
  ...Object.fromEntries(
    [
      'doc-bearer-res.partner-admin.json',
      'doc-bearer-res.partner-admin-refetch.json',
      'doc-bearer-res.partner-erp_b-ok.json',
      'doc-bearer-res.partner-get-json-content-type.json',
      'doc-bearer-res.partner-if-none-match-no-cache-200.json',
      'doc-bearer-res.partner-if-none-match-stale-200.json',
      'doc-bearer-res.partner-post-json-empty.json',
      'doc-bearer-res.partner-post-nobody.json',
    ].map((file) => [
      file,
      {
        why: TRIMMED,
        differences: [/^\$\.fields: \d+ keys extra \(message_/, /^\$\.methods: \d+ keys extra \(/],
      },
    ]),
  ),
};

const adminUid = DOUBLE_USERS.find((user) => user.db === 'erp_a' && !user.limited)?.uid ?? 2;
const limitedUid = DOUBLE_USERS.find((user) => user.limited)?.uid ?? 7;

/** The demo partners the captures name (read, name_search results, attachments' res_id). */
const DEMO_PARTNERS = [4, 11, 15, 42];

const files = captureFiles();
const replayed = files.filter(
  (file) => LIVE_SKIPPED[file] === undefined && dbfilterSkip(loadCapture(file)) === undefined,
);
const skipped = files
  .filter((file) => !replayed.includes(file))
  .map((file) => [file, LIVE_SKIPPED[file] ?? dbfilterSkip(loadCapture(file)) ?? ''] as const);

describe('capture replay inventory (no server needed)', () => {
  it('classifies every capture: replayed, or skipped with a reason', () => {
    expect(replayed.length + skipped.length).toBe(files.length);
    for (const [file, reason] of skipped) expect(reason.length, file).toBeGreaterThan(0);
    for (const file of Object.keys(LIVE_SKIPPED)) expect(files).toContain(file);
    expect(skipped.filter(([file]) => file.startsWith('dbfilter-')).length).toBeGreaterThan(0);
  });

  it('replays a writing capture only with a reason it is safe, and every reason names a replayed capture', () => {
    const writing = replayed.filter((file) => WRITING_METHODS.has(callOf(loadCapture(file))?.method ?? ''));
    expect(writing.length).toBeGreaterThan(40);
    expect(writing.filter((file) => WRITES[file] === undefined)).toEqual([]);
    for (const file of Object.keys(WRITES)) expect(replayed).toContain(file);
    // The double's PREPARE (records earlier captures created) is covered by fresh records or creates.
    for (const file of Object.keys(PREPARE)) expect(WRITES[file], file).toBeDefined();
  });

  it('lists accepted differences only for replayed captures', () => {
    for (const file of Object.keys(ACCEPTED)) expect(replayed).toContain(file);
  });
});

describe.skipIf(LIVE.skipReason !== undefined)(
  LIVE.title('the captures, replayed on the live ERP and on the double'),
  () => {
    const session = useLiveReplay(LIVE, {
      title: 'capture replay',
      accepted: ACCEPTED,
      counts: { replayed: replayed.length, skipped: skipped.length },
      sharedServer: '../shared/odoo19',
      // By their names in the double, which holds the capture server's demo data.
      demoPartners: async () => {
        const double = await session.doubles.for(loadCapture('v1-read-ok.json'));
        const reply = await send(
          `${double.url}/json/2/res.partner/read`,
          'POST',
          {
            'content-type': 'application/json',
            authorization: `bearer ${DOUBLE_USERS[0]?.apiKey ?? ''}`,
            'x-odoo-database': 'erp_a',
          },
          JSON.stringify({
            ids: DEMO_PARTNERS,
            fields: ['name', 'is_company'],
            context: { active_test: false },
          }),
        );
        return JSON.parse(reply.body) as DemoPartner[];
      },
    });
    const { doubles, cleanup } = session;

    const liveBase: Omit<Target, 'ids'> = {
      keyFor: liveKeyFor({
        'erp_a admin rpc key': LIVE.key,
        'erp_b admin rpc key': SECOND_DB?.key,
        'erp_a limited rpc key': LIMITED?.key,
        'erp_a admin EXPIRED key': EXPIRED_KEY,
        'erp_a admin expired key': EXPIRED_KEY,
        'erp_a admin REVOKED key': REVOKED_KEY,
        'erp_a admin key scope odoo.plugin.outlook': OTHER_SCOPE_KEY,
      }),
      databases: new Map([['erp_a', LIVE.db], ...(SECOND_DB ? ([['erp_b', SECOND_DB.db]] as const) : [])]),
      uids: new Map([[adminUid, LIVE.uid], ...(LIMITED ? ([[limitedUid, LIMITED.uid]] as const) : [])]),
    };
    const liveTarget = (fresh: ReadonlyMap<number, number> = new Map()): Target => ({
      ...liveBase,
      logins: new Map([['admin', session.login()]]),
      ids: (capture) =>
        new Map(
          [
            ...session.demoIds(),
            ...fresh,
            ...(callOf(capture)?.model === 'res.users' ? (liveBase.uids ?? []) : []),
          ].filter(([from, to]) => from !== to),
        ),
    });
    const etagSourcesOfReplayed = etagSources(replayed.map(loadCapture));

    /** Creates the fresh records a capture needs on the live server; captured id -> fresh id. */
    async function freshRecords(file: string): Promise<Map<number, number>> {
      const plan = RECORDS[file];
      if (!plan) return new Map();
      const vals = plan.ids.map(() =>
        plan.model === 'res.partner'
          ? { name: liveName(`replay ${file}`) }
          : {
              name: 'proxy-capture.txt',
              datas: 'aGVsbG8gcHJveHkK',
              mimetype: 'text/plain',
              res_model: 'res.partner',
              res_id: session.demoIds().get(15) ?? 0,
            },
      );
      const ids = await cleanup.create(plan.model, vals);
      return new Map(plan.ids.map((captured, index) => [captured, ids[index] ?? 0]));
    }

    /**
     * For a model document both answered: the documents of the models its `_inherits` fields come
     * from (`res.partner` for `res.users`), each side's own, asked for as the capture asks for its
     * own (its key and database, a plain GET), so {@link otherModules} can place those fields.
     */
    async function delegatedDocuments(
      capture: Capture,
      liveReply: Reply,
      doubleReply: Reply,
      double: ErpDouble,
    ): Promise<DelegatedDocuments | undefined> {
      const live = answerOf(liveReply);
      const onDouble = answerOf(doubleReply);
      if (!isModelDocument(capture.request.path) || live.status !== 200 || onDouble.status !== 200)
        return undefined;
      const models = [...new Set([...delegatedModels(live.body), ...delegatedModels(onDouble.body)])];
      if (models.length === 0) return undefined;
      const documents = { live: {} as Record<string, unknown>, double: {} as Record<string, unknown> };
      for (const model of models) {
        const headers = Object.fromEntries(
          Object.entries(capture.request.headers).filter(
            ([name]) => !/^(if-none-match|if-modified-since|content-type|content-length)$/i.test(name),
          ),
        );
        const request: Capture = {
          ...capture,
          request: { method: 'GET', path: `/doc-bearer/${model}.json`, headers, body: null },
        };
        const fromLive = answerOf(await replay(LIVE.url, request, liveTarget()));
        const fromDouble = answerOf(await replayOnDouble(double, request));
        if (fromLive.status === 200) documents.live[model] = fromLive.body;
        if (fromDouble.status === 200) documents.double[model] = fromDouble.body;
      }
      return documents;
    }

    describe.each(replayed)('capture %s', (file) => {
      const capture = loadCapture(file);
      const needs = captureNeeds(LIVE, capture, { limitedUid, secondDb: 'erp_b' });
      it.skipIf(needs.length > 0)(
        `the real server and the double answer alike${needs.length ? ` (skipped: set ${needs.join(', ')})` : ''}`,
        async () => {
          const first = REPLAY_FIRST[file];
          // Prepare and act (live): fresh records, the ERP's own ETags.
          const liveReply = await session.replayLive(
            capture,
            async () => liveTarget(await freshRecords(file)),
            {
              first: first === undefined ? undefined : loadCapture(first),
              headers: (target) =>
                withServerEtags(requestOf(capture, target).headers, etagSourcesOfReplayed, async (source) =>
                  bareEtag(String((await replay(LIVE.url, source, target)).headers.etag ?? '')),
                ),
            },
          );
          // Prepare and act (double)
          const double = await doubles.for(capture);
          await prepare(double, file);
          if (first !== undefined) await replayOnDouble(double, loadCapture(first));
          const doubleReply = await replayOnDouble(
            double,
            capture,
            await withDoubleEtags(double, capture, etagSourcesOfReplayed),
          );

          session.compare(
            capture,
            liveReply,
            doubleReply,
            await delegatedDocuments(capture, liveReply, doubleReply, double),
          );
        },
      );
    });
  },
);
