/**
 * Replays the real Odoo 19 captures against the ERP double and checks that status, content type
 * and body shape match. Where the double and a capture differ, the double is wrong.
 *
 * The captures are a copy of `../shared/odoo/captures/` (keys redacted) kept beside this file, so
 * the suite needs nothing outside the repository; when `../shared` is there, a test checks that
 * the copy has not drifted from it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DOUBLE_USERS,
  ERP_A_ADMIN_KEY,
  ERP_A_EXPIRED_KEY,
  ERP_A_LIMITED_KEY,
  ERP_B_ADMIN_KEY,
  type ErpDouble,
  startErpDouble,
} from './index.ts';

const CAPTURES_DIR = new URL('./captures/', import.meta.url);
const SHARED_CAPTURES_DIR = new URL('../../../shared/odoo/captures/', import.meta.url);
const KEY_PLACEHOLDER = '<ERP_USER_API_KEY>';

/** Keys the real server had but the double does not know (so they fail like the captures show). */
const REVOKED_KEY = 'deadbeefdeadbeefdeadbeefdeadbeefdeadbeef';
const OTHER_SCOPE_KEY = '0badc0de0badc0de0badc0de0badc0de0badc0de';

/** `key_used` of a capture -> the key the double accepts (or deliberately does not). */
const KEY_FOR: Readonly<Record<string, string>> = {
  'erp_a admin rpc key': ERP_A_ADMIN_KEY,
  'erp_b admin rpc key': ERP_B_ADMIN_KEY,
  'erp_a limited rpc key': ERP_A_LIMITED_KEY,
  'erp_a admin EXPIRED key': ERP_A_EXPIRED_KEY,
  'erp_a admin expired key': ERP_A_EXPIRED_KEY,
  'erp_a admin REVOKED key': REVOKED_KEY,
  'erp_a admin key scope odoo.plugin.outlook': OTHER_SCOPE_KEY,
};

