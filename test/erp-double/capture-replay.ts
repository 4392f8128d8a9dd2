/**
 * @module erp-double/capture-replay
 * What the capture replays share: loading the captures of `captures/` (a real Odoo 19's, and
 * `o18-*`, `o17-*`, `o16-*` of a real Odoo 18.0, 17.0 and 16.0), turning one into the request to
 * send (keys, and for another server its databases, uids and record ids, filled in), sending it,
 * comparing two answers by status, content type and body shape (then structure), and the
 * tolerances of such comparisons. Used by `captures.test.ts` and `captures16-18.test.ts` (the
 * captures against the double) and by `test/live/capture-replay.test.ts` and
 * `test/live/capture-replay16-18.ts` (a real server against the double).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';

export const CAPTURES_DIR = new URL('./captures/', import.meta.url);
export const KEY_PLACEHOLDER = '<ERP_USER_API_KEY>';

/** A capture whose string body was sent JSON-encoded (a JSON string), not as raw text. */
export const JSON_STRING_BODIES: ReadonlySet<string> = new Set(['v2-body-json-string-error.json']);

export interface Capture {
  file: string;
  caseText: string;
  server: string;
  keyUsed: string | null;
  request: { method: string; path: string; headers: Record<string, string>; body: unknown };
  response: { status: number; headers: Record<string, string>; body: unknown };
}

export function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function stringRecord(value: unknown): Record<string, string> {
  return Object.fromEntries(Object.entries(asRecord(value)).map(([key, item]) => [key, String(item)]));
}

/** Where INDEX.md's section about the Odoo 18 captures starts (before it: the Odoo 19 index; after it, 17's and 16's). */
export const INDEX18_HEADING = '\n# Odoo 18 captures';

/** The Odoo versions whose captures this repository recorded itself (`o18-*`, `o17-*`, `o16-*`), newest first. */
export const RECORDED_VERSIONS = ['18', '17', '16'] as const;
export type RecordedVersion = (typeof RECORDED_VERSIONS)[number];

/** Where INDEX.md's section about the captures of `version` starts (it ends where the next `# Odoo` heading starts). */
export function indexHeading(version: RecordedVersion): string {
  return `\n# Odoo ${version} captures`;
}

/**
 * The `key_used` names of a recorded version's captures: the admin's and the limited user's rpc
 * keys of erpNN_a, the admin's of erpNN_b, and the key of keys.json's `admin_expired` slot, an
 * expired key on 18 and a revoked one (generated, then deleted) on 16 and 17, which have no expiry.
 */
export function recordedKeyNames(version: RecordedVersion): {
  admin: string;
  limited: string;
  secondDb: string;
  old: string;
} {
  return {
    admin: `erp${version}_a admin rpc key`,
    limited: `erp${version}_a limited rpc key`,
    secondDb: `erp${version}_b admin rpc key`,
    old: `erp${version}_a admin ${version === '18' ? 'expired' : 'revoked'} key`,
  };
}

/** The Odoo major version a capture was recorded from: `o18-*`, `o17-*`, `o16-*` files from a real 18.0, 17.0, 16.0, the others from 19.0. */
export type CaptureServer = RecordedVersion | '19';

/** The server a capture file comes from, read from its name (`o18-` prefix: Odoo 18, and so on). */
export function captureServer(file: string): CaptureServer {
  const recorded = /^o(1[678])-/.exec(file)?.[1];
  return RECORDED_VERSIONS.find((version) => version === recorded) ?? '19';
}

/** The capture files (`*.json`) recorded from `server` (default: the Odoo 19 ones), sorted. */
export function captureFiles(server: CaptureServer = '19'): string[] {
  return readdirSync(CAPTURES_DIR)
    .filter((name) => name.endsWith('.json') && captureServer(name) === server)
    .sort();
}

export function loadCapture(file: string): Capture {
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

export function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name);
  return entry?.[1];
}

