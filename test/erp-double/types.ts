/**
 * @module erp-double/types
 * Public types of the ERP double (an Odoo imitation on loopback sockets).
 */

/** Which Odoo major version the double imitates. */
export type ErpMode = '16' | '17' | '18' | '19' | '20' | '21' | '22';

/** One API key (and optionally a password) the double accepts. */
export interface ErpUser {
  /** The `res.users` id. Several entries may share a uid (e.g. a valid and an expired key). */
  uid: number;
  login: string;
  /** A 40-hex API key, valid on `db` only. */
  apiKey: string;
  db: string;
  /** A group_user-only user: may read partners but not create/modify them, nor read ir.config_parameter. */
  limited?: boolean;
  /** The key has expired: every check with it fails like a wrong key. */
  expired?: boolean;
  /**
   * The key's scope (Odoo 19.4+, odoo/odoo#268589): on the 20+ modes an `MCP` key fails on the RPC
   * routes (`/jsonrpc`, JSON-2, `/doc-bearer`) like a wrong key. Absent: a key without scope, as
   * every key up to 19.3, valid everywhere.
   */
  scope?: 'rpc' | 'MCP';
  /** Optional plain password (legacy /jsonrpc only, never a bearer token). Extension of the brief's shape. */
  password?: string;
}

/** Options of {@link startErpDouble}. */
export interface ErpDoubleOptions {
  /** Odoo major version to imitate. Default `'19'`. */
  mode?: ErpMode;
  /**
   * `false`: no `/jsonrpc` (nor `/web/webclient/version_info`, `/web/database/list`), as an ERP
   * 19-21 whose front proxy blocks it (Odoo keeps it, deprecated, through 21: odoo/odoo#252721).
   * Default: what the mode has (all but 22).
   */
  jsonRpc?: boolean;
  /**
   * How the 20+ modes read binary fields over JSON-2, the published sources disagreeing
   * (versions.ts): `'object'` (default) `{filename, size}` and `content` when the context has
   * `include_binary_content` (odoo/odoo#266082); `'inline'` the base64 content whatever
   * `bin_size` says (a peer's report). `/jsonrpc` answers inline under both. Ignored below 20.
   */
  binaries?: 'object' | 'inline';
  /** Databases on the server. Default `['erp_a', 'erp_b']`. The first one gets the demo partners. */
  databases?: string[];
  /** Odoo `--db-filter` regex; `%d` and `%h` are replaced from the Host header (`Request._get_session_and_dbname` in Odoo 19's `odoo/http.py`; captures `dbfilter-*`). */
  dbfilter?: string;
  /** Users and keys. Default {@link DOUBLE_USERS}. */
  users?: ErpUser[];
  /** Port on 127.0.0.1. Default 0 (any free port). */
  port?: number;
  /** Keep every request in `requests`. Default true; a long-running demo turns it off. */
  recordRequests?: boolean;
  /** Slow mode: every answer waits this many milliseconds after the request arrived. Default 0. */
  delayMs?: number;
}

/** A request as received by the double, for asserting what the proxy sent. */
export interface RecordedRequest {
  method: string;
  /** Path including the query string. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** When its body had arrived (epoch ms): the arrivals a limit lets through, per window. */
  receivedAt: number;
}

/** A running ERP double. */
export interface ErpDouble {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  mode: ErpMode;
  /** Every request received since start or the last {@link ErpDouble.reset}. */
  requests: RecordedRequest[];
  /** Requests being answered right now (arrived, answer not yet written). */
  readonly inFlight: number;
  /** The most requests it was answering at once since start or the last {@link ErpDouble.reset}. */
  readonly maxInFlight: number;
  /** Slow mode: each answer from now on waits `ms` after its request arrived (0: off). */
  setDelay(ms: number): void;
  /** Re-seeds every database, clears `requests` (the array is emptied in place) and `maxInFlight`. */
  reset(): void;
  /** Closes the server and destroys every open socket. */
  close(): Promise<void>;
}
