/**
 * @module audit-log
 * `npm run audit-log -- list [filters] [--url URL] [--key KEY] [--json] [--all]`: the audit records
 * of the calls that could write (`GET /_/audit`, docs/guide/audit.md), newest first, for an
 * operator at a terminal: a table, or one JSON record per line. Named `audit-log` so it is not
 * mistaken for npm's own `npm audit`.
 *
 * The filters are the endpoint's query parameters (`AUDIT_FILTERS`), as options of the same names;
 * `--since` and `--until` also take a date or an age (`7d`), sent as the UTC time they name. The
 * proxy checks the rest and its message is shown as it came. `--all` follows `next_cursor` page by
 * page, at most {@link MAX_PAGES} pages, with its progress on stderr.
 *
 * The key comes from `--key` or `ERP_PROXY_KEY` and is never printed; the URL from `--url`,
 * `ERP_PROXY_URL`, or the local server's default address. In-process (`runAuditLog`) so the unit
 * tests drive it without a child process. Exit codes: 0 listed (none is fine), 1 failed (the proxy
 * refused, could not be reached, answered something else, or `--all` stopped at its bound), 2 usage
 * (an unknown option or command, a missing value or key, a filter the proxy refuses as invalid).
 */
import { parseArgs } from 'node:util';
import { AUDIT_FILTERS, AUDIT_PAGE } from '../lambdas/operator/audit-endpoint.ts';
import { AUDIT_OUTCOMES, type AuditRecord } from '../lambdas/platform/audit/audit-record.ts';
import { runSealCommand, SEAL_COMMANDS, SEAL_USAGE, type SealCommand } from './audit-seal-cli.ts';
import { timeParameter } from './cli-time.ts';
import {
  argsProblem,
  type CliIo,
  type CommandWords,
  DEFAULT_URL,
  type Fetch,
  ProxyCliError,
  printable,
  proxyTarget,
  renderColumns,
  requestProxy,
  runAsMain,
  shownUrl,
} from './proxy-cli.ts';

// What the tests and other modules read from here: the default URL and the terminal's text.
export { DEFAULT_URL, printable } from './proxy-cli.ts';

/** The pages `--all` reads at most (of {@link AUDIT_PAGE}.max records each unless `--limit` says). */
export const MAX_PAGES = 100;
/** How this command names itself in the words of a failure. */
const WORDS: CommandWords = { help: 'npm run audit-log -- --help', api: 'audit' };

export const AUDIT_LOG_USAGE = `Usage: npm run -s audit-log -- list [filters] [options]
${SEAL_USAGE}

Lists the audit records of the calls that could write (GET /_/audit; docs/guide/audit.md),
newest first, as a table or as one JSON record per line.

Filters (GET /_/audit's query parameters; each narrows the list):
  --since TIME        from TIME (default: 30 days before --until)
  --until TIME        up to TIME (default: now)
  --model MODEL       one model, such as res.partner
  --record MODEL:ID   every write that named or created that record, such as res.partner:42
  --actor ACTOR       a proxy key's name, or key:NAME, "oauth:ISSUER SUB", "oauth-entry:ISSUER ENTRY"
  --outcome OUTCOME   ${AUDIT_OUTCOMES.join(', ')}
  --erp HOST          the ERP's host
  --db DB             the ERP database
  --limit N           records per page, 1 to ${AUDIT_PAGE.max} (default ${AUDIT_PAGE.default}; ${AUDIT_PAGE.max} with --all)
  --cursor CURSOR     the page after the one that gave this next_cursor
  TIME is a UTC time (2026-12-07T09:00:00Z), epoch milliseconds, a date (2026-12-07: its start
  for --since, its end for --until), or an age: 30m, 12h, 7d (that long ago).

Options:
  --all               follow next_cursor to the last page (at most ${MAX_PAGES} pages; progress on stderr)
  --json              one JSON record per line instead of the table
  --url URL           the proxy's base URL (default: ERP_PROXY_URL, else ${DEFAULT_URL}, npm start's)
  --key KEY           a proxy key whose policy lists "audit" in its apis (default: ERP_PROXY_KEY).
                      Prefer ERP_PROXY_KEY: a key on the command line is seen by ps, kept in the
                      shell's history, and printed by npm run unless it runs with -s.
  -h, --help          print this and exit

Exit codes: 0 listed (none is fine), 1 failed (the proxy refused or could not be reached, or
--all stopped at its bound), 2 usage (including a filter the proxy refuses as invalid).
`;

/** What `list` was asked for. */
export interface ListRequest {
  /** The proxy's base URL, without a trailing slash. */
  readonly url: string;
  readonly key: string;
  /** The query parameters of the first page, as sent. */
  readonly query: Readonly<Record<string, string>>;
  readonly json: boolean;
  readonly all: boolean;
}