/** Captures the double does not imitate, with the reason. */
const SKIPPED: Readonly<Record<string, string>> = {
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
const PREPARE: Readonly<Record<string, { model: 'res.partner' | 'ir.attachment'; upTo: number }>> = {
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
const REPLAY_FIRST: Readonly<Record<string, string>> = {
  // The failed create by name must have left nothing behind (rolled back).
  'bridge-named-create-vals_list-check-v1.json': 'bridge-named-create-vals_list-v1.json',
};

/** Captures whose JSON the double must reproduce value for value (tracebacks aside). */
const SAME_VALUES = /^(bridge|doc-bearer)-/;

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

/** A capture whose string body was sent JSON-encoded (a JSON string), not as raw text. */
const JSON_STRING_BODIES: ReadonlySet<string> = new Set(['v2-body-json-string-error.json']);

interface Capture {
  file: string;
  caseText: string;
  server: string;
  keyUsed: string | null;
  request: { method: string; path: string; headers: Record<string, string>; body: unknown };
  response: { status: number; headers: Record<string, string>; body: unknown };
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function stringRecord(value: unknown): Record<string, string> {
  return Object.fromEntries(Object.entries(asRecord(value)).map(([key, item]) => [key, String(item)]));
}

function loadCapture(file: string): Capture {
  const raw = asRecord(JSON.parse(readFileSync(new URL(file, CAPTURES_DIR), 'utf8')));
  const request = asRecord(raw.request);
  const response = asRecord(raw.response);
  return {
    file,
    caseText: String(raw.case ?? ''),
    server: String(raw.server ?? ''),
    keyUsed: typeof raw.key_used === 'string' ? raw.key_used : null,
    request: {
      method: String(request.method ?? ''),
      path: String(request.path ?? ''),
      headers: stringRecord(request.headers),
      body: request.body,
    },
    response: {
      status: Number(response.status),
      headers: stringRecord(response.headers),
      body: response.body,
    },
  };
}

function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name);
  return entry?.[1];
}

/** Python type name of a JSON value, as the INDEX uses it. */
function jsonType(value: unknown): string {
  if (value === null) return 'NoneType';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'string') return 'str';
  return 'dict';
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

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

async function prepare(double: ErpDouble, file: string): Promise<void> {
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
  expect(ids).toContain(plan.upTo);
}

function keyFor(capture: Capture): string {
  if (capture.keyUsed === null)
    throw new Error(`${capture.file}: uses ${KEY_PLACEHOLDER} but has no key_used`);
  const key = KEY_FOR[capture.keyUsed];
  if (key === undefined) throw new Error(`${capture.file}: no key for key_used ${capture.keyUsed}`);
  return key;
}

/** The capture's request as the double gets it: keys filled in, the body serialized as it was sent. */
function requestOf(capture: Capture): {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
} {
  const needsKey = JSON.stringify(capture.request).includes(KEY_PLACEHOLDER);
  const fill = (text: string): string =>
    needsKey ? text.replaceAll(KEY_PLACEHOLDER, keyFor(capture)) : text;
  const headers = Object.fromEntries(
    Object.entries(capture.request.headers).map(([key, value]) => [key, fill(value)]),
  );
  const rawBody = capture.request.body;
  const body =
    rawBody === null || rawBody === undefined
      ? undefined
      : typeof rawBody === 'string' && !JSON_STRING_BODIES.has(capture.file)
        ? fill(rawBody)
        : fill(JSON.stringify(rawBody));
  return { method: capture.request.method, path: capture.request.path, headers, body };
}

function replay(double: ErpDouble, capture: Capture, headers = requestOf(capture).headers): Promise<Reply> {
  const { method, path, body } = requestOf(capture);
  return send(`${double.url}${path}`, method, headers, body);
}

/** The 64-hex value of an ETag header (`abc…`, `"abc…"` or `W/"abc…"`). */
function bareEtag(value: string | undefined): string | undefined {
  return /[0-9a-f]{64}/.exec(value ?? '')?.[0];
}

/**
 * ETags the real server handed out, each with the capture that first received it (earliest Date).
 * They are HMACs under the real database's secret, which the double cannot reproduce; a request
 * sending one back gets the double's ETag for that same source request instead (see below).
 */
const ETAG_SOURCES: ReadonlyMap<string, Capture> = (() => {
  const sources = new Map<string, Capture>();
  // The index capture has two Date headers, recorded joined: the first one counts.
  const dated = (capture: Capture): number => {
    const date = /\w{3}, \d{2} \w{3} \d{4} [\d:]{8} GMT/.exec(
      headerValue(capture.response.headers, 'date') ?? '',
    );
    return date ? Date.parse(date[0]) : Number.POSITIVE_INFINITY;
  };
  const captures = readdirSync(CAPTURES_DIR)
    .filter((name) => name.endsWith('.json') && SKIPPED[name] === undefined)
    .map(loadCapture)
    .sort((a, b) => dated(a) - dated(b) || a.file.localeCompare(b.file));
  for (const capture of captures) {
    const etag = bareEtag(headerValue(capture.response.headers, 'etag'));
    if (etag !== undefined && !sources.has(etag)) sources.set(etag, capture);
  }
  return sources;
})();

/**
 * Headers of the replayed request, with every captured ETag in If-None-Match (quoted, weak or
 * bare, as captured) replaced by the ETag the double answered to that ETag's source request.
 */
async function withDoubleEtags(double: ErpDouble, capture: Capture): Promise<Record<string, string>> {
  const headers = requestOf(capture).headers;
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== 'if-none-match') continue;
    let replaced = value;
    for (const [captured, source] of ETAG_SOURCES) {
      if (!replaced.includes(captured)) continue;
      const answer = await replay(double, source);
      const ours = bareEtag(String(answer.headers.etag ?? ''));
      expect(ours, `the double's ETag for ${source.file}`).toBeDefined();
      replaced = replaced.replaceAll(captured, ours ?? '');
    }
    headers[name] = replaced;
  }
  return headers;
}

/** A debug-free copy of a body: tracebacks are the real server's, never compared. */
function withoutDebug(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDebug);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'debug')
      .map(([key, item]) => [key, withoutDebug(item)]),
  );
}

/** A header value with its 64-hex digests masked, to compare forms (quoted or bare ETag, file name). */
function headerShape(value: string | string[] | undefined): string | undefined {
  return value === undefined ? undefined : String(value).replace(/[0-9a-f]{64}/g, '<sha256>');
}

function dbfilterOf(capture: Capture): string | undefined {
  return /--db-filter='([^']*)'/.exec(capture.server)?.[1];
}

