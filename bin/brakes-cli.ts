/**
 * @module brakes-cli
 * `npm run brakes -- list | set ... | release <id>`: the operators' brakes (docs/operators.md, "Stop
 * an agent now") from a terminal, through the proxy's `GET /_/brakes`, `POST /_/brakes` and
 * `POST /_/brakes/release`, with a proxy key whose policy lists `brakes` in its `apis`.
 *
 * `set` takes the brake's scope as one option, `--scope all | key:NAME | identity:ENTRY |
 * erp:HOST` (`--key` is the proxy key the command calls with, as for `npm run audit-log`), a
 * `--mode` that must be named (`writes` or `all`: the two stop very different things), a
 * `--reason` (shown to every caller it stops) and an optional `--expires TIME` or `--for 30m`.
 * Each command prints the brakes as a table (the reason last, never cut), or with `--json` one
 * JSON brake per line, as the proxy answered it.
 *
 * URL and key as bin/proxy-cli.ts takes them (`--url`, `--key`, `ERP_PROXY_URL`,
 * `ERP_PROXY_KEY`); the key is never printed. In-process (`runBrakes`) so the unit tests drive it
 * without a child process. Exit codes: 0 done (none in force is fine), 1 failed (the proxy refused
 * or could not be reached, or answered something else), 2 usage (including a brake the proxy
 * refuses as invalid, or an id no brake in force has).
 */
import { parseArgs } from 'node:util';
import { BRAKES_PATH, BRAKES_RELEASE_PATH } from '../lambdas/operator/brakes-endpoint.ts';
import {
  BRAKE_MODES,
  type Brake,
  type BrakeMode,
  type BrakeScope,
  MAX_BRAKE_REASON_CHARS,
  MAX_BRAKES,
  shownText,
} from '../lambdas/platform/brakes/brakes.ts';
import { durationMs } from './cli-time.ts';
import {
  argsProblem,
  type CliIo,
  type Column,
  type CommandWords,
  DEFAULT_URL,
  type Fetch,
  ProxyCliError,
  type ProxyTarget,
  printable,
  proxyTarget,
  renderColumns,
  requestProxy,
  runAsMain,
  shownUrl,
} from './proxy-cli.ts';

/** How this command names itself in the words of a failure. */
const WORDS: CommandWords = { help: 'npm run brakes -- --help', api: 'brakes' };

/** The kinds `--scope KIND:NAME` takes, as the proxy's `scope` names them. */
const NAMED_SCOPES = Object.freeze(['key', 'identity', 'erp'] as const);

export const BRAKES_USAGE = `Usage: npm run -s brakes -- list [options]
       npm run -s brakes -- set --scope SCOPE --mode MODE --reason TEXT [--expires TIME | --for AGE] [options]
       npm run -s brakes -- release ID [options]

The operators' brakes (docs/operators.md, "Stop an agent now"): stop the calls that can write, or
every call, of every caller, one proxy key, one OAuth identity-map entry or one ERP, within
BRAKES_REFRESH seconds (5 by default) on every instance, until released or expired.

list        the brakes in force (GET /_/brakes)
set         sets a brake (POST /_/brakes) and prints it with its id
  --scope SCOPE   what it stops:
                    all              every caller
                    key:NAME         the proxy key of that name (its rotated keys too)
                    identity:ENTRY   everyone an OAuth identity-map entry maps (a group, not one person)
                    erp:HOST         the ERP of that host, as ERP_TARGET_LIMITS names it (lower case,
                                     no scheme or port; another name of the same ERP is not braked)
  --mode MODE     writes  the calls that can write (reads go on)
                  all     every call of the scope (a key braked all is refused on every route)
  --reason TEXT   why, up to ${MAX_BRAKE_REASON_CHARS} characters: shown to every caller it stops, agents included
                  (no secret, nothing internal)
  --expires TIME  when it releases itself: a UTC time with its zone (2026-12-08T06:00:00Z)
  --for AGE       or how long from now: 90s, 30m, 12h, 7d
                  (neither: it holds until released; at most ${MAX_BRAKES} brakes are in force at once)
release ID  releases the brake with that id (POST /_/brakes/release)

Options:
  --json              one JSON brake per line, as the proxy answered, instead of the table
  --url URL           the proxy's base URL (default: ERP_PROXY_URL, else ${DEFAULT_URL}, npm start's)
  --key KEY           the proxy key to call with: a key whose policy lists "brakes" in its apis
                      (default: ERP_PROXY_KEY). It is not the key to brake (that is --scope key:NAME).
                      Prefer ERP_PROXY_KEY: a key on the command line is seen by ps, kept in the
                      shell's history, and printed by npm run unless it runs with -s.
  -h, --help          print this and exit

Exit codes: 0 done (none in force is fine), 1 failed (the proxy refused or could not be reached),
2 usage (including a brake the proxy refuses as invalid, or an id no brake in force has).
`;