/** Python type name of a JSON value, as the INDEX uses it. */
export function jsonType(value: unknown): string {
  if (value === null) return 'NoneType';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'string') return 'str';
  return 'dict';
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export function send(
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

/** A request ready to send. */
export interface OutgoingRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/**
 * How a capture's request is adapted to the server it is replayed on. The captures name the
 * capture server's databases (`erp_a`, `erp_b`), uids and record ids; another server may have
 * others. Maps are applied only where a capture's request carries such a value: the
 * `X-Odoo-Database` header, the `db` and `uid` of `/jsonrpc` calls, and the numbers in the
 * arguments of `/jsonrpc` `execute_kw`/`execute` and in JSON-2 bodies (record ids).
 */
export interface Target {
  /** The key for a capture that uses {@link KEY_PLACEHOLDER}, chosen from its `key_used`. */
  keyFor(capture: Capture): string;
  databases?: ReadonlyMap<string, string>;
  uids?: ReadonlyMap<number, number>;
  /** Logins of `common.authenticate`/`login` (the capture server's admin is `admin`). */
  logins?: ReadonlyMap<string, string>;
  /** Record ids of this capture's request -> ids on the target. */
  ids?(capture: Capture): ReadonlyMap<number, number>;
}

function mapNumbers(value: unknown, map: ReadonlyMap<number, number>): unknown {
  if (typeof value === 'number') return map.get(value) ?? value;
  if (Array.isArray(value)) return value.map((item) => mapNumbers(item, map));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapNumbers(item, map)]));
  return value;
}

/** The capture's JSON body with the target's databases, uids and record ids. */
function adaptBody(capture: Capture, target: Target): unknown {
  const body = capture.request.body;
  const ids = target.ids?.(capture) ?? new Map<number, number>();
  const databases = target.databases ?? new Map<string, string>();
  const uids = target.uids ?? new Map<number, number>();
  if (typeof body !== 'object' || body === null) return body;
  if (Array.isArray(body)) return mapNumbers(body, ids);
  const params = asRecord(asRecord(body).params);
  if (!capture.request.path.startsWith('/jsonrpc') || !Array.isArray(params.args))
    return mapNumbers(body, ids);
  // /jsonrpc: args = [db, uid, password, model, method, args, kwargs] for object.execute(_kw);
  // [db, login, password, ...] for common.authenticate/login. Other services carry no db.
  const args = [...params.args];
  const service = params.service;
  if ((service === 'object' || service === 'common') && typeof args[0] === 'string')
    args[0] = databases.get(args[0]) ?? args[0];
  if (service === 'object' && typeof args[1] === 'number') args[1] = uids.get(args[1]) ?? args[1];
  if (service === 'common' && typeof args[1] === 'string') args[1] = target.logins?.get(args[1]) ?? args[1];
  if (service === 'object') for (let i = 5; i < args.length; i++) args[i] = mapNumbers(args[i], ids);
  return { ...asRecord(body), params: { ...params, args } };
}

/** The capture's request as `target` gets it: keys filled in, the body serialized as it was sent. */
export function requestOf(capture: Capture, target: Target): OutgoingRequest {
  const needsKey = JSON.stringify(capture.request).includes(KEY_PLACEHOLDER);
  const fill = (text: string): string =>
    needsKey ? text.replaceAll(KEY_PLACEHOLDER, target.keyFor(capture)) : text;
  const databases = target.databases ?? new Map<string, string>();
  const headers = Object.fromEntries(
    Object.entries(capture.request.headers).map(([key, value]) => [
      key,
      key.toLowerCase() === 'x-odoo-database' ? (databases.get(value) ?? value) : fill(value),
    ]),
  );
  const rawBody = adaptBody(capture, target);
  const body =
    rawBody === null || rawBody === undefined
      ? undefined
      : typeof rawBody === 'string' && !JSON_STRING_BODIES.has(capture.file)
        ? fill(rawBody)
        : fill(JSON.stringify(rawBody));
  return { method: capture.request.method, path: capture.request.path, headers, body };
}

/** Sends the capture's request (as {@link requestOf} makes it) to `baseUrl`, with `headers` if given. */
export function replay(
  baseUrl: string,
  capture: Capture,
  target: Target,
  headers = requestOf(capture, target).headers,
): Promise<Reply> {
  const { method, path, body } = requestOf(capture, target);
  return send(`${baseUrl}${path}`, method, headers, body);
}

/** The 64-hex value of an ETag header (`abc…`, `"abc…"` or `W/"abc…"`). */
export function bareEtag(value: string | undefined): string | undefined {
  return /[0-9a-f]{64}/.exec(value ?? '')?.[0];
}

/**
 * ETags the capture server handed out, each with the capture that first received it (earliest
 * Date), among `captures`. They are HMACs under that server's database secret, which no other
 * server reproduces: see {@link withServerEtags}.
 */
