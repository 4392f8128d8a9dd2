/**
 * Replays the real Odoo 18, 17 and 16 captures (test/erp-double/captures/o18-*.json, o17-*,
 * o16-*, recorded by record-captures.ts) against a live Odoo of that version (`ERP_LIVE18_*`,
 * `ERP_LIVE17_*`, `ERP_LIVE16_*`) and against the ERP double in the same mode (the same request
 * to both), and compares the two answers as capture-replay.test.ts does for the Odoo 19
 * captures: status, content type and body shape, then the structure of the body
 * (`answerDifferences`). A difference no {@link ACCEPTED} tolerance explains fails: the double
 * (test/erp-double) is wrong, or the list must say why not. One file per server runs it:
 * capture-replay18.test.ts, capture-replay17.test.ts, capture-replay16.test.ts.
 *
 * Databases, uids, keys, the admin's login and the demo partners the captures name are mapped to
 * the live server's, discovered there. Captures that write run only when {@link writes} says why
 * that is safe: on partners the test creates first (the captured ids mapped to them), as creates
 * whose new ids are deleted after, or because the ERP refuses them. On a server of another major
 * version than the captures' every replay fails (live-env.ts, checkServerVersion).
 */
import { describe, expect, it } from 'vitest';
import {
  asRecord,
  type Capture,
  callOf,
  captureFiles,
  loadCapture,
  type RecordedVersion,
  recordedKeyNames,
  replay,
  type Target,
  type Tolerance,
  WRITE_SAFE,
  WRITING_METHODS,
} from '../erp-double/capture-replay.ts';
import {
  createdIdsRecorded,
  doubleTargetRecorded,
  PREPARE_RECORDED,
  prepareRecorded,
} from '../erp-double/double-replay.ts';
import {
  captureNeeds,
  type DemoPartner,
  erpResult,
  type LiveServer,
  liveKeyFor,
  liveName,
  useLiveReplay,
} from './live-env.ts';

/** The id the captures use as a missing record: checked to be missing before a capture writes it. */
const MISSING_ID = 999999;

const { ownRecords: OWN_RECORDS, creates: CREATES, refused: REFUSED } = WRITE_SAFE;

/** Why replaying a capture on a shared server is safe: every replayed capture of `version` that calls a writing method. */
function writes(version: RecordedVersion): Readonly<Record<string, string>> {
  const o = `o${version}`;
  return {
    ...Object.fromEntries(
      Object.keys(PREPARE_RECORDED)
        .filter((file) => file.startsWith(`${o}-`))
        .map((file) => [file, OWN_RECORDS]),
    ),
    [`${o}-v1-copy-int.json`]: `${OWN_RECORDS}; the copy too`,
    [`${o}-v1-copy-list.json`]: `${OWN_RECORDS}; the copy too`,
    [`${o}-v1-create-single.json`]: CREATES,
    [`${o}-v1-create-list.json`]: CREATES,
    [`${o}-v1-named-create-vals_list.json`]: `${CREATES} (the ERP rolls this one back: IndexError after the create)`,
    [`${o}-v1-err-validation-noname.json`]: `${REFUSED} (ValidationError)`,
    [`${o}-v1-err-limited-create.json`]: `${REFUSED} (AccessError)`,
    [`${o}-v1-err-missing-write.json`]: `${REFUSED} (id ${MISSING_ID} does not exist: checked first)`,
    [`${o}-v1-unlink-missing.json`]: `${REFUSED} (id ${MISSING_ID} does not exist: checked first)`,
    [`${o}-v1-record-method-no-ids.json`]: `${REFUSED} (IndexError: no ids)`,
  };
}

/**
 * Defines the replay of the Odoo `version` captures on `LIVE` (a server of that version) and on
 * the double in mode `version`: an inventory that needs no server, then one case per capture.
 */
