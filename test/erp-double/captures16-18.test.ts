/**
 * Replays the real Odoo 18.0, 17.0 and 16.0 captures (`captures/o18-*.json`, `o17-*`, `o16-*`,
 * recorded by record-captures.ts from the servers of `../shared/odoo18`, `odoo17` and `odoo16`)
 * against the ERP double in the matching mode. Where the double and a capture differ, the double
 * is wrong, unless the difference is listed in {@link ACCEPTED} with its reason; a listed
 * difference that no longer shows fails too.
 *
 * Compared: status, content type and body shape ({@link shapeDifferences}), the structure of the
 * body below that ({@link structureDifferences}: types, keys, lengths), the exact text of non-JSON
 * answers (werkzeug's static pages), the values of version answers and of string results, and the
 * `message` and `arguments` of JSON-RPC errors. Other result values are not compared: the double's
 * demo data comes from the Odoo 19 capture server, not from these.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  type Answer,
  answerOf,
  asRecord,
  capturedAnswer,
  captureFiles,
  headerValue,
  loadCapture,
  RECORDED_VERSIONS,
  type RecordedVersion,
  replay,
  shapeDifferences,
  structureDifferences,
} from './capture-replay.ts';
import { DoublePool, doubleTargetRecorded, PREPARE_RECORDED, prepareRecorded } from './double-replay.ts';

/** Differences between a capture and the double that are not the double's fault, with the reason. */
const ACCEPTED: Readonly<Record<string, { differences: readonly string[]; reason: string }>> = {};

/** Fewest captures per version: what the 18 recording has, and 16 and 17 four more (named arguments). */
const AT_LEAST: Readonly<Record<RecordedVersion, number>> = { '18': 45, '17': 49, '16': 49 };

const doubles = new DoublePool();

afterAll(async () => {
  await doubles.close();
});

/** The version answers: `common.version`, `/web/webclient/version_info`, `db.server_version`. */
const VERSION_CAPTURES =
  /^o1[678]-(v1-common_version|web-webclient-version_info|v1-db_server_version)\.json$/;

/** What {@link shapeDifferences} leaves out, compared for the captures of 16-18. */
function detailDifferences(file: string, expected: Answer, actual: Answer): string[] {
  const found: string[] = [];
  if (expected.contentType !== 'application/json' || actual.contentType !== 'application/json') {
    if (expected.body !== actual.body)
      found.push(`text: ${JSON.stringify(expected.body)}, got ${JSON.stringify(actual.body)}`);
    return found;
  }
  found.push(
    ...structureDifferences(expected.body, actual.body, { limit: 20, compare: 'exact' }).map(
      (line) => `structure ${line}`,
    ),
  );
  const want = asRecord(expected.body);
  const got = asRecord(actual.body);
  // A version answer, and a string result (16 and 17's `with_context`: its recordset's str()).
  if (
    (VERSION_CAPTURES.test(file) || typeof want.result === 'string') &&
    JSON.stringify(want.result) !== JSON.stringify(got.result)
  )
    found.push(`result: ${JSON.stringify(want.result)}, got ${JSON.stringify(got.result)}`);
  const wantData = asRecord(asRecord(want.error).data);
  const gotData = asRecord(asRecord(got.error).data);
  for (const key of ['message', 'arguments']) {
    if (key in wantData && JSON.stringify(wantData[key]) !== JSON.stringify(gotData[key]))
      found.push(`error.data.${key}: ${JSON.stringify(wantData[key])}, got ${JSON.stringify(gotData[key])}`);
  }
  return found;
}

describe('capture inventory of Odoo 16-18', () => {
  it.each(RECORDED_VERSIONS)('has the o%s captures', (version) => {
    expect(captureFiles(version).length).toBeGreaterThanOrEqual(AT_LEAST[version]);
  });

  it('names existing captures in every accepted difference and prepared record', () => {
    const files = RECORDED_VERSIONS.flatMap((version) => captureFiles(version));
    for (const file of Object.keys(ACCEPTED)) expect(files).toContain(file);
    // Each version's prepared captures exist in that version's recording.
    for (const [file, sources] of Object.entries(PREPARE_RECORDED))
      for (const name of [file, ...sources]) expect(files).toContain(name);
  });
});

describe.each(RECORDED_VERSIONS)('Odoo %s captures', (version) => {
  describe.each(captureFiles(version))('capture %s', (file) => {
    it(`is reproduced by the double in mode ${version}`, async () => {
      const capture = loadCapture(file);
      const double = await doubles.for(capture);
      expect(double.mode).toBe(version);
      const ids = await prepareRecorded(double, file);
      const reply = await replay(double.url, capture, doubleTargetRecorded(file, ids));

      const expected = capturedAnswer(capture);
      const actual = answerOf(reply);
      const differences = [
        ...shapeDifferences(expected, actual, capture.request.path),
        ...detailDifferences(file, expected, actual),
      ];
      expect(differences, capture.caseText).toEqual(ACCEPTED[file]?.differences ?? []);
      expect(reply.headers['set-cookie'], 'the double never sets cookies').toBeUndefined();
      expect(reply.headers.server, 'the Server header').toBe(headerValue(capture.response.headers, 'server'));
    });
  });
});