export function etagSources(captures: readonly Capture[]): ReadonlyMap<string, Capture> {
  const sources = new Map<string, Capture>();
  // The index capture has two Date headers, recorded joined: the first one counts.
  const dated = (capture: Capture): number => {
    const date = /\w{3}, \d{2} \w{3} \d{4} [\d:]{8} GMT/.exec(
      headerValue(capture.response.headers, 'date') ?? '',
    );
    return date ? Date.parse(date[0]) : Number.POSITIVE_INFINITY;
  };
  const sorted = [...captures].sort((a, b) => dated(a) - dated(b) || a.file.localeCompare(b.file));
  for (const capture of sorted) {
    const etag = bareEtag(headerValue(capture.response.headers, 'etag'));
    if (etag !== undefined && !sources.has(etag)) sources.set(etag, capture);
  }
  return sources;
}

/**
 * `headers` with every captured ETag in If-None-Match (quoted, weak or bare, as captured)
 * replaced by the ETag the server answers to that ETag's source request (`etagOf`).
 */
export async function withServerEtags(
  headers: Record<string, string>,
  sources: ReadonlyMap<string, Capture>,
  etagOf: (source: Capture) => Promise<string | undefined>,
): Promise<Record<string, string>> {
  const result = { ...headers };
  for (const [name, value] of Object.entries(result)) {
    if (name.toLowerCase() !== 'if-none-match') continue;
    let replaced = value;
    for (const [captured, source] of sources) {
      if (!replaced.includes(captured)) continue;
      const ours = await etagOf(source);
      if (ours === undefined) throw new Error(`no ETag in the answer to ${source.file}`);
      replaced = replaced.replaceAll(captured, ours);
    }
    result[name] = replaced;
  }
  return result;
}

/** A debug-free copy of a body: tracebacks are the real server's, never compared. */
export function withoutDebug(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDebug);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'debug')
      .map(([key, item]) => [key, withoutDebug(item)]),
  );
}

/** A header value with its 64-hex digests masked, to compare forms (quoted or bare ETag, file name). */
export function headerShape(value: string | string[] | undefined): string | undefined {
  return value === undefined ? undefined : String(value).replace(/[0-9a-f]{64}/g, '<sha256>');
}

export function dbfilterOf(capture: Capture): string | undefined {
  return /--db-filter='([^']*)'/.exec(capture.server)?.[1];
}

/** An answer reduced to what is compared: status, media type and body (parsed when JSON). */
export interface Answer {
  status: number;
  /** The media type without parameters (`application/json`), `''` when absent. */
  contentType: string;
  /** The parsed JSON for `application/json`, the text otherwise. */
  body: unknown;
}

const mediaType = (value: string | string[] | undefined): string =>
  String(value ?? '')
    .split(';')[0]
    ?.trim() ?? '';

/** The answer a capture recorded. */
export function capturedAnswer(capture: Capture): Answer {
  return {
    status: capture.response.status,
    contentType: mediaType(headerValue(capture.response.headers, 'content-type')),
    body: capture.response.body,
  };
}

/** The answer a server gave; a JSON body that does not parse is kept as text (and differs). */
export function answerOf(reply: Reply): Answer {
  const contentType = mediaType(reply.headers['content-type']);
  let body: unknown = reply.body;
  if (contentType === 'application/json') {
    try {
      body = JSON.parse(reply.body);
    } catch {
      body = reply.body;
    }
  }
  return { status: reply.status, contentType, body };
}

const same = (label: string, want: unknown, got: unknown): string[] =>
  JSON.stringify(want) === JSON.stringify(got)
    ? []
    : [`${label}: ${JSON.stringify(want)}, got ${JSON.stringify(got)}`];

/**
 * The differences of `actual` from `expected` in status, content type and body shape, as short
 * lines (`status: 200, got 404`). Body shape:
 * - not JSON: both name "No database is selected" or neither; a text that is not an HTML page
 *   (the werkzeug pages carry a server-specific traceback) is compared as is;
 * - a JSON-RPC envelope: `jsonrpc`, `id`, which of `result`/`error` is present, the type of
 *   `result`, and `error.code`, `error.message`, `error.data.name` and the keys of `error.data`;
 * - a JSON-2 error (status other than 200): `name` and the keys;
 * - any other JSON: its type, and the keys of a version answer (`path` ending in `/version`).
 */
