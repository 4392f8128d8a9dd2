/**
 * @module proxy-cli
 * What the operators' commands that call a running proxy share (`npm run audit-log -- list`,
 * bin/audit-log.ts; `npm run brakes`, bin/brakes-cli.ts): the proxy's base URL and key from `--url`
 * and `--key` or the environment (`ERP_PROXY_URL`, `ERP_PROXY_KEY`, else `npm start`'s address),
 * one request with the key, a table for a terminal, and the words for what failed: the proxy's own
 * code and message when it sent them, never the key.
 */
import { fileURLToPath } from 'node:url';
import { RUNTIME_SETTINGS } from '../lambdas/platform/settings.ts';

/** `npm start`'s address when `PORT` and `HOST` are left alone. */
export const DEFAULT_URL = `http://127.0.0.1:${RUNTIME_SETTINGS.port.schema.parse(undefined)}`;
/** How long one request may take to answer. */
export const REQUEST_TIMEOUT_MS = 30_000;

/** Where a CLI writes; `process.stdout` / `process.stderr` fit. */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** A failure with its exit code (1 failed, 2 usage) and a message that never holds the key. */
export class ProxyCliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

/** The proxy a command calls: its base URL (without a trailing slash) and the key it sends. */
export interface ProxyTarget {
  readonly url: string;
  readonly key: string;
}

/** What a command says of itself in the words of a failure. */
export interface CommandWords {
  /** How to see its options, e.g. `npm run audit-log -- --help`. */
  readonly help: string;
  /** The key policy API its endpoint needs (`audit`, `brakes`). */
  readonly api: string;
}

/** A problem of `parseArgs`, in words that name an option but never echo a value. */
export function argsProblem(error: unknown): string {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const option = /^Unknown option '([^']*)'/.exec(message)?.[1] ?? 'given';
    return `unknown option ${option}`;
  }
  // The others name the option only ("Option '--limit <value>' argument missing").
  return message.split('. ')[0] ?? message;
}

/** The proxy's base URL from `--url` or the environment, or what is wrong with it. */
export function baseUrl(text: string): string | { problem: string } {
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

/**
 * The proxy to call: the key from `--key`, else `ERP_PROXY_KEY`; the URL from `--url`, else
 * `ERP_PROXY_URL`, else {@link DEFAULT_URL}. Or what is missing or wrong, never echoing the key.
 */
export function proxyTarget(
  values: { readonly url?: string | undefined; readonly key?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
  api: string,
): ProxyTarget | { problem: string } {
  const key = values.key ?? env.ERP_PROXY_KEY ?? '';
  if (key.trim() === '') {
    return {
      problem: `no proxy key: set ERP_PROXY_KEY (or pass --key) to a key whose policy lists "${api}"`,
    };
  }
  const url = baseUrl(values.url ?? env.ERP_PROXY_URL ?? DEFAULT_URL);
  if (typeof url !== 'string') return url;
  return { url, key };
}

/**
 * A text fit for a terminal: control characters (an escape sequence would drive it) and the
 * direction overrides (a line that reads other than it is) become U+FFFD.
 */
export function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it removes.
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '\uFFFD');
}

// --- A table ---------------------------------------------------------------------------------