const files = readdirSync(CAPTURES_DIR)
  .filter((name) => name.endsWith('.json'))
  .sort();
const replayed = files.filter((file) => SKIPPED[file] === undefined);
const doubles = new Map<string, Promise<ErpDouble>>();

/** One double per dbfilter configuration, reset before each capture. */
async function doubleFor(capture: Capture): Promise<ErpDouble> {
  const dbfilter = dbfilterOf(capture);
  const cacheKey = dbfilter ?? '';
  let started = doubles.get(cacheKey);
  if (!started) {
    started = startErpDouble({
      mode: '19',
      databases: ['erp_a', 'erp_b'],
      dbfilter,
      users: [...DOUBLE_USERS],
    });
    doubles.set(cacheKey, started);
  }
  const double = await started;
  double.reset();
  return double;
}

afterAll(async () => {
  for (const started of doubles.values()) await (await started).close();
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
    const double = await doubleFor(capture);
    await prepare(double, file);
    const first = REPLAY_FIRST[file];
    if (first !== undefined) await replay(double, loadCapture(first));

    const reply = await replay(double, capture, await withDoubleEtags(double, capture));

    const expected = capture.response;
    expect(reply.status, capture.caseText).toBe(expected.status);
    const expectedType = (headerValue(expected.headers, 'content-type') ?? '').split(';')[0];
    const actualType = String(reply.headers['content-type'] ?? '').split(';')[0];
    expect(actualType, capture.caseText).toBe(expectedType);
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

    if (expectedType !== 'application/json') {
      const expectedText = String(expected.body);
      if (expectedText.includes('No database is selected'))
        expect(reply.body).toContain('No database is selected');
      else expect(reply.body).not.toContain('No database is selected');
      if (!expectedText.startsWith('<')) expect(reply.body).toBe(expectedText);
      return;
    }

    const actual: unknown = JSON.parse(reply.body);
    const expectedBody = expected.body;
    if (SAME_VALUES.test(file) && VALUES_DIFFER[file] === undefined) {
      expect(withoutDebug(actual), `${capture.caseText}: same values`).toEqual(withoutDebug(expectedBody));
    }
    if (typeof expectedBody === 'object' && expectedBody !== null && 'jsonrpc' in expectedBody) {
      const want = asRecord(expectedBody);
      const got = asRecord(actual);
      expect(got.jsonrpc).toBe('2.0');
      expect(got.id).toEqual(want.id);
      expect('result' in got, 'result presence').toBe('result' in want);
      expect('error' in got, 'error presence').toBe('error' in want);
      if ('result' in want) expect(jsonType(got.result)).toBe(jsonType(want.result));
      if ('error' in want) {
        const wantError = asRecord(want.error);
        const gotError = asRecord(got.error);
        expect(gotError.code).toBe(wantError.code);
        expect(gotError.message).toBe(wantError.message);
        const gotData = asRecord(gotError.data);
        const wantData = asRecord(wantError.data);
        expect(gotData.name).toBe(wantData.name);
        expect(Object.keys(gotData)).toEqual(Object.keys(wantData));
      }
      return;
    }
    const wantObject = asRecord(expectedBody);
    if (expected.status !== 200) {
      const got = asRecord(actual);
      expect(got.name).toBe(wantObject.name);
      expect(Object.keys(got)).toEqual(['name', 'message', 'arguments', 'context', 'debug']);
      return;
    }
    expect(jsonType(actual)).toBe(jsonType(expectedBody));
    if (capture.request.path.endsWith('/version'))
      expect(Object.keys(asRecord(actual))).toEqual(Object.keys(wantObject));
  });
});

describe('the copy of the captures', () => {
  const shared = existsSync(SHARED_CAPTURES_DIR);
  it.skipIf(!shared)(
    'matches ../shared/odoo/captures file for file (skipped when ../shared is absent)',
    () => {
      const names = readdirSync(SHARED_CAPTURES_DIR).sort();
      expect(readdirSync(CAPTURES_DIR).sort()).toEqual(names);
      for (const name of names) {
        expect(
          readFileSync(new URL(name, CAPTURES_DIR)).equals(readFileSync(new URL(name, SHARED_CAPTURES_DIR))),
          name,
        ).toBe(true);
      }
    },
  );
});