export function shapeDifferences(expected: Answer, actual: Answer, path: string): string[] {
  const differences = [...same('status', expected.status, actual.status)];
  if (expected.contentType !== actual.contentType)
    return [...differences, ...same('content type', expected.contentType, actual.contentType)];

  if (expected.contentType !== 'application/json') {
    const expectedText = String(expected.body);
    const actualText = String(actual.body);
    const marker = 'No database is selected';
    differences.push(
      ...same(`mentions "${marker}"`, expectedText.includes(marker), actualText.includes(marker)),
    );
    if (!expectedText.startsWith('<')) differences.push(...same('text', expectedText, actualText));
    return differences;
  }

  const want = expected.body;
  const got = actual.body;
  if (typeof want === 'object' && want !== null && 'jsonrpc' in want) {
    const wantEnvelope = asRecord(want);
    const gotEnvelope = asRecord(got);
    differences.push(...same('jsonrpc', '2.0', gotEnvelope.jsonrpc));
    differences.push(...same('id', wantEnvelope.id, gotEnvelope.id));
    differences.push(...same('result present', 'result' in wantEnvelope, 'result' in gotEnvelope));
    differences.push(...same('error present', 'error' in wantEnvelope, 'error' in gotEnvelope));
    if ('result' in wantEnvelope && 'result' in gotEnvelope)
      differences.push(...same('result type', jsonType(wantEnvelope.result), jsonType(gotEnvelope.result)));
    if ('error' in wantEnvelope && 'error' in gotEnvelope) {
      const wantError = asRecord(wantEnvelope.error);
      const gotError = asRecord(gotEnvelope.error);
      differences.push(...same('error.code', wantError.code, gotError.code));
      differences.push(...same('error.message', wantError.message, gotError.message));
      const wantData = asRecord(wantError.data);
      const gotData = asRecord(gotError.data);
      differences.push(...same('error.data.name', wantData.name, gotData.name));
      differences.push(...same('error.data keys', Object.keys(wantData), Object.keys(gotData)));
    }
    return differences;
  }
  if (expected.status !== 200) {
    const wantObject = asRecord(want);
    const gotObject = asRecord(got);
    differences.push(...same('name', wantObject.name, gotObject.name));
    differences.push(...same('keys', Object.keys(wantObject), Object.keys(gotObject)));
    return differences;
  }
  differences.push(...same('type', jsonType(want), jsonType(got)));
  if (path.endsWith('/version'))
    differences.push(...same('keys', Object.keys(asRecord(want)), Object.keys(asRecord(got))));
  return differences;
}

/** JSON type for structure comparison: numbers are one type (Python's `1.0` arrives as `1`). */
const structureType = (value: unknown): string => (typeof value === 'number' ? 'number' : jsonType(value));

/** How {@link structureDifferences} compares. */
export interface StructureOptions {
  /** At most this many lines, the last one saying how many more there are (8). */
  readonly limit?: number;
  /**
   * `exact` (the double against its captures: it must reproduce them): arrays of the same length,
   * `false` a boolean like any other. `shape` (a live server against the double, or two live
   * servers: their data differ): listings compared item by item, not by how many there are, and
   * `false`, Odoo's empty value for a field of any type, fits any type.
   */
  readonly compare?: 'exact' | 'shape';
}

/**
 * The differences of `actual` from `expected` in structure, below the shape that
 * {@link shapeDifferences} compares: at every path, the JSON type (numbers are one type), the
 * keys of objects, and the items of arrays pairwise, recursively (their number too when `exact`).
 * Values are not compared; `debug` (a server traceback) is skipped.
 */
export function structureDifferences(
  expected: unknown,
  actual: unknown,
  { limit = 8, compare = 'shape' }: StructureOptions = {},
): string[] {
  const found: string[] = [];
  const walk = (want: unknown, got: unknown, path: string): void => {
    // Which fields are empty is data, when comparing shapes.
    if (compare === 'shape' && (want === false || got === false)) return;
    const wantType = structureType(want);
    const gotType = structureType(got);
    if (wantType !== gotType) {
      found.push(`${path}: ${wantType}, got ${gotType}`);
      return;
    }
    if (Array.isArray(want) && Array.isArray(got)) {
      if (compare === 'exact' && want.length !== got.length)
        found.push(`${path}: ${want.length} items, got ${got.length}`);
      for (let i = 0; i < Math.min(want.length, got.length); i++) walk(want[i], got[i], `${path}[${i}]`);
      return;
    }
    if (wantType !== 'dict') return;
    const wantObject = asRecord(want);
    const gotObject = asRecord(got);
    const wantKeys = Object.keys(wantObject).filter((key) => key !== 'debug');
    const gotKeys = Object.keys(gotObject).filter((key) => key !== 'debug');
    const only = (keys: string[], other: string[]) => keys.filter((key) => !other.includes(key));
    const missing = only(wantKeys, gotKeys);
    const extra = only(gotKeys, wantKeys);
    const list = (keys: string[]) =>
      keys.length > 6 ? `${keys.slice(0, 6).join(', ')} and ${keys.length - 6} more` : keys.join(', ');
    if (missing.length > 0) found.push(`${path}: ${missing.length} keys missing (${list(missing)})`);
    if (extra.length > 0) found.push(`${path}: ${extra.length} keys extra (${list(extra)})`);
    for (const key of wantKeys) if (key in gotObject) walk(wantObject[key], gotObject[key], `${path}.${key}`);
  };
  walk(expected, actual, '$');
  return found.length > limit
    ? [...found.slice(0, limit - 1), `and ${found.length - limit + 1} more`]
    : found;
}