/** What `set` sends: `POST /_/brakes`'s body. */
export interface BrakeRequest {
  readonly scope: BrakeScope;
  readonly mode: BrakeMode;
  readonly reason: string;
  readonly expires?: string;
}

/** A command as read from the command line. */
export type BrakesCommand =
  | { readonly command: 'list'; readonly target: ProxyTarget; readonly json: boolean }
  | {
      readonly command: 'set';
      readonly target: ProxyTarget;
      readonly json: boolean;
      readonly brake: BrakeRequest;
    }
  | {
      readonly command: 'release';
      readonly target: ProxyTarget;
      readonly json: boolean;
      readonly id: string;
    };

export type ParsedBrakesArgs = { readonly help: true } | { readonly problem: string } | BrakesCommand;

const OPTIONS = {
  scope: { type: 'string' },
  mode: { type: 'string' },
  reason: { type: 'string' },
  expires: { type: 'string' },
  for: { type: 'string' },
  url: { type: 'string' },
  key: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The options only `set` takes. */
const SET_OPTIONS = Object.freeze(['scope', 'mode', 'reason', 'expires', 'for'] as const);

const COMMANDS = Object.freeze(['list', 'set', 'release'] as const);

/** `--scope`'s text as the proxy's `scope`, or what is wrong with it (never echoing it). */
export function scopeOfOption(text: string | undefined): BrakeScope | { problem: string } {
  const expected = 'all, key:NAME, identity:ENTRY or erp:HOST';
  if (text === undefined) return { problem: `set needs --scope: ${expected}` };
  if (text === 'all') return 'all';
  const colon = text.indexOf(':');
  const kind = colon === -1 ? text : text.slice(0, colon);
  const name = colon === -1 ? '' : text.slice(colon + 1);
  if (!(NAMED_SCOPES as readonly string[]).includes(kind)) {
    return { problem: `--scope is ${expected}` };
  }
  if (name.trim() === '') {
    const what = { key: 'NAME', identity: 'ENTRY', erp: 'HOST' }[kind as (typeof NAMED_SCOPES)[number]];
    return { problem: `--scope ${kind}:${what} needs the ${what} after the colon` };
  }
  if (kind === 'key') return { key: name };
  if (kind === 'identity') return { identity: name };
  return { erp: name };
}

/** `--expires` or `--for` as the proxy's `expires`; `undefined`: neither (the brake holds until released). */
function expiresOf(
  expires: string | undefined,
  duration: string | undefined,
  now: number,
): string | undefined | { problem: string } {
  if (expires !== undefined && duration !== undefined)
    return { problem: 'give --expires or --for, not both' };
  if (duration !== undefined) {
    const ms = durationMs(duration);
    if (ms === undefined || ms <= 0) return { problem: '--for is a duration from now: 90s, 30m, 12h, 7d' };
    return new Date(now + ms).toISOString();
  }
  // As written: the proxy checks it (a UTC time with its zone, in the future) and says what it takes.
  return expires;
}

/** The command line (`argv` after `--`) read against the environment at `now`. */
export function parseBrakesArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  now: number,
): ParsedBrakesArgs {
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: true });
  } catch (error) {
    return { problem: argsProblem(error) };
  }
  const { values, positionals } = parsed;
  if (values.help === true) return { help: true };
  const [command, ...extra] = positionals;
  if (command === undefined) return { problem: `name a command: ${COMMANDS.join(', ')}` };
  if (!(COMMANDS as readonly string[]).includes(command)) {
    const shown = /^[a-z][a-z-]{0,19}$/.test(command) ? ` ${command}` : '';
    return { problem: `unknown command${shown}: the commands are ${COMMANDS.join(', ')}` };
  }
  if (command !== 'set') {
    const misplaced = SET_OPTIONS.find((name) => values[name] !== undefined);
    if (misplaced !== undefined) return { problem: `--${misplaced} is an option of set, not of ${command}` };
  }
  if (command === 'release' ? extra.length !== 1 : extra.length > 0) {
    return {
      problem:
        command === 'release'
          ? 'release takes one brake id (npm run brakes -- list shows them)'
          : `${command} takes options only (they start with --)`,
    };
  }
  const target = proxyTarget(
    { url: values.url as string | undefined, key: values.key as string | undefined },
    env,
    WORDS.api,
  );
  if ('problem' in target) return target;
  const json = values.json === true;
  if (command === 'list') return { command, target, json };
  if (command === 'release') {
    const id = extra[0] as string;
    // An id is short printable ASCII; the key pasted in its place is never sent, nor echoed.
    if (id === target.key || !/^[\x21-\x7e]{1,100}$/.test(id)) {
      return {
        problem: 'release takes a brake id, such as brk_0123456789abcdef (npm run brakes -- list shows them)',
      };
    }
    return { command, target, json, id };
  }
  const scope = scopeOfOption(values.scope as string | undefined);
  if (typeof scope === 'object' && 'problem' in scope) return scope;
  // A key pasted where its name goes would be kept in the brake and shown to every operator.
  if (typeof scope === 'object' && Object.values(scope).includes(target.key)) {
    return { problem: "--scope key:NAME takes a key's name (as in the keys secret), never a key itself" };
  }
  const mode = values.mode as string | undefined;
  if (mode === undefined || !(BRAKE_MODES as readonly string[]).includes(mode)) {
    return {
      problem: `set needs --mode: writes (the calls that can write; reads go on) or all (every call of the scope)`,
    };
  }
  const reason = values.reason as string | undefined;
  const shown = reason === undefined ? '' : shownText(reason);
  if (shown === '' || shown.length > MAX_BRAKE_REASON_CHARS) {
    return {
      problem: `set needs --reason: 1 to ${MAX_BRAKE_REASON_CHARS} characters, shown to every caller the brake stops (no secret, nothing internal)`,
    };
  }
  const expires = expiresOf(values.expires as string | undefined, values.for as string | undefined, now);
  if (typeof expires === 'object') return expires;
  return {
    command: 'set',
    target,
    json,
    brake: { scope, mode: mode as BrakeMode, reason: shown, ...(expires === undefined ? {} : { expires }) },
  };
}

