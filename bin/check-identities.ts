/**
 * @module check-identities
 * `npm run check:identities -- <file.json> [--issuer <url>[,<url>...]]`: checks an OAuth identity
 * map offline, with the proxy's own parser (protocol/oauth/identities.ts), before it is put into
 * its secret or `MCP_OAUTH_IDENTITIES` (README, "Remote agents with OAuth"). A map that loaded
 * before may be refused by a newer proxy (issue 41: an ERP URL with a query string); the proxy
 * refuses a bad map whole, so every token caller would be refused until it is fixed.
 *
 * Prints one line per entry (its name, what it matches, the ERP host, database and user id;
 * never the ERP key) and exits 0, or prints the problem naming the entry and field and exits 1.
 * The issuers (for the `match.issuer` rules) come from `--issuer`, else `MCP_OAUTH_ISSUER`.
 * `-` reads the map from standard input.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseIdentities } from '../lambdas/protocol/oauth/identities.ts';

const USAGE = 'usage: npm run check:identities -- <file.json | -> [--issuer <url>[,<url>...]]';

/** Checks the map the arguments name; returns the exit code, writing to `out` and `err`. */
export function checkIdentities(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  out: (line: string) => void,
  err: (line: string) => void,
): number {
  const files = [...argv];
  let issuerText = env.MCP_OAUTH_ISSUER;
  const issuerAt = files.indexOf('--issuer');
  if (issuerAt >= 0) [, issuerText] = files.splice(issuerAt, 2);
  const [file] = files;
  if (file === undefined || files.length > 1 || (issuerText === undefined && issuerAt >= 0)) {
    err(USAGE);
    return 2;
  }
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    err(`check:identities: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    return 2;
  }
  const issuers = (issuerText ?? '')
    .split(',')
    .map((issuer) => issuer.trim())
    .filter((issuer) => issuer !== '');
  try {
    const identities = parseIdentities(text, { issuers });
    out(`${file}: ${identities.length} ${identities.length === 1 ? 'identity' : 'identities'}, usable`);
    for (const { name, match, erp, policy } of identities) {
      const who = `${match.claim} = ${JSON.stringify(match.value)}${match.issuer ? ` from ${match.issuer}` : ''}`;
      const user = erp.uid === undefined ? 'no user_id (ERP 19+ only)' : `user ${erp.uid}`;
      out(
        `  ${JSON.stringify(name)}: ${who} -> ${erp.baseUrl.href} db ${JSON.stringify(erp.db)}, ${user}` +
          (policy ? ', with a policy' : ''),
      );
    }
    return 0;
  } catch (error) {
    err(`${file}: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = checkIdentities(
    process.argv.slice(2),
    process.env,
    (line) => process.stdout.write(`${line}\n`),
    (line) => process.stderr.write(`${line}\n`),
  );
}
