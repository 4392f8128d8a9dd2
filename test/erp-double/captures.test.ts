/**
 * Replays the real Odoo 19 captures against the ERP double and checks that status, content type
 * and body shape match. Where the double and a capture differ, the double is wrong. The Odoo 18,
 * 17 and 16 captures (`o18-*`, `o17-*`, `o16-*`) are replayed against the double's 18, 17 and 16
 * modes by captures16-18.test.ts.
 *
 * The captures are a copy of `../shared/odoo/captures/` (keys redacted) kept beside this file, so
 * the suite needs nothing outside the repository; when `../shared` is there, a test checks that
 * the copy has not drifted from it. Loading, replaying and comparing live in capture-replay.ts,
 * the double's side of the replay in double-replay.ts (the live suite replays them too).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  answerOf,
  CAPTURES_DIR,
  type Capture,
  capturedAnswer,
  captureFiles,
  captureServer,
  etagSources,
  headerShape,
  headerValue,
  INDEX18_HEADING,
  loadCapture,
  shapeDifferences,
  withoutDebug,
} from './capture-replay.ts';
import {
  DoublePool,
  PREPARE,
  prepare,
  REPLAY_FIRST,
  replayOnDouble,
  SKIPPED,
  withDoubleEtags,
} from './double-replay.ts';

const SHARED_CAPTURES_DIR = new URL('../../../shared/odoo/captures/', import.meta.url);

/** Captures whose JSON the double must reproduce value for value (tracebacks aside). */
const SAME_VALUES = /^(bridge|doc-bearer)-|^v2-kwargs-as-array-search_read\.json$/;

/**
 * Captures matching {@link SAME_VALUES} whose values the double does not reproduce, with the
 * reason. For the others the double gives the same data (the same operation over v1 and JSON-2,
 * the same documentation and the same errors).
 */
const VALUES_DIFFER: Readonly<Record<string, string>> = {
  'bridge-fields_get-v1.json': "the double's res.partner has a subset of Odoo's fields",
  'bridge-fields_get-json2.json': "the double's res.partner has a subset of Odoo's fields",
  'bridge-search_read-v1.json':
    'create_date: the demo data was reloaded between capture sessions (older captures show 2026-11-21)',
  'bridge-search_read-json2.json':
    'create_date: the demo data was reloaded between capture sessions (older captures show 2026-11-21)',
  'doc-bearer-index-admin.json':
    "the double's index lists the models the double has, not the real server's 165",
};

/**
 * ETags the real server handed out, each with the capture that first received it (earliest Date).
 * They are HMACs under the real database's secret, which the double cannot reproduce; a request
 * sending one back gets the double's ETag for that same source request instead.
 */
const ETAG_SOURCES: ReadonlyMap<string, Capture> = etagSources(
  captureFiles()
    .filter((name) => SKIPPED[name] === undefined)
    .map(loadCapture),
);

const files = captureFiles();
const replayed = files.filter((file) => SKIPPED[file] === undefined);
const doubles = new DoublePool();

afterAll(async () => {
  await doubles.close();
});

describe('capture inventory', () => {
  it('classifies every capture file: replayed or skipped with a reason', () => {
    expect(files.length).toBeGreaterThan(100);
    for (const file of Object.keys(SKIPPED)) expect(files).toContain(file);
    for (const file of Object.keys(PREPARE)) expect(replayed).toContain(file);
    for (const [file, first] of Object.entries(REPLAY_FIRST))
      expect(replayed).toEqual(expect.arrayContaining([file, first]));
    for (const file of Object.keys(VALUES_DIFFER))
      expect(replayed.filter((name) => SAME_VALUES.test(name))).toContain(file);
    expect(replayed.length + Object.keys(SKIPPED).length).toBe(files.length);
  });
});

describe.each(replayed)('capture %s', (file) => {
  it('is reproduced by the double (status, content type, body shape)', async () => {
    const capture = loadCapture(file);
    const double = await doubles.for(capture);
    await prepare(double, file);
    const first = REPLAY_FIRST[file];
    if (first !== undefined) await replayOnDouble(double, loadCapture(first));

    const reply = await replayOnDouble(double, capture, await withDoubleEtags(double, capture, ETAG_SOURCES));

    const expected = capture.response;
    expect(
      shapeDifferences(capturedAnswer(capture), answerOf(reply), capture.request.path),
      capture.caseText,
    ).toEqual([]);
    expect(reply.headers['set-cookie'], 'the double never sets cookies').toBeUndefined();
    const wwwAuthenticate = headerValue(expected.headers, 'www-authenticate');
    // Odoo sends `Bearer ` with a trailing space; HTTP parsers (Node's included) trim header values.
    if (wwwAuthenticate !== undefined) expect(reply.headers['www-authenticate']).toBe(wwwAuthenticate.trim());
    // Odoo sends X-Content-Type-Options on some answers only (JSON-RPC results, not JSON-RPC errors).
    expect(reply.headers['x-content-type-options'], `${capture.caseText}: X-Content-Type-Options`).toBe(
      headerValue(expected.headers, 'x-content-type-options'),
    );
    // api_doc's caching headers: the same values, and ETags of the same form (bare or quoted).
    for (const name of ['cache-control', 'content-language', 'content-security-policy']) {
      expect(reply.headers[name], `${capture.caseText}: ${name}`).toBe(headerValue(expected.headers, name));
    }
    for (const name of ['etag', 'content-disposition']) {
      expect(headerShape(reply.headers[name]), `${capture.caseText}: ${name}`).toBe(
        headerShape(headerValue(expected.headers, name)),
      );
    }
    expect(reply.headers['last-modified'] !== undefined, `${capture.caseText}: Last-Modified`).toBe(
      headerValue(expected.headers, 'last-modified') !== undefined,
    );

    // Same values where the double must reproduce them (the shape was compared above).
    const actual = answerOf(reply);
    if (
      actual.contentType === 'application/json' &&
      SAME_VALUES.test(file) &&
      VALUES_DIFFER[file] === undefined
    ) {
      expect(withoutDebug(actual.body), `${capture.caseText}: same values`).toEqual(
        withoutDebug(expected.body),
      );
    }
  });
});

describe('the copy of the captures', () => {
  const shared = existsSync(SHARED_CAPTURES_DIR);
  it.skipIf(!shared)(
    'matches ../shared/odoo/captures file for file (skipped when ../shared is absent)',
    () => {
      // The Odoo 18 captures (o18-*, and INDEX.md's section about them) are this repository's own.
      const names = readdirSync(SHARED_CAPTURES_DIR).sort();
      expect(
        readdirSync(CAPTURES_DIR)
          .filter((name) => captureServer(name) === '19')
          .sort(),
      ).toEqual(names);
      for (const name of names) {
        const ours = readFileSync(new URL(name, CAPTURES_DIR), 'utf8');
        const copy = name === 'INDEX.md' ? (ours.split(INDEX18_HEADING)[0] ?? '') : ours;
        expect(copy === readFileSync(new URL(name, SHARED_CAPTURES_DIR), 'utf8'), name).toBe(true);
      }
    },
  );
});