// --- The table ------------------------------------------------------------------------------

/** The table's columns; the reason, last, is never cut. */
export const COLUMNS: readonly Column[] = Object.freeze([
  { heading: 'ID', max: 24 },
  { heading: 'SCOPE', max: 60 },
  { heading: 'MODE', max: 6 },
  { heading: 'SET_BY', max: 40 },
  { heading: 'SET_AT', max: 24 },
  { heading: 'EXPIRES', max: 24 },
  { heading: 'REASON', max: MAX_BRAKE_REASON_CHARS },
]);

/** A scope as `--scope` writes it: `all`, `key:NAME`, `identity:ENTRY`, `erp:HOST`. */
export function scopeText(scope: BrakeScope): string {
  if (scope === 'all') return 'all';
  const [kind, name] = Object.entries(scope)[0] ?? ['?', ''];
  return `${kind}:${String(name)}`;
}

/** One brake's cells, in {@link COLUMNS}' order, printable. */
export function brakeRow(brake: Brake): string[] {
  return [
    brake.id,
    scopeText(brake.scope),
    brake.mode,
    brake.set_by,
    brake.set_at,
    brake.expires ?? '',
    brake.reason,
  ].map((cell) => printable(String(cell ?? '')) || '-');
}

/** The brakes as a table, or one JSON brake per line. */
function rendered(brakes: readonly Brake[], json: boolean): string {
  if (json) return brakes.map((brake) => `${JSON.stringify(brake)}\n`).join('');
  return renderColumns(COLUMNS, brakes.map(brakeRow));
}

