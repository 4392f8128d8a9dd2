/**
 * @module erp-double/state
 * The double's server state (databases, users) and Odoo's database selection (`db_filter`, monodb).
 */
import { Database } from './database.ts';
import { seedDatabase } from './models.ts';
import type { ErpMode, ErpUser } from './types.ts';
import { isTwentyOrLater } from './versions.ts';

/** Everything a request handler needs. */
export interface DoubleState {
  mode: ErpMode;
  databases: Map<string, Database>;
  users: readonly ErpUser[];
  dbfilter: string | undefined;
  /** `/jsonrpc` was taken away from a mode that has it (`ErpDoubleOptions.jsonRpc`). */
  jsonRpcRemoved?: boolean;
  /** How a 20+ mode reads binaries over JSON-2 (`ErpDoubleOptions.binaries`). */
  binaries?: 'object' | 'inline';
}

/**
 * Whether `user`'s key works on the RPC routes (`/jsonrpc`, JSON-2, `/doc-bearer`): on 20+ a key
 * of scope `MCP` does not (odoo/odoo#268589; versions.ts), and fails like a wrong key.
 */
export function keyServesRpc(mode: ErpMode, user: ErpUser): boolean {
  return !(isTwentyOrLater(mode) && user.scope === 'MCP');
}

/** Builds the databases with fresh seed data; the first one gets the demo partners. */
export function seedDatabases(names: readonly string[], users: readonly ErpUser[]): Map<string, Database> {
  const databases = new Map<string, Database>();
  names.forEach((name, index) => {
    const db = new Database(name);
    seedDatabase(db, { demo: index === 0, users });
    databases.set(name, db);
  });
  return databases;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `odoo.http.db_filter(dbs, host)`: `%h` is the host (no port, no `www.`), `%d` its first label; `re.match`. */
export function dbFilter(
  state: DoubleState,
  dbs: readonly string[],
  hostHeader: string | undefined,
): string[] {
  if (!state.dbfilter) return [...dbs];
  let host = (hostHeader ?? '').split(':')[0] ?? '';
  if (host.startsWith('www.')) host = host.slice(4);
  const domain = host.split('.')[0] ?? '';
  const pattern = state.dbfilter.replaceAll('%h', escapeRegex(host)).replaceAll('%d', escapeRegex(domain));
  const regex = new RegExp(`^(?:${pattern})`);
  return dbs.filter((db) => regex.test(db));
}

/**
 * `Request._get_session_and_dbname` without sessions (19+): the `X-Odoo-Database` header if the
 * filter keeps it and it exists (no fallback to monodb), else the only database the filter keeps.
 */
export function selectDatabase(
  state: DoubleState,
  headerValue: string | undefined,
  hostHeader: string | undefined,
): Database | undefined {
  if (headerValue !== undefined) {
    if (dbFilter(state, [headerValue], hostHeader).length !== 1) return undefined;
    return state.databases.get(headerValue);
  }
  const candidates = dbFilter(state, [...state.databases.keys()], hostHeader);
  return candidates.length === 1 && candidates[0] !== undefined
    ? state.databases.get(candidates[0])
    : undefined;
}

/** The user owning `key` on `db` (valid, not expired), for bearer and API-key checks. */
export function userByKey(state: DoubleState, db: string, key: string): ErpUser | undefined {
  return state.users.find(
    (user) =>
      user.db === db && user.apiKey === key && user.expired !== true && keyServesRpc(state.mode, user),
  );
}
