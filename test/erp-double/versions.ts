/**
 * @module erp-double/versions
 * What each imitated Odoo version reports (`common.version`, `/web/version`) and which endpoints it has.
 *
 * What each mode rests on:
 * - **19** (and 22, which is 19 without `/jsonrpc`): the captures of a real Odoo 19.0
 *   (`captures/`, replayed by captures.test.ts).
 * - **18, 17 and 16**: the captures `captures/o18-*`, `o17-*` and `o16-*` of a real Odoo 18.0
 *   community (`../shared/odoo18`, source commit ac918a4f), 17.0 (`../shared/odoo17`, nightly
 *   17.0-20240709) and 16.0 (`../shared/odoo16`, nightly 16.0-20231208 on Python 3.9 and
 *   Werkzeug 1.0), recorded by record-captures.ts and replayed in the matching mode by
 *   captures16-18.test.ts. The same cases on each: `common.version`,
 *   `/web/webclient/version_info` and `db.server_version` ("18.0", "17.0-20240709",
 *   "16.0-20231208"); the werkzeug 404 page of `/web/version` (GET and POST), `/json/2/...` and
 *   `/doc-bearer/...` (Werkzeug 2.x's page on 17 and 18, 1.0's on 16); the 400 page for a wrong
 *   Content-Type on `/jsonrpc`; `execute_kw` search, search_count, search_read, read (a missing
 *   id gives `[]`), fields_get, create (a dict gives an int, a list a list), copy (a list on 18,
 *   a bare id on 16 and 17, whether the id is sent as an int or in a list), write, unlink,
 *   action_archive (no `result`), name_search; named arguments (`domain`, `fields`, `vals` work;
 *   `vals_list` and a record method without ids give IndexError "tuple index out of range"; on
 *   16 and 17 also search by `domain` (`args` a TypeError, on 16.0-20231208 too), and
 *   name_search's domain named `args`, `domain` being a TypeError); errors with HTTP 200,
 *   `code` 200, "Odoo Server Error" and `data` keys `name, debug, message, arguments, context`:
 *   wrong, other-database and other-uid keys and 18's expired key or 16 and 17's revoked one
 *   (AccessDenied), the limited user's create (AccessError naming "Extra Rights/Contact
 *   Creation"), unknown model (UserError), unknown method (AttributeError: 18 "The method
 *   'res.partner.x' does not exist", 17 "The method 'x' does not exist on the model
 *   'res.partner'", 16 "type object 'res.partner' has no attribute 'x'"), `_foo` (18:
 *   AttributeError; 16 and 17: AccessError "Private methods (such as _foo) ..."), `_read_group`
 *   (AccessError, worded as in 19 on 18, as for `_foo` on 16 and 17), `with_context` (18:
 *   `@api.private`, AccessError; 16 and 17: called, answering its recordset's `str()`), an
 *   unknown field in a domain ("... in leaf ..."), an unknown kwarg (TypeError; Python 3.9's 16
 *   names the function without `BaseModel.`), a partner without name (ValidationError), a
 *   missing record on write/unlink (MissingError) and an unknown database
 *   (psycopg2.OperationalError; libpq 13's 16 without the `connection to server at ...`
 *   prefix); the `Server` header (16: `Werkzeug/1.0.1 Python/3.9.2`).
 *   Not captured on 16-18, so still read from Odoo's source: the rest of these modes, e.g.
 *   `execute`, `db.list`, the common service's errors, the limited user's other errors, the
 *   wording of other groups and bad operators, TypeErrors other than an unknown kwarg on 16,
 *   16's `search(count=True)` (not imitated), and which other methods 16 and 17 let through that
 *   18 made `@api.private` (only `with_context` is imitated; `sudo` and `browse` answer
 *   AttributeError).
 * - **20 and 21**: no capture and no source tree of 20.0 (none can be fetched here); 19's
 *   behaviour with its own release, changed where Odoo published a change (the notes of
 *   `../shared/odoo/odoo20-published.md`, each source read again for issue 42). Nothing of these
 *   modes was run against a real 20 or 21. Per behaviour, what it rests on:
 *   - `/jsonrpc` present (deprecated) through 21, gone in 22: odoo/odoo#252721 and
 *     odoo/documentation#16765 (2026-03-09, first-party: the table "20.0 / 21.0: active but
 *     deprecated; 22.0: absent"), superseding 19.0's first log line ("removal in Odoo 20",
 *     odoo/odoo#225384).
 *   - the `db` service absent over RPC (`/jsonrpc` `service: "db"` fails like an unknown
 *     service, a KeyError as 19.0's `dispatch_rpc` raises for one: the wording of 20's error is
 *     not published), `/web/database/list` still there: odoo/odoo#238399 ("[REM] core: db
 *     service", label 19.1: "unexpose the `db` service from XMLRPC, it is still accessible from
 *     the /web/database/manager page"; the page lists databases with `/web/database/list`).
 *   - `read_group(domain, groupby=(), aggregates=(), having=(), offset=0, limit=None,
 *     order=None)`, `@api.model`, an adapter of `_read_group` returning tuples (lists in JSON),
 *     relational group values as ids (x2many aggregates as lists of ids), and documented by
 *     `/doc-bearer` (it is no longer deprecated: an assumption): odoo/odoo#236332 (label 19.5,
 *     the review thread's diff of `odoo/orm/models.py` around line 1918: `@typing.final
 *     @api.model def read_group(`, and the decoders `v.id` / `v.ids` around line 1976). The old
 *     API (`fields`, `orderby`, `lazy`) is gone: odoo/odoo#226523 ("[REM] core: remove old
 *     read_group API", label 19.1), deprecated since odoo/odoo#163300 (18.2). A 16-19 call then
 *     fails as Python fails it: a name it does not take is a TypeError (JSON-2: 422 from
 *     `signature.bind`, `addons/rpc/controllers/json2.py` lines 80-84 of the stored odoo/odoo
 *     version 09df5d19, a pre-19.0 master whose route still names `<model>` where 19.0 names
 *     `<__model__>`; the 19.0 captures show the same 422), positional values land on the new
 *     parameters and fail `_read_group`'s checks (the wording of those is the double's).
 *   - `toggle_active` absent (19 still has it, deprecated since odoo/odoo#183691, label 18.1,
 *     first-party, "[IMP] core: Deprecate toggle_active()"): its removal in 20 is reported by a
 *     peer (a 19 -> 20 delta note), not by a first-party source found here.
 *   - binary fields (sources disagree, so the double imitates either reading,
 *     `ErpDoubleOptions.binaries`): JSON-2 reads a binary as an object, `{filename, size}`, with
 *     `content` (base64) when the context has `include_binary_content` (`'object'`, the default):
 *     odoo/odoo#266082 (label 19.5, "BinaryValue.filename and RPC serialization of raw", "We
 *     remove the need to have "bin_size" context value"; the default object without `content`
 *     is the review thread's suggestion, unverified), odoo/odoo#244421 (19.3, lazy
 *     `BinaryValue`s base64-encoded only for RPC); or inline base64 whatever `bin_size` says
 *     (`'inline'`): reported by a peer (mcp-server-odoo's changelog, "Odoo 20 dropped
 *     `bin_size`", over XML-RPC). `/jsonrpc` answers inline base64 and ignores `bin_size` under
 *     both readings (the peer's report; #266082 drops `bin_size`). The stored
 *     `odoo/orm/fields_binary.py` of odoo/odoo (029b0793) still has `bin_size`: a 19.0-19.2 file.
 *   - API key scopes (`ErpUser.scope`): a key of scope `MCP` fails on `/jsonrpc`, JSON-2 and
 *     `/doc-bearer` as a wrong key does (`rpc` keys and keys without scope work): odoo/odoo#268589
 *     ("[IMP] base: Add bearer_mcp auth", label 19.4: "RPC keys don't work with MCP endpoints
 *     and vice versa"); that the refusal reads as a wrong key's is an assumption, and that 20
 *     accepts only `rpc` keys on its RPC routes is reported by a peer (mcp-server-odoo's README).
 *   - JSON-2 itself (route, bearer, `X-Odoo-Database`, errors, `/doc-bearer`): unchanged, for
 *     want of any first-party change found (absence of evidence: OCA/odoorpc#101, #109).
 *   - `common.version`, `authenticate`, `execute_kw`: unchanged (a peer runs its tests on 20).
 * - **22**: 21 without `/jsonrpc` (odoo/odoo#252721).
 */