// --- The requests ---------------------------------------------------------------------------

function isBrake(value: unknown): value is Brake {
  const brake = value as Partial<Brake> | null;
  return (
    typeof brake === 'object' &&
    brake !== null &&
    typeof brake.id === 'string' &&
    (brake.scope === 'all' || (typeof brake.scope === 'object' && brake.scope !== null)) &&
    typeof brake.mode === 'string' &&
    typeof brake.reason === 'string' &&
    typeof brake.set_by === 'string' &&
    typeof brake.set_at === 'string'
  );
}

/** The answer's member `name`, checked: a brake, or a list of brakes. */
function answerOf<T>(
  target: ProxyTarget,
  path: string,
  answer: unknown,
  name: string,
  check: (value: unknown) => value is T,
): T {
  const value = (answer as Record<string, unknown> | null | undefined)?.[name];
  if (typeof answer === 'object' && answer !== null && check(value)) return value;
  throw new ProxyCliError(
    `the answer of ${shownUrl(target.url)}${path} is not the proxy's brakes: is --url the proxy's base URL?`,
    1,
  );
}

const isBrakeList = (value: unknown): value is Brake[] => Array.isArray(value) && value.every(isBrake);

export interface RunOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly io: CliIo;
  readonly fetch?: Fetch;
  readonly now?: () => number;
}

async function run(command: BrakesCommand, options: RunOptions): Promise<number> {
  const { io } = options;
  const fetcher = options.fetch ?? ((url, init) => fetch(url, init));
  const { target, json } = command;
  if (command.command === 'list') {
    const answer = await requestProxy(target, { path: BRAKES_PATH }, fetcher, WORDS);
    const brakes = answerOf(target, BRAKES_PATH, answer, 'brakes', isBrakeList);
    if (brakes.length === 0) {
      io.stderr.write('brakes: none in force\n');
      return 0;
    }
    io.stdout.write(rendered(brakes, json));
    return 0;
  }
  if (command.command === 'set') {
    const answer = await requestProxy(
      target,
      { path: BRAKES_PATH, method: 'POST', body: command.brake },
      fetcher,
      WORDS,
    );
    const brake = answerOf(target, BRAKES_PATH, answer, 'brake', isBrake);
    io.stdout.write(rendered([brake], json));
    io.stderr.write(
      `brakes: set ${printable(brake.id)}: every instance applies it to the calls it starts BRAKES_REFRESH seconds (5 by default) from now; release it with npm run brakes -- release ${printable(brake.id)}\n`,
    );
    return 0;
  }
  const answer = await requestProxy(
    target,
    { path: BRAKES_RELEASE_PATH, method: 'POST', body: { id: command.id } },
    fetcher,
    WORDS,
  );
  const released = answerOf(target, BRAKES_RELEASE_PATH, answer, 'released', isBrake);
  io.stdout.write(rendered([released], json));
  io.stderr.write(
    `brakes: released ${printable(released.id)}: every instance serves its calls again within BRAKES_REFRESH seconds (5 by default)\n`,
  );
  return 0;
}

/** `npm run brakes -- <argv>`: the exit code (0, 1, 2), having written to `io`. */
export async function runBrakes(argv: readonly string[], options: RunOptions): Promise<number> {
  const { io } = options;
  const parsed = parseBrakesArgs(argv, options.env, (options.now ?? Date.now)());
  if ('help' in parsed) {
    io.stdout.write(BRAKES_USAGE);
    return 0;
  }
  if ('problem' in parsed) {
    io.stderr.write(`brakes: ${parsed.problem}\n(npm run brakes -- --help lists the options)\n`);
    return 2;
  }
  try {
    return await run(parsed, options);
  } catch (error) {
    if (!(error instanceof ProxyCliError)) throw error;
    io.stderr.write(`brakes: ${error.message}\n`);
    return error.exitCode;
  }
}

runAsMain(import.meta.url, 'brakes', (argv, io, env) => runBrakes(argv, { env, io }));