export function describeCaptureReplay(version: RecordedVersion, LIVE: LiveServer): void {
  const { limited: LIMITED, expiredKey: EXPIRED_KEY, secondDb: SECOND_DB } = LIVE;
  const o = `o${version}`;
  const keyNames = recordedKeyNames(version);

  const files = captureFiles(version);

  /** The `args` of a capture's `/jsonrpc` request. */
  const argsOf = (file: string): unknown[] => {
    const args = asRecord(asRecord(loadCapture(file).request.body).params).args;
    return Array.isArray(args) ? args : [];
  };

  /** The capture server's admin uid (what common.authenticate answered) and limited user's uid. */
  const ADMIN_UID = Number(asRecord(loadCapture(`${o}-v1-common_authenticate.json`).response.body).result);
  const LIMITED_UID = Number(argsOf(`${o}-v1-err-limited-create.json`)[1]);

  /** The demo partners the captures name (read, named read), as the capture server read them. */
  const DEMO_PARTNERS = asRecord(loadCapture(`${o}-v1-read.json`).response.body).result as DemoPartner[];

  /** Captures not replayed against the real server, with the reason (none: every capture is safe to replay). */
  const LIVE_SKIPPED: Readonly<Record<string, string>> = {};

  /** Captures whose request only means something after another capture's request: replayed first. */
  const REPLAY_FIRST: Readonly<Record<string, string>> = {
    // The failed create by name must have left nothing behind (rolled back).
    [`${o}-v1-named-create-vals_list-check.json`]: `${o}-v1-named-create-vals_list.json`,
  };

  const WRITES = writes(version);

  /**
   * Differences between the real Odoo and the double that are tolerated, each with the reason and
   * one pattern per difference line; they may show or not (one that does not is reported after the
   * run, never failed). None so far, on any of the three.
   */
  const ACCEPTED: Readonly<Record<string, Tolerance>> = {};

  const replayed = files.filter((file) => LIVE_SKIPPED[file] === undefined);
  const skipped = Object.entries(LIVE_SKIPPED);

  describe(`Odoo ${version} capture replay inventory (no server needed)`, () => {
    it(`classifies every ${o} capture: replayed, or skipped with a reason`, () => {
      expect(files.length).toBeGreaterThanOrEqual(40);
      expect(replayed.length + skipped.length).toBe(files.length);
      for (const [file, reason] of skipped) {
        expect(files).toContain(file);
        expect(reason.length, file).toBeGreaterThan(0);
      }
    });

    it('replays a writing capture only with a reason it is safe, and every reason names a replayed capture', () => {
      const writing = replayed.filter((file) => WRITING_METHODS.has(callOf(loadCapture(file))?.method ?? ''));
      expect(writing.length).toBeGreaterThan(10);
      expect(writing.filter((file) => WRITES[file] === undefined)).toEqual([]);
      for (const file of Object.keys(WRITES)) expect(replayed).toContain(file);
      for (const [file, first] of Object.entries(REPLAY_FIRST))
        expect(replayed).toEqual(expect.arrayContaining([file, first]));
    });

    it('lists accepted differences only for replayed captures, and knows the uids and demo partners', () => {
      for (const file of Object.keys(ACCEPTED)) expect(replayed).toContain(file);
      expect([ADMIN_UID, LIMITED_UID].every(Number.isInteger)).toBe(true);
      expect(DEMO_PARTNERS.length).toBeGreaterThan(0);
    });
  });

  describe.skipIf(LIVE.skipReason !== undefined)(
    LIVE.title(`the Odoo ${version} captures, replayed on the live ERP and on the double in mode ${version}`),
    () => {
      const session = useLiveReplay(LIVE, {
        title: `Odoo ${version} capture replay`,
        accepted: ACCEPTED,
        counts: { replayed: replayed.length, skipped: skipped.length },
        sharedServer: `../shared/odoo${version}`,
        demoPartners: async () => DEMO_PARTNERS,
      });
      // A server of another major than the captures' fails the block (useLiveReplay checks it first).
      const { doubles, cleanup } = session;

      const liveTarget = (fresh: ReadonlyMap<number, number>): Target => ({
        keyFor: liveKeyFor({
          [keyNames.admin]: LIVE.key,
          [keyNames.secondDb]: SECOND_DB?.key,
          [keyNames.limited]: LIMITED?.key,
          [keyNames.old]: EXPIRED_KEY,
        }),
        databases: new Map([
          [`erp${version}_a`, LIVE.db],
          ...(SECOND_DB ? ([[`erp${version}_b`, SECOND_DB.db]] as const) : []),
        ]),
        uids: new Map([[ADMIN_UID, LIVE.uid], ...(LIMITED ? ([[LIMITED_UID, LIMITED.uid]] as const) : [])]),
        logins: new Map([['admin', session.login()]]),
        ids: () => new Map([...session.demoIds(), ...fresh].filter(([from, to]) => from !== to)),
      });

      /** Fresh partners on the live server for those the capture's request names; captured id -> fresh id. */
      async function freshPartners(file: string): Promise<Map<number, number>> {
        const captured = createdIdsRecorded(file);
        if (captured.length === 0) return new Map();
        const ids = await cleanup.create(
          'res.partner',
          captured.map(() => ({ name: liveName(`replay ${file}`) })),
        );
        return new Map(captured.map((id, index) => [id, ids[index] ?? 0]));
      }

      /** Refuses to replay a capture that writes the missing id when that id exists on the live server. */
      async function checkMissing(capture: Capture): Promise<void> {
        const call = callOf(capture);
        if (
          !call ||
          !WRITING_METHODS.has(call.method) ||
          !JSON.stringify(capture.request.body).includes(`${MISSING_ID}`)
        )
          return;
        const existing = await erpResult(LIVE, call.model, 'search', {
          domain: [['id', '=', MISSING_ID]],
          context: { active_test: false },
        });
        if ((existing as number[]).length > 0)
          throw new Error(
            `${capture.file}: ${call.model} ${MISSING_ID} exists on ${LIVE.url}; not writing it`,
          );
      }

      describe.each(replayed)('capture %s', (file) => {
        const capture = loadCapture(file);
        const needs = captureNeeds(LIVE, capture, { limitedUid: LIMITED_UID, secondDb: `erp${version}_b` });
        // On 16 and 17 the `*_EXPIRED_KEY` slot holds a revoked key (no key expiry there).
        const oldKey = `${LIVE.prefix}_EXPIRED_KEY`;
        if (capture.keyUsed === keyNames.old && !LIVE.expiredKey && !needs.includes(oldKey))
          needs.push(oldKey);
        it.skipIf(needs.length > 0)(
          `the real Odoo ${version} and the double answer alike${needs.length ? ` (skipped: set ${needs.join(', ')})` : ''}`,
          async () => {
            const first = REPLAY_FIRST[file];
            // Prepare and act (live): the missing id checked, fresh partners for the captured ones.
            const liveReply = await session.replayLive(
              capture,
              async () => {
                await checkMissing(capture);
                return liveTarget(await freshPartners(file));
              },
              { first: first === undefined ? undefined : loadCapture(first) },
            );
            // Prepare and act (double)
            const double = await doubles.for(capture);
            const target = doubleTargetRecorded(file, await prepareRecorded(double, file));
            if (first !== undefined) await replay(double.url, loadCapture(first), target);
            const doubleReply = await replay(double.url, capture, target);

            session.compare(capture, liveReply, doubleReply);
          },
        );
      });
    },
  );
}