/**
 * The differences between two answers to the same request (say, a real server's and the double's):
 * {@link shapeDifferences}, and when the shapes agree on a JSON answer, {@link structureDifferences}.
 */
export function answerDifferences(expected: Answer, actual: Answer, path: string): string[] {
  const shape = shapeDifferences(expected, actual, path);
  return shape.length > 0 || expected.contentType !== 'application/json'
    ? shape
    : structureDifferences(expected.body, actual.body);
}

/** True for a model document's path (`/doc-bearer/<model>.json`, not the index). */
export function isModelDocument(path: string): boolean {
  return /^\/doc-bearer\/[^/]+\.json$/.test(path) && path !== '/doc-bearer/index.json';
}

/**
 * The model an `_inherits` field of a model document comes from, or `undefined` when `name` is
 * not one: Odoo adds such a field as `related: "<many2one>.<name>"` (odoo/orm/model_classes.py,
 * `_add_inherited_fields`), the many2one naming the delegated model in `relation`.
 */
function delegatedModelOf(doc: Record<string, unknown>, name: string, item: unknown): string | undefined {
  const related = asRecord(item).related;
  if (typeof related !== 'string') return undefined;
  const [via, target, ...rest] = related.split('.');
  if (target !== name || rest.length > 0 || via === undefined) return undefined;
  const delegate = asRecord(asRecord(doc.fields)[via]);
  return delegate.type === 'many2one' && typeof delegate.relation === 'string'
    ? delegate.relation
    : undefined;
}

/**
 * The models whose documents {@link otherModules} needs to tell where a model document's
 * `_inherits` fields come from (`res.partner` for `res.users`).
 */
export function delegatedModels(doc: unknown): string[] {
  const record = asRecord(doc);
  const models = new Set<string>();
  for (const [name, item] of Object.entries(asRecord(record.fields))) {
    const model = delegatedModelOf(record, name, item);
    if (model !== undefined) models.add(model);
  }
  return [...models].sort();
}

/** Model documents by model name, of the live server and of the double. */
export interface DelegatedDocuments {
  live: Readonly<Record<string, unknown>>;
  double: Readonly<Record<string, unknown>>;
}

/**
 * A model document (`/doc-bearer/<model>.json`) as the live server and the double give it, without
 * the fields and methods that modules the capture server lacks define on the live server: an item
 * only the live server has, from a module that none of the double's items names, and an item both
 * have but from different modules (a custom module's `message_ids` is not mail's). A server with
 * other modules than the capture server (more, or others defining the same names) then compares
 * like one with the same modules; an item of a module the double knows is compared as before.
 * `leftOut` lists what was left out (`fields.x (module)`); other answers are returned unchanged.
 *
 * An `_inherits` field (`res.users`' `email`, from `res.partner`) names as its module any one of
 * the delegating many2one's modules and the inherited field's: odoo/orm/fields.py unions them in
 * a set, so which one changes with each server process's string hashing (`x_more_note` on
 * `res.users` says `base` in one run and `x_more` in the next). Its module is therefore taken
 * from the delegated model's document in `delegates` (each side its own) when given, else the one
 * it names.
 */