/** A column of a table: its heading and the widest a cell is shown (the last column is not cut). */
export interface Column {
  readonly heading: string;
  readonly max: number;
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The table of `rows`, its heading first, columns as wide as their widest cell (an empty cell is `-`). */
export function renderColumns(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const cells = [columns.map((column) => column.heading), ...rows].map((row) =>
    columns.map((column, index) => cut(row[index] ?? '-', column.max)),
  );
  const widths = columns.map((_, index) => Math.max(...cells.map((row) => (row[index] as string).length)));
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

export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/** The URL a message names: no user info, no query. */
export function shownUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`.replace(/\/+$/, '');
}

/** The words for a request that got no HTTP answer. */
export function unreachable(url: string, error: unknown): ProxyCliError {
  const where = `the proxy at ${shownUrl(url)}`;
  if (error instanceof Error && error.name === 'TimeoutError') {
    return new ProxyCliError(`${where} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s`, 1);
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
  return new ProxyCliError(`cannot reach ${where}: ${printable(reason)}`, 1);
}

/** The proxy's code of "stopped by an operator's brake" (docs/operators.md, "Stop an agent now"). */
const BRAKED = -32012;
/** The proxy's code of "refused by policy" (a key whose policy lacks the endpoint's API). */
const POLICY_REFUSED = -32008;

/**
 * The words for an HTTP answer other than the one expected from `path`: the proxy's code and
 * message when it sent them (400 is usage, exit 2; the rest exit 1), else the status and a bounded,
 * printable part of the body.
 */
export function refusal(
  url: string,
  path: string,
  status: number,
  body: string,
  words: CommandWords,
): ProxyCliError {
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
        ? ` (see ${words.help})`
        : error.code === POLICY_REFUSED
          ? ` (the key needs a policy whose apis list "${words.api}")`
          : error.code === BRAKED
            ? ` (a brake stops this key itself: release it with another key whose policy lists "${words.api}")`
            : '';
    return new ProxyCliError(
      `the proxy refused (HTTP ${status}${code}): ${printable(error.message)}${hint}`,
      status === 400 ? 2 : 1,
    );
  }
  const text = printable(body.trim()).slice(0, 200);
  const hint = status === 404 ? ` (is ${shownUrl(url)} the proxy's base URL?)` : '';
  return new ProxyCliError(
    `HTTP ${status} from ${shownUrl(url)}${path}${text === '' ? '' : `: ${text}`}${hint}`,
    1,
  );
}

/** One request to the proxy. */
export interface ProxyRequest {
  /** The path after the base URL, such as `/_/audit`. */
  readonly path: string;
  readonly method?: 'GET' | 'POST';
  /** The query parameters, as sent. */
  readonly query?: Readonly<Record<string, string>>;
  /** A JSON body (`POST`). */
  readonly body?: unknown;
}

/**
 * Sends `request` to `target` with its key (`x-api-key`) and answers the body of a 200 parsed as
 * JSON (`undefined` when it is not JSON: the caller says what it expected). Throws a
 * {@link ProxyCliError} for no answer ({@link unreachable}) or another status ({@link refusal}).
 */
export async function requestProxy(
  target: ProxyTarget,
  request: ProxyRequest,
  fetcher: Fetch,
  words: CommandWords,
): Promise<unknown> {
  const query = request.query === undefined ? '' : `?${new URLSearchParams(request.query).toString()}`;
  const headers: Record<string, string> = { 'x-api-key': target.key, accept: 'application/json' };
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  let body: string;
  try {
    response = await fetcher(`${target.url}${request.path}${query}`, {
      ...(request.method === undefined || request.method === 'GET' ? {} : { method: request.method }),
      headers,
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    body = await response.text();
  } catch (error) {
    throw unreachable(target.url, error);
  }
  if (response.status !== 200) throw refusal(target.url, request.path, response.status, body, words);
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

// --- Running -------------------------------------------------------------------------------

/**
 * Runs `run` when `moduleUrl` is the script node was started with (`process.argv[1]`): its exit
 * code, or 1 and the message of an error that is not the command's own (a bug: never a stack
 * trace, and never the key, which no message holds). A reader that stops early (`| head`) ends
 * the output quietly.
 */
export function runAsMain(
  moduleUrl: string,
  name: string,
  run: (argv: readonly string[], io: CliIo, env: NodeJS.ProcessEnv) => Promise<number>,
): void {
  if (process.argv[1] === undefined || fileURLToPath(moduleUrl) !== process.argv[1]) return;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    process.exit(1);
  });
  run(process.argv.slice(2), process, process.env)
    .then((code) => {
      process.exitCode = code;
    })
    .catch((error: unknown) => {
      process.stderr.write(`${name}: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    });
}