import type { ErpMode } from './types.ts';

/** `odoo.release` values of one imitated version. */
export interface ReleaseInfo {
  version: string;
  versionInfo: readonly [number, number, number, string, number, string];
  serie: string;
}

const RELEASES: Readonly<Record<ErpMode, ReleaseInfo>> = {
  // Nightly builds, as the real 16 and 17 of ../shared/odoo16 and odoo17 report them: the nightly
  // appends its date to `version` only (captures o16-/o17-v1-common_version,
  // -web-webclient-version_info, -v1-db_server_version).
  '16': { version: '16.0-20231208', versionInfo: [16, 0, 0, 'final', 0, ''], serie: '16.0' },
  '17': { version: '17.0-20240709', versionInfo: [17, 0, 0, 'final', 0, ''], serie: '17.0' },
  // A community 18.0 without a nightly suffix, as the real 18 of ../shared/odoo18 reports it
  // (captures o18-v1-common_version, o18-web-webclient-version_info, o18-v1-db_server_version).
  // Packaged builds append to `version` only (`18.0-20250702`, `18.0+e-20241113`): the proxy's
  // tests of such versions use their own upstream (test/integration/faults.test.ts).
  '18': { version: '18.0', versionInfo: [18, 0, 0, 'final', 0, ''], serie: '18.0' },
  '19': { version: '19.0', versionInfo: [19, 0, 0, 'final', 0, ''], serie: '19.0' },
  '20': { version: '20.0', versionInfo: [20, 0, 0, 'final', 0, ''], serie: '20.0' },
  '21': { version: '21.0', versionInfo: [21, 0, 0, 'final', 0, ''], serie: '21.0' },
  '22': { version: '22.0', versionInfo: [22, 0, 0, 'final', 0, ''], serie: '22.0' },
};