export function otherModules(
  path: string,
  live: unknown,
  double: unknown,
  delegates: DelegatedDocuments = { live: {}, double: {} },
): { live: unknown; double: unknown; leftOut: string[] } {
  const unchanged = { live, double, leftOut: [] };
  if (!isModelDocument(path)) return unchanged;
  const liveDoc = asRecord(live);
  const doubleDoc = asRecord(double);
  const sections = ['fields', 'methods'] as const;
  const moduleOf = (item: unknown): unknown => asRecord(item).module;
  /** The module of `doc`'s item `name` of `section`, an `_inherits` field's from its own model. */
  const moduleIn = (
    doc: Record<string, unknown>,
    documents: Readonly<Record<string, unknown>>,
    section: (typeof sections)[number],
    name: string,
    item: unknown,
  ): unknown => {
    const model = section === 'fields' ? delegatedModelOf(doc, name, item) : undefined;
    const source = model === undefined ? undefined : asRecord(asRecord(documents[model]).fields)[name];
    return source === undefined ? moduleOf(item) : moduleOf(source);
  };
  const known = new Set(
    sections.flatMap((section) =>
      Object.entries(asRecord(doubleDoc[section])).map(([name, item]) =>
        moduleIn(doubleDoc, delegates.double, section, name, item),
      ),
    ),
  );
  if (known.size === 0) return unchanged;
  const leftOut: string[] = [];
  const liveOut: Record<string, unknown> = { ...liveDoc };
  const doubleOut: Record<string, unknown> = { ...doubleDoc };
  for (const section of sections) {
    const liveItems = { ...asRecord(liveDoc[section]) };
    const doubleItems = { ...asRecord(doubleDoc[section]) };
    for (const [name, item] of Object.entries(liveItems)) {
      const module = moduleIn(liveDoc, delegates.live, section, name, item);
      const foreign =
        name in doubleItems
          ? module !== moduleIn(doubleDoc, delegates.double, section, name, doubleItems[name])
          : !known.has(module);
      if (!foreign) continue;
      leftOut.push(`${section}.${name} (${String(module)})`);
      delete liveItems[name];
      delete doubleItems[name];
    }
    if (section in liveDoc) liveOut[section] = liveItems;
    if (section in doubleDoc) doubleOut[section] = doubleItems;
  }
  return leftOut.length > 0 ? { live: liveOut, double: doubleOut, leftOut } : unchanged;
}

/** A tolerated set of differences of one capture: why, and one pattern per difference line. */
export interface Tolerance {
  why: string;
  differences: readonly RegExp[];
}

/**
 * Differences no tolerated pattern explains (these fail), and tolerated patterns no difference
 * matches (a tolerance that did not show: reported, never failed).
 */
export function againstTolerance(
  tolerance: Tolerance | undefined,
  differences: readonly string[],
): { unexplained: string[]; gone: string[] } {
  const patterns = tolerance?.differences ?? [];
  return {
    unexplained: differences.filter((line) => !patterns.some((pattern) => pattern.test(line))),
    gone: patterns.filter((pattern) => !differences.some((line) => pattern.test(line))).map(String),
  };
}

/** Why replaying a writing capture on a shared server is safe: the usual reasons. */
export const WRITE_SAFE = {
  ownRecords: 'on records the test creates first (the captured ids mapped to them), deleted after',
  creates: 'creates: the ids in the answer are deleted after',
  refused: 'the ERP refuses it before writing anything',
} as const;

/** Methods that write (create included). */
export const WRITING_METHODS: ReadonlySet<string> = new Set([
  'create',
  'write',
  'unlink',
  'copy',
  'action_archive',
  'action_unarchive',
]);

/** The model and method a capture's request calls (`/jsonrpc` execute_kw or JSON-2), if any. */
export function callOf(capture: Capture): { model: string; method: string } | undefined {
  const json2 = /^\/json\/2\/([^/]+)\/([^/]+)$/.exec(capture.request.path);
  if (json2) return { model: json2[1] ?? '', method: json2[2] ?? '' };
  const params = asRecord(asRecord(capture.request.body).params);
  const args = params.args;
  if (
    params.service === 'object' &&
    Array.isArray(args) &&
    typeof args[3] === 'string' &&
    typeof args[4] === 'string'
  )
    return { model: args[3], method: args[4] };
  return undefined;
}

/** The model and ids a successful create or copy made, from the reply to the capture's request. */
export function createdIds(capture: Capture, reply: Reply): { model: string; ids: unknown } | undefined {
  const call = callOf(capture);
  if (!call || (call.method !== 'create' && call.method !== 'copy') || reply.status !== 200) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(reply.body);
  } catch {
    return undefined;
  }
  return { model: call.model, ids: capture.request.path === '/jsonrpc' ? asRecord(body).result : body };
}
