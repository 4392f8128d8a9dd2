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
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AUDIT_FILTERS, AUDIT_PAGE } from '../lambdas/operator/audit-endpoint.ts';
import { AUDIT_OUTCOMES, type AuditRecord } from '../lambdas/platform/audit/audit-record.ts';
import { RUNTIME_SETTINGS } from '../lambdas/platform/settings.ts';
import { runSealCommand, SEAL_COMMANDS, SEAL_USAGE, type SealCommand } from './audit-seal-cli.ts';
import { timeParameter } from './cli-time.ts';

/** `npm start`'s address when `PORT` and `HOST` are left alone. */
export const DEFAULT_URL = `http://127.0.0.1:${RUNTIME_SETTINGS.port.schema.parse(undefined)}`;
/** The pages `--all` reads at most (of {@link AUDIT_PAGE}.max records each unless `--limit` says). */
export const MAX_PAGES = 100;
/** How long one page may take to answer. */
export const REQUEST_TIMEOUT_MS = 30_000;

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

/** Where the CLI writes; `process.stdout` / `process.stderr` fit. */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

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

/** A failure with its exit code (1 failed, 2 usage) and a message that never holds the key. */
export class AuditLogError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

const OPTIONS = {
  ...Object.fromEntries(AUDIT_FILTERS.map((name) => [name, { type: 'string' as const }])),
  url: { type: 'string' },
  key: { type: 'string' },
  json: { type: 'boolean' },
  all: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export { timeParameter } from './cli-time.ts';

/** A problem of `parseArgs`, in words that name an option but never echo a value. */
function argsProblem(error: unknown): string {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const option = /^Unknown option '([^']*)'/.exec(message)?.[1] ?? 'given';
    return `unknown option ${option}`;
  }
  // The others name the option only ("Option '--limit <value>' argument missing").
  return message.split('. ')[0] ?? message;
}

function limitProblem(limit: string | undefined): string | undefined {
  if (limit === undefined) return undefined;
  const n = Number(limit);
  return /^\d{1,5}$/.test(limit) && n >= 1 && n <= AUDIT_PAGE.max
    ? undefined
    : `--limit must be a whole number from 1 to ${AUDIT_PAGE.max}`;
}

/** The proxy's base URL from `--url` or the environment, or what is wrong with it. */
function baseUrl(text: string): string | { problem: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: '--url (or ERP_PROXY_URL) is not a URL, such as http://127.0.0.1:8787' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { problem: '--url (or ERP_PROXY_URL) must be an http:// or https:// URL' };
  }
  if (url.search !== '' || url.hash !== '') {
    return { problem: '--url (or ERP_PROXY_URL) is the base URL only, without ? or #' };
  }
  return url.href.replace(/\/+$/, '');
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
  const key = (values.key as string | undefined) ?? env.ERP_PROXY_KEY ?? '';
  if (key.trim() === '') {
    return { problem: 'no proxy key: set ERP_PROXY_KEY (or pass --key) to a key whose policy lists "audit"' };
  }
  const url = baseUrl((values.url as string | undefined) ?? env.ERP_PROXY_URL ?? DEFAULT_URL);
  if (typeof url !== 'string') return url;
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

/**
 * A text fit for a terminal: control characters (an escape sequence would drive it) and the
 * direction overrides (a line that reads other than it is) become U+FFFD.
 */
export function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it removes.
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '\uFFFD');
}

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

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The table of `rows` ({@link tableRow}'s), its heading first, columns as wide as their widest cell. */
export function renderTable(rows: readonly (readonly string[])[]): string {
  const cells = [COLUMNS.map((column) => column.heading), ...rows].map((row) =>
    COLUMNS.map((column, index) => cut(row[index] ?? '-', column.max)),
  );
  const widths = COLUMNS.map((_, index) => Math.max(...cells.map((row) => (row[index] as string).length)));
  return cells
    .map((row) =>
      row
        .map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] as number)))
        .join('  ')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

// --- The requests ---------------------------------------------------------------------------

/** One page of `GET /_/audit`. */
export interface AuditPage {
  readonly records: readonly AuditRecord[];
  readonly next_cursor: string | null;
}

type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/** The URL a message names: no user info, no query. */
function shownUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`.replace(/\/+$/, '');
}

/** The words for a request that got no HTTP answer. */
export function unreachable(url: string, error: unknown): AuditLogError {
  const where = `the proxy at ${shownUrl(url)}`;
  if (error instanceof Error && error.name === 'TimeoutError') {
    return new AuditLogError(`${where} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s`, 1);
  }
  const cause = (error as { cause?: { code?: string; message?: string; errors?: { code?: string }[] } })
    .cause;
  const code = cause?.code ?? cause?.errors?.[0]?.code;
  const why: Readonly<Record<string, string>> = {
    ECONNREFUSED:
      'connection refused: is it running (npm start), and is --url (or ERP_PROXY_URL) its address?',
    ENOTFOUND: 'its host name is not known: check --url (or ERP_PROXY_URL)',
    ECONNRESET: 'the connection was reset: retry',
  };
  const reason =
    (code !== undefined && why[code]) ||
    code ||
    cause?.message ||
    (error instanceof Error ? error.message : String(error));
  return new AuditLogError(`cannot reach ${where}: ${printable(reason)}`, 1);
}

/** The words for an HTTP answer other than a page: the proxy's code and message when it sent them. */
export function refusal(url: string, status: number, body: string): AuditLogError {
  let envelope: { error?: { code?: unknown; message?: unknown } } | undefined;
  try {
    envelope = JSON.parse(body) as typeof envelope;
  } catch {
    envelope = undefined;
  }
  const error = envelope?.error;
  if (error !== undefined && error !== null && typeof error.message === 'string') {
    const code = typeof error.code === 'number' ? ` ${error.code}` : '';
    const hint =
      status === 400
        ? ' (see npm run audit-log -- --help)'
        : error.code === -32008
          ? ' (the key needs a policy whose apis list "audit")'
          : '';
    return new AuditLogError(
      `the proxy refused (HTTP ${status}${code}): ${printable(error.message)}${hint}`,
      status === 400 ? 2 : 1,
    );
  }
  const text = printable(body.trim()).slice(0, 200);
  const hint = status === 404 ? ` (is ${shownUrl(url)} the proxy's base URL?)` : '';
  return new AuditLogError(
    `HTTP ${status} from ${shownUrl(url)}/_/audit${text === '' ? '' : `: ${text}`}${hint}`,
    1,
  );
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
  const url = `${request.url}/_/audit?${new URLSearchParams(query).toString()}`;
  let response: Response;
  let body: string;
  try {
    response = await fetcher(url, {
      headers: { 'x-api-key': request.key, accept: 'application/json' },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    body = await response.text();
  } catch (error) {
    throw unreachable(request.url, error);
  }
  if (response.status !== 200) throw refusal(request.url, response.status, body);
  let page: unknown;
  try {
    page = JSON.parse(body);
  } catch {
    page = undefined;
  }
  if (!isPage(page)) {
    throw new AuditLogError(
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
    if (!(error instanceof AuditLogError)) throw error;
    io.stderr.write(`audit-log: ${error.message}\n`);
    return error.exitCode;
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  // `| head`: a reader that stops early ends the listing quietly, not with a stack trace.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    process.exit(1);
  });
  runAuditLog(process.argv.slice(2), { env: process.env, io: process })
    .then((code) => {
      process.exitCode = code;
    })
    .catch((error: unknown) => {
      // Not one of ours (a bug): its message, never a stack trace, and never the key (no message holds it).
      process.stderr.write(`audit-log: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    });
}