export type ParsedArgs =
  | { readonly help: true }
  | { readonly problem: string }
  | { readonly list: ListRequest };

const OPTIONS = {
  ...Object.fromEntries(AUDIT_FILTERS.map((name) => [name, { type: 'string' as const }])),
  url: { type: 'string' },
  key: { type: 'string' },
  json: { type: 'boolean' },
  all: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export { timeParameter } from './cli-time.ts';

function limitProblem(limit: string | undefined): string | undefined {
  if (limit === undefined) return undefined;
  const n = Number(limit);
  return /^\d{1,5}$/.test(limit) && n >= 1 && n <= AUDIT_PAGE.max
    ? undefined
    : `--limit must be a whole number from 1 to ${AUDIT_PAGE.max}`;
}

/** The command line (`argv` after `--`) read against the environment. */
export function parseAuditLogArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  now: number,
): ParsedArgs {
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: true });
  } catch (error) {
    return { problem: argsProblem(error) };
  }
  const { values, positionals } = parsed;
  if (values.help === true) return { help: true };
  const [command, ...extra] = positionals;
  if (command === undefined) return { problem: `name a command: list, ${SEAL_COMMANDS.join(', ')}` };
  if ((SEAL_COMMANDS as readonly string[]).includes(command)) return { help: true };
  if (command !== 'list') {
    const shown = /^[a-z][a-z-]{0,19}$/.test(command) ? ` ${command}` : '';
    return { problem: `unknown command${shown}: the commands are list, ${SEAL_COMMANDS.join(', ')}` };
  }
  if (extra.length > 0) return { problem: 'list takes options only (they start with --)' };
  const limit = values.limit as string | undefined;
  const problem = limitProblem(limit);
  if (problem !== undefined) return { problem };
  const target = proxyTarget(
    { url: values.url as string | undefined, key: values.key as string | undefined },
    env,
    WORDS.api,
  );
  if ('problem' in target) return target;
  const { url, key } = target;
  const all = values.all === true;
  const query: Record<string, string> = {};
  for (const name of AUDIT_FILTERS) {
    const value = values[name];
    if (typeof value !== 'string') continue;
    query[name] = name === 'since' || name === 'until' ? timeParameter(name, value, now) : value;
  }
  if (all && query.limit === undefined) query.limit = String(AUDIT_PAGE.max);
  return { list: { url, key, query, json: values.json === true, all } };
}

// --- The table ------------------------------------------------------------------------------

/** The table's columns: their headings and the widest a cell is shown (the last is not cut). */
export const COLUMNS = Object.freeze([
  { heading: 'TIME', max: 24 },
  { heading: 'AUDIT_ID', max: 26 },
  { heading: 'OUTCOME', max: 9 },
  { heading: 'ACTOR', max: 40 },
  { heading: 'API/TOOL', max: 24 },
  { heading: 'ERP/DB', max: 40 },
  { heading: 'MODEL.METHOD', max: 48 },
  { heading: 'IDS', max: 40 },
  { heading: 'ERROR', max: 80 },
] as const);

/** Ids a cell lists before it says how many more. */
const IDS_SHOWN = 5;

function idList(ids: readonly number[] | undefined, count: number | undefined): string {
  if (ids === undefined || ids.length === 0) return '';
  const shown = ids.slice(0, IDS_SHOWN).join(',');
  const more = (count ?? ids.length) - Math.min(ids.length, IDS_SHOWN);
  return more > 0 ? `${shown},…+${more}` : shown;
}

/** The ids a record names (`1,2,3`) and created (`new 7`). */
export function idsCell(record: AuditRecord): string {
  const named = idList(record.record_ids, record.record_ids_count);
  const created = idList(record.created_ids, record.created_ids_count);
  return [named, created === '' ? '' : `new ${created}`].filter((part) => part !== '').join(' ');
}

/** The error of a record: its code and rule, or the ERP's code and exception name. */
export function errorCell(record: AuditRecord): string {
  const { error } = record;
  const parts = [error?.code === undefined ? '' : String(error.code), error?.rule ?? '', error?.name ?? ''];
  const text = parts.filter((part) => part !== '').join(' ');
  return record.replay_of === undefined ? text : [text, `replays ${record.replay_of}`].join(' ').trim();
}

/** One record's cells, in {@link COLUMNS}' order, unpadded and uncut. */
export function tableRow(record: AuditRecord): string[] {
  const user = record.actor?.erp_user === undefined ? '' : ` uid=${record.actor.erp_user}`;
  const client = record.actor?.client === undefined ? '' : ` via ${record.actor.client.name}`;
  const erp = record.erp === undefined ? '' : `${record.erp.host}/${record.erp.db}`;
  return [
    record.time,
    record.audit_id,
    record.outcome,
    `${record.actor_id ?? ''}${user}${client}`,
    record.tool === undefined ? record.api : `${record.api}/${record.tool}`,
    erp,
    [record.model, record.method].filter((part) => part !== undefined && part !== '').join('.'),
    idsCell(record),
    errorCell(record),
  ].map((cell) => printable(String(cell ?? '')) || '-');
}

