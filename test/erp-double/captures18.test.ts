/**
 * Replays the real Odoo 18.0 captures (`captures/o18-*.json`, recorded by record-captures18.ts
 * from the Odoo 18 of `../shared/odoo18`) against the ERP double in its 18 mode. Where the double
 * and a capture differ, the double is wrong, unless the difference is listed in
 * {@link ACCEPTED} with its reason; a listed difference that no longer shows fails too.
 *
 * Compared: status, content type and body shape ({@link shapeDifferences}), the structure of the
 * body below that ({@link structureDifferences}: types, keys, lengths), the exact text of non-JSON
 * answers (werkzeug's static pages), the values of version answers, and the `message` and
 * `arguments` of JSON-RPC errors. Result values are not compared: the double's demo data comes
 * from the Odoo 19 capture server, not from this one.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  type Answer,
  answerOf,
  asRecord,
  capturedAnswer,
  captureFiles,
  loadCapture,
  replay,
  shapeDifferences,
  structureDifferences,
} from './capture-replay.ts';
import { DoublePool, doubleTarget18, PREPARE18, prepare18 } from './double-replay.ts';

/** Differences between a capture and the double that are not the double's fault, with the reason. */
const ACCEPTED: Readonly<Record<string, { differences: readonly string[]; reason: string }>> = {};

const files = captureFiles('18');
const doubles = new DoublePool();

afterAll(async () => {
  await doubles.close();
});

/** The version answers: `common.version`, `/web/webclient/version_info`, `db.server_version`. */
const VERSION_CAPTURES = /^o18-(v1-common_version|web-webclient-version_info|v1-db_server_version)\.json$/;

/** What {@link shapeDifferences} leaves out, compared for the Odoo 18 captures. */
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
  if (VERSION_CAPTURES.test(file) && JSON.stringify(want.result) !== JSON.stringify(got.result))
    found.push(`result: ${JSON.stringify(want.result)}, got ${JSON.stringify(got.result)}`);
  const wantData = asRecord(asRecord(want.error).data);
  const gotData = asRecord(asRecord(got.error).data);
  for (const key of ['message', 'arguments']) {
    if (key in wantData && JSON.stringify(wantData[key]) !== JSON.stringify(gotData[key]))
      found.push(`error.data.${key}: ${JSON.stringify(wantData[key])}, got ${JSON.stringify(gotData[key])}`);
  }
  return found;
}

describe('Odoo 18 capture inventory', () => {
  it('has the o18 captures, and every accepted difference and prepared record names one of them', () => {
    expect(files.length).toBeGreaterThanOrEqual(40);
    for (const file of [...Object.keys(ACCEPTED), ...Object.keys(PREPARE18)]) expect(files).toContain(file);
    for (const sources of Object.values(PREPARE18))
      expect(files).toEqual(expect.arrayContaining([...sources]));
  });
});

describe.each(files)('Odoo 18 capture %s', (file) => {
  it('is reproduced by the double in mode 18', async () => {
    const capture = loadCapture(file);
    const double = await doubles.for(capture);
    expect(double.mode).toBe('18');
    const ids = await prepare18(double, file);
    const reply = await replay(double.url, capture, doubleTarget18(ids));

    const expected = capturedAnswer(capture);
    const actual = answerOf(reply);
    const differences = [
      ...shapeDifferences(expected, actual, capture.request.path),
      ...detailDifferences(file, expected, actual),
    ];
    expect(differences, capture.caseText).toEqual(ACCEPTED[file]?.differences ?? []);
    expect(reply.headers['set-cookie'], 'the double never sets cookies').toBeUndefined();
  });
});