/** Release info of a mode. */
export function releaseOf(mode: ErpMode): ReleaseInfo {
  return RELEASES[mode];
}

/** `common.version()` / `/web/webclient/version_info` result (RPC_VERSION_1). */
export function rpcVersion(mode: ErpMode): Record<string, unknown> {
  const release = RELEASES[mode];
  return {
    server_version: release.version,
    server_version_info: [...release.versionInfo],
    server_serie: release.serie,
    protocol_version: 1,
  };
}

/**
 * What the imitated server runs on, where it shows on the wire. The real 16 of ../shared/odoo16
 * runs on Debian 11 (Python 3.9, Werkzeug 1.0.1, libpq 13); the others on Debian 12 (Python
 * 3.11, Werkzeug 2.2, libpq 15). A 16 on Python 3.10 would word its TypeErrors as 17 does.
 */
export interface Platform {
  /** Werkzeug 1.0's error pages (`<!DOCTYPE HTML PUBLIC ...>`, `'` not escaped), else 2.x's. */
  werkzeug1: boolean;
  /**
   * Python >= 3.10 names a function by its qualified name in a call's TypeError
   * (`BaseModel.search_count() got an unexpected keyword argument`); 3.9 by its name alone.
   */
  qualifiedCallErrors: boolean;
  /** libpq >= 14 starts a connection error with `connection to server at "host", port N failed: `. */
  libpqConnectionPrefix: boolean;
  /** The `Server` header werkzeug's development server sends. */
  serverHeader: string;
}

/** The {@link Platform} of a mode (captures o16-web-version-*, o16-v1-err-bad-kwarg, o16-v1-err-nonexistent-db; the `Server` header of every capture). */
export function platformOf(mode: ErpMode): Platform {
  const old = mode === '16';
  return {
    werkzeug1: old,
    qualifiedCallErrors: !old,
    libpqConnectionPrefix: !old,
    serverHeader: old ? 'Werkzeug/1.0.1 Python/3.9.2' : 'Werkzeug/2.2.2 Python/3.11.2',
  };
}

/** `/jsonrpc` exists up to and including the 21 line (deprecated from 19, removed in 22: odoo/odoo#252721). */
export function hasJsonRpc(mode: ErpMode): boolean {
  return mode !== '22';
}

/** JSON-2, `/web/version` and the `X-Odoo-Database` header exist from 19 on. */
export function isModern(mode: ErpMode): boolean {
  return Number(mode) >= 19;
}

/**
 * What Odoo published for the 19.x releases that became 20.0 (the header above): the new
 * `read_group`, no `toggle_active`, no `db` service over RPC, binaries as objects on JSON-2, API
 * key scopes. True for 20, 21 and 22.
 */
export function isTwentyOrLater(mode: ErpMode): boolean {
  return Number(mode) >= 20;
}

/** JSON-RPC `error.code` for ordinary exceptions: 200 up to 18.0, 0 from saas-18.1 on. */
export function jsonRpcErrorCode(mode: ErpMode): number {
  return Number(mode) >= 19 ? 0 : 200;
}