/** The table of `rows` ({@link tableRow}'s), its heading first, columns as wide as their widest cell. */
export function renderTable(rows: readonly (readonly string[])[]): string {
  return renderColumns(COLUMNS, rows);
}

// --- The requests ---------------------------------------------------------------------------

/** One page of `GET /_/audit`. */
export interface AuditPage {
  readonly records: readonly AuditRecord[];
  readonly next_cursor: string | null;
}

function isPage(value: unknown): value is AuditPage {
  const page = value as AuditPage | null;
  return (
    typeof page === 'object' &&
    page !== null &&
    Array.isArray(page.records) &&
    (page.next_cursor === null || typeof page.next_cursor === 'string')
  );
}

/** One page: `GET <url>/_/audit?<query>` with the key. */
export async function fetchPage(
  request: Pick<ListRequest, 'url' | 'key'>,
  query: Readonly<Record<string, string>>,
  fetcher: Fetch,
): Promise<AuditPage> {
  const page = await requestProxy(request, { path: '/_/audit', query }, fetcher, WORDS);
  if (!isPage(page)) {
    throw new ProxyCliError(
      `the answer of ${shownUrl(request.url)}/_/audit is not a page of audit records: is --url the proxy's base URL?`,
      1,
    );
  }
  return page;
}

export interface RunOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly io: CliIo;
  readonly fetch?: Fetch;
  readonly now?: () => number;
  /** The pages `--all` reads at most. */
  readonly maxPages?: number;
}

/** Lists the pages `request` asks for: the table at the end, or each page's JSON lines as they come. */
async function list(request: ListRequest, options: RunOptions): Promise<number> {
  const { io } = options;
  const fetcher = options.fetch ?? ((url, init) => fetch(url, init));
  const maxPages = request.all ? (options.maxPages ?? MAX_PAGES) : 1;
  const rows: string[][] = [];
  let query = request.query;
  let count = 0;
  let pages = 0;
  let next: string | null = null;
  do {
    const page = await fetchPage(request, query, fetcher);
    pages += 1;
    count += page.records.length;
    if (request.json) io.stdout.write(page.records.map((record) => `${JSON.stringify(record)}\n`).join(''));
    else rows.push(...page.records.map(tableRow));
    next = page.next_cursor;
    if (next !== null) query = { ...request.query, cursor: next };
    if (request.all && next !== null && pages < maxPages) {
      io.stderr.write(`audit-log: page ${pages}: ${count} records so far, reading on\n`);
    }
  } while (next !== null && pages < maxPages);
  if (!request.json && rows.length > 0) io.stdout.write(renderTable(rows));
  if (count === 0 && next === null)
    io.stderr.write('audit-log: no audit record matches (without --since: the last 30 days)\n');
  if (next === null) {
    if (request.all) io.stderr.write(`audit-log: ${count} records in ${pages} pages\n`);
    return 0;
  }
  if (!request.all) {
    io.stderr.write(`audit-log: more records follow: add --all, or --cursor ${next} for the next page\n`);
    return 0;
  }
  io.stderr.write(
    `audit-log: stopped after ${pages} pages (${count} records) and more remain: narrow --since and --until, or go on with --cursor ${next}\n`,
  );
  return 1;
}

/** `npm run audit-log -- <argv>`: the exit code (0, 1, 2), having written to `io`. */
export async function runAuditLog(argv: readonly string[], options: RunOptions): Promise<number> {
  const { io } = options;
  const [first, ...rest] = argv;
  if (
    (SEAL_COMMANDS as readonly string[]).includes(first ?? '') &&
    !rest.includes('--help') &&
    !rest.includes('-h')
  ) {
    return runSealCommand(first as SealCommand, rest, options);
  }
  const parsed = parseAuditLogArgs(argv, options.env, (options.now ?? Date.now)());
  if ('help' in parsed) {
    io.stdout.write(AUDIT_LOG_USAGE);
    return 0;
  }
  if ('problem' in parsed) {
    io.stderr.write(`audit-log: ${parsed.problem}\n(npm run audit-log -- --help lists the options)\n`);
    return 2;
  }
  try {
    return await list(parsed.list, options);
  } catch (error) {
    if (!(error instanceof ProxyCliError)) throw error;
    io.stderr.write(`audit-log: ${error.message}\n`);
    return error.exitCode;
  }
}

runAsMain(import.meta.url, 'audit-log', (argv, io, env) => runAuditLog(argv, { env, io }));
