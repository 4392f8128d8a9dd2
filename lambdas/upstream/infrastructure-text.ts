/**
 * @module upstream/infrastructure-text
 * ERP error texts that name the ERP's own infrastructure, rewritten before they leave the proxy
 * (README, "ERP errors": "No infrastructure address in an answer"; docs/design.md, "Upstream mapping").
 *
 * Odoo passes PostgreSQL's (libpq's) connection errors through as its own error text. On an
 * unknown database, Odoo 17-19 (libpq 14 and later) answer
 * `connection to server at "127.0.0.1", port 5432 failed: FATAL:  database "x" does not exist`
 * (captures `o18-v1-err-nonexistent-db.json`, `v1-nonexistent-db-error.json`), and Odoo 16
 * (libpq 13) `FATAL:  database "x" does not exist`. The first names the ERP's database server to
 * every caller, and to a model on `/mcp`. The proxy answers both the same way:
 * `database "x" does not exist`, in `message`, `data.message`, `data.arguments` and `data.debug`.
 * The same connection prefix before another libpq error (the database server is down: "Connection
 * refused"), and libpq 13's "Is the server running on host ... on port ...?" hint, lose the
 * address too. Everything else stays the ERP's own text.
 */

/** libpq 14+: `connection to server at "host" (ip), port 5432 failed: ` or `... on socket "/path" failed: `. */
const CONNECTION_PREFIX =
  /connection to server (?:at "[^"\n]*"(?: \([^)\n]*\))?, port \d+|on socket "[^"\n]*") failed: /g;
/** libpq 13 and older: the hint after "could not connect to server: ..." names host and port, or the socket. */
const RUNNING_HINT =
  /Is the server running (?:on host "[^"\n]*"(?: \([^)\n]*\))? and accepting\s+TCP\/IP connections on port \d+|locally and accepting\s+connections on Unix domain socket "[^"\n]*")\?/g;
/** PostgreSQL's own wording of an unknown database, with its severity and trailing newline. */
const UNKNOWN_DATABASE = /FATAL: {1,2}(database "[^"\n]*" does not exist)\n?/g;

/** Cheap test before any regular expression runs: every rewritten text contains one of these. */
const MARKERS = ['connection to server', 'Is the server running', 'FATAL:'] as const;

/** `text` without the ERP's database server address (see the module header); unchanged otherwise. */
export function withoutInfrastructure(text: string): string {
  if (!MARKERS.some((marker) => text.includes(marker))) return text;
  return text
    .replace(CONNECTION_PREFIX, '')
    .replace(RUNNING_HINT, "Is the ERP's database server running?")
    .replace(UNKNOWN_DATABASE, '$1');
}

/**
 * ERP error data with {@link withoutInfrastructure} applied to its strings (`message`, `debug`,
 * each of `arguments`); the same object when nothing changes.
 */
export function dataWithoutInfrastructure(data: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  const set = (key: string, value: unknown) => {
    copy ??= { ...data };
    copy[key] = value;
  };
  for (const key of ['message', 'debug'] as const) {
    const value = data[key];
    if (typeof value === 'string') {
      const clean = withoutInfrastructure(value);
      if (clean !== value) set(key, clean);
    }
  }
  const args = data.arguments;
  if (Array.isArray(args)) {
    const clean = args.map((item) => (typeof item === 'string' ? withoutInfrastructure(item) : item));
    if (clean.some((item, index) => item !== args[index])) set('arguments', clean);
  }
  return copy ?? data;
}
