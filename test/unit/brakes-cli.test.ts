/**
 * `npm run brakes` (bin/brakes-cli.ts) in process: its command line (`list`, `set` with its scope,
 * mode, reason and expiry, `release <id>`; the key and URL as `npm run audit-log` takes them; usage
 * problems named without echoing a value), the table and the JSON lines, and its runs against a
 * fake `fetch`: what each command sends, the proxy's refusals (-32008, -32012 on the operator's own
 * key, a 400) and an answer that is not the proxy's in words with their exit codes, never the key.
 */
import { describe, expect, it } from 'vitest';
import {
  BRAKES_USAGE,
  brakeRow,
  COLUMNS,
  parseBrakesArgs,
  runBrakes,
  scopeOfOption,
  scopeText,
} from '../../bin/brakes-cli.ts';
import { DEFAULT_URL } from '../../bin/proxy-cli.ts';
import type { Brake } from '../../lambdas/platform/brakes/brakes.ts';

const KEY = 'unit-brakes-key-0123456789';
const NOW = Date.parse('2026-12-07T12:00:00.000Z');
const ENV = { ERP_PROXY_KEY: KEY };

function brake(overrides: Partial<Brake> = {}): Brake {
  return {
    id: 'brk_0123456789abcdef',
    scope: { key: 'agent-7' },
    mode: 'writes',
    reason: 'A loop of writes on invoices; we are looking into it.',
    set_by: 'operator',
    set_at: '2026-12-07T11:52:31.216Z',
    ...overrides,
  };
}

function parsed(argv: readonly string[], env: Record<string, string> = ENV) {
  const result = parseBrakesArgs(argv, env, NOW);
  if (!('command' in result)) throw new Error(`not a command: ${JSON.stringify(result)}`);
  return result;
}

function problemOf(argv: readonly string[], env: Record<string, string> = ENV): string {
  const result = parseBrakesArgs(argv, env, NOW);
  if (!('problem' in result)) throw new Error(`no problem: ${JSON.stringify(result)}`);
  return result.problem;
}

const SET = ['set', '--scope', 'all', '--mode', 'writes', '--reason', 'Maintenance'];

describe('brakes: the command line', () => {
  it('list and release, with the key and URL from the options, else ERP_PROXY_KEY and ERP_PROXY_URL, else npm start', () => {
    expect(parsed(['list'])).toEqual({
      command: 'list',
      target: { url: DEFAULT_URL, key: KEY },
      json: false,
    });
    const env = { ERP_PROXY_KEY: 'from-env', ERP_PROXY_URL: 'https://proxy.example.com/prod/' };
    expect(parsed(['list', '--json'], env)).toEqual({
      command: 'list',
      target: { url: 'https://proxy.example.com/prod', key: 'from-env' },
      json: true,
    });
    expect(
      parsed(['release', 'brk_0123456789abcdef', '--key', 'given', '--url', 'http://127.0.0.1:9000'], env),
    ).toEqual({
      command: 'release',
      target: { url: 'http://127.0.0.1:9000', key: 'given' },
      json: false,
      id: 'brk_0123456789abcdef',
    });
  });

  it('set: --scope all | key:NAME | identity:ENTRY | erp:HOST, the name after the first colon', () => {
    expect(scopeOfOption('all')).toBe('all');
    expect(scopeOfOption('key:agent-7')).toEqual({ key: 'agent-7' });
    expect(scopeOfOption('identity:sales')).toEqual({ identity: 'sales' });
    expect(scopeOfOption('identity:a:b')).toEqual({ identity: 'a:b' });
    expect(scopeOfOption('erp:erp.example.com')).toEqual({ erp: 'erp.example.com' });
    expect(parsed([...SET])).toEqual({
      command: 'set',
      target: { url: DEFAULT_URL, key: KEY },
      json: false,
      brake: { scope: 'all', mode: 'writes', reason: 'Maintenance' },
    });
    // The scope's text and the table's SCOPE cell are one syntax.
    for (const text of ['all', 'key:agent-7', 'identity:sales', 'erp:erp.example.com']) {
      expect(scopeText(scopeOfOption(text) as Brake['scope'])).toBe(text);
    }
  });

  it('set: the reason as callers see it; --expires as written, --for from now', () => {
    const reason = parsed([
      'set',
      '--scope',
      'key:a',
      '--mode',
      'all',
      '--reason',
      ' Stop\u0007 now\n please ',
    ]);
    expect(reason).toMatchObject({ brake: { scope: { key: 'a' }, mode: 'all', reason: 'Stop now please' } });
    expect(parsed([...SET, '--expires', '2026-12-08T06:00:00Z'])).toMatchObject({
      brake: { expires: '2026-12-08T06:00:00Z' },
    });
    expect(parsed([...SET, '--for', '30m'])).toMatchObject({
      brake: { expires: '2026-12-07T12:30:00.000Z' },
    });
    expect(parsed([...SET, '--for', '7d'])).toMatchObject({ brake: { expires: '2026-12-14T12:00:00.000Z' } });
    expect(parsed([...SET])).not.toHaveProperty('brake.expires');
  });

  it('names what is wrong, never echoing a value that may be the key', () => {
    expect(parseBrakesArgs(['--help'], {}, NOW)).toEqual({ help: true });
    expect(parseBrakesArgs(['set', '-h'], {}, NOW)).toEqual({ help: true });
    expect(problemOf([])).toBe('name a command: list, set, release');
    expect(problemOf(['stop'])).toBe('unknown command stop: the commands are list, set, release');
    expect(problemOf([KEY])).toBe('unknown command: the commands are list, set, release');
    expect(problemOf(['list', KEY])).toBe('list takes options only (they start with --)');
    expect(problemOf(['release'])).toBe('release takes one brake id (npm run brakes -- list shows them)');
    expect(problemOf(['release', 'a', 'b'])).toBe(
      'release takes one brake id (npm run brakes -- list shows them)',
    );
    expect(problemOf(['release', KEY])).toMatch(/^release takes a brake id, such as brk_/);
    expect(problemOf(['release', 'brk x'])).toMatch(/^release takes a brake id/);
    expect(problemOf(['list', '--scope', 'all'])).toBe('--scope is an option of set, not of list');
    expect(problemOf(['release', 'brk_1', '--for', '1h'])).toBe('--for is an option of set, not of release');
    expect(problemOf(['list', `--kye=${KEY}`])).toBe('unknown option --kye');
    expect(problemOf(['list'], {})).toBe(
      'no proxy key: set ERP_PROXY_KEY (or pass --key) to a key whose policy lists "brakes"',
    );
    expect(problemOf(['list', '--url', 'localhost:8787'])).toMatch(/must be an http:\/\/ or https:\/\/ URL/);
    expect(problemOf(['set', '--mode', 'all', '--reason', 'r'])).toBe(
      'set needs --scope: all, key:NAME, identity:ENTRY or erp:HOST',
    );
    expect(problemOf(['set', '--scope', KEY, '--mode', 'all', '--reason', 'r'])).toBe(
      '--scope is all, key:NAME, identity:ENTRY or erp:HOST',
    );
    expect(problemOf(['set', '--scope', `key:${KEY}`, '--mode', 'all', '--reason', 'r'])).toBe(
      "--scope key:NAME takes a key's name (as in the keys secret), never a key itself",
    );
    expect(problemOf(['set', '--scope', 'key:', '--mode', 'all', '--reason', 'r'])).toBe(
      '--scope key:NAME needs the NAME after the colon',
    );
    expect(problemOf(['set', '--scope', 'all', '--reason', 'r'])).toMatch(
      /^set needs --mode: writes .* or all /,
    );
    expect(problemOf(['set', '--scope', 'all', '--mode', 'reads', '--reason', 'r'])).toMatch(
      /^set needs --mode/,
    );
    expect(problemOf(['set', '--scope', 'all', '--mode', 'all'])).toMatch(
      /^set needs --reason: 1 to 300 characters/,
    );
    expect(problemOf(['set', '--scope', 'all', '--mode', 'all', '--reason', ' \n '])).toMatch(
      /^set needs --reason/,
    );
    expect(problemOf(['set', '--scope', 'all', '--mode', 'all', '--reason', 'x'.repeat(301)])).toMatch(
      /^set needs --reason/,
    );
    expect(problemOf([...SET, '--for', '30 minutes'])).toBe(
      '--for is a duration from now: 90s, 30m, 12h, 7d',
    );
    expect(problemOf([...SET, '--for', '0m'])).toBe('--for is a duration from now: 90s, 30m, 12h, 7d');
    expect(problemOf([...SET, '--for', '1h', '--expires', '2026-12-08T06:00:00Z'])).toBe(
      'give --expires or --for, not both',
    );
  });

  it('the help names every scope, both modes and the key it calls with', () => {
    for (const text of ['--scope SCOPE', 'key:NAME', 'identity:ENTRY', 'erp:HOST', 'writes', '--for AGE']) {
      expect(BRAKES_USAGE).toContain(text);
    }
    expect(BRAKES_USAGE).toContain('a key whose policy lists "brakes" in its apis');
    expect(BRAKES_USAGE).toContain('shown to every caller it stops');
  });
});

describe('brakes: the table', () => {
  it('one row per brake, the reason last and whole, control characters made visible', () => {
    expect(COLUMNS.map((column) => column.heading)).toEqual([
      'ID',
      'SCOPE',
      'MODE',
      'SET_BY',
      'SET_AT',
      'EXPIRES',
      'REASON',
    ]);
    expect(brakeRow(brake())).toEqual([
      'brk_0123456789abcdef',
      'key:agent-7',
      'writes',
      'operator',
      '2026-12-07T11:52:31.216Z',
      '-',
      'A loop of writes on invoices; we are looking into it.',
    ]);
    expect(
      brakeRow(brake({ scope: 'all', expires: '2026-12-08T06:00:00.000Z', set_by: 'op\u001b[2J' })),
    ).toEqual([
      'brk_0123456789abcdef',
      'all',
      'writes',
      'op\uFFFD[2J',
      '2026-12-07T11:52:31.216Z',
      '2026-12-08T06:00:00.000Z',
      'A loop of writes on invoices; we are looking into it.',
    ]);
  });
});

// --- Runs against a fake fetch ---------------------------------------------------------------

interface Call {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
}

type FakeAnswer = { status: number; body: string } | Error;

function fakeFetch(answers: FakeAnswer[]) {
  const calls: Call[] = [];
  const fetcher = async (url: string, init: RequestInit): Promise<Response> => {
    calls.push({
      url,
      method: init.method ?? 'GET',
      headers: init.headers as Record<string, string>,
      body: init.body === undefined ? undefined : JSON.parse(init.body as string),
    });
    const answer = answers.shift();
    if (answer instanceof Error) throw answer;
    return new Response(answer?.body ?? '', { status: answer?.status ?? 500 });
  };
  return { calls, fetcher };
}

async function run(argv: readonly string[], answers: FakeAnswer[]) {
  let stdout = '';
  let stderr = '';
  const { calls, fetcher } = fakeFetch(answers);
  const code = await runBrakes(argv, {
    env: ENV,
    io: {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
    },
    fetch: fetcher,
    now: () => NOW,
  });
  for (const text of [stdout, stderr]) expect(text).not.toContain(KEY);
  return { code, stdout, stderr, calls };
}

const ok = (body: unknown): FakeAnswer => ({ status: 200, body: JSON.stringify(body) });
const envelope = (status: number, code: number, message: string): FakeAnswer => ({
  status,
  body: JSON.stringify({ jsonrpc: '2.0', id: null, result: null, error: { code, message, data: null } }),
});

describe('brakes: its runs', () => {
  it('list: GETs <url>/_/brakes with the key and prints the table; none is a line on stderr, exit 0', async () => {
    const listed = await run(
      ['list'],
      [ok({ brakes: [brake(), brake({ id: 'brk_2', scope: 'all', mode: 'all' })] })],
    );
    expect(listed.code).toBe(0);
    expect(listed.stderr).toBe('');
    expect(listed.calls).toEqual([
      {
        url: `${DEFAULT_URL}/_/brakes`,
        method: 'GET',
        headers: { 'x-api-key': KEY, accept: 'application/json' },
        body: undefined,
      },
    ]);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines.map((line) => line.split(/\s{2,}/).slice(0, 3))).toEqual([
      ['ID', 'SCOPE', 'MODE'],
      ['brk_0123456789abcdef', 'key:agent-7', 'writes'],
      ['brk_2', 'all', 'all'],
    ]);
    const none = await run(['list'], [ok({ brakes: [] })]);
    expect(none).toMatchObject({ code: 0, stdout: '', stderr: 'brakes: none in force\n' });
  });

  it('--json: one brake per line, as the proxy answered', async () => {
    const brakes = [
      brake(),
      brake({ id: 'brk_2', scope: { erp: 'erp.example.com' }, expires: '2026-12-08T06:00:00.000Z' }),
    ];
    const { code, stdout } = await run(['list', '--json'], [ok({ brakes })]);
    expect(code).toBe(0);
    expect(
      stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
    ).toEqual(brakes);
  });

  it('set: POSTs the brake as JSON, prints it with its id, and says when it applies', async () => {
    const set = brake({ scope: { identity: 'sales' }, mode: 'all', expires: '2026-12-07T12:30:00.000Z' });
    const { code, stdout, stderr, calls } = await run(
      ['set', '--scope', 'identity:sales', '--mode', 'all', '--reason', set.reason, '--for', '30m'],
      [ok({ brake: set })],
    );
    expect(code).toBe(0);
    expect(calls).toEqual([
      {
        url: `${DEFAULT_URL}/_/brakes`,
        method: 'POST',
        headers: { 'x-api-key': KEY, accept: 'application/json', 'content-type': 'application/json' },
        body: {
          scope: { identity: 'sales' },
          mode: 'all',
          reason: set.reason,
          expires: '2026-12-07T12:30:00.000Z',
        },
      },
    ]);
    expect(stdout.split('\n')[1]?.split(/\s{2,}/)).toEqual(brakeRow(set));
    expect(stderr).toBe(
      'brakes: set brk_0123456789abcdef: every instance applies it to the calls it starts BRAKES_REFRESH seconds (5 by default) from now; release it with npm run brakes -- release brk_0123456789abcdef\n',
    );
    const json = await run([...SET, '--json'], [ok({ brake: set })]);
    expect(JSON.parse(json.stdout)).toEqual(set);
  });

  it('release: POSTs the id to /_/brakes/release and prints the brake released', async () => {
    const { code, stdout, stderr, calls } = await run(
      ['release', 'brk_0123456789abcdef'],
      [ok({ released: brake() })],
    );
    expect(code).toBe(0);
    expect(calls[0]).toMatchObject({
      url: `${DEFAULT_URL}/_/brakes/release`,
      method: 'POST',
      body: { id: 'brk_0123456789abcdef' },
    });
    expect(stdout).toContain('brk_0123456789abcdef  key:agent-7');
    expect(stderr).toMatch(
      /^brakes: released brk_0123456789abcdef: every instance serves its calls again within/,
    );
  });

  it("the proxy's refusals: its code and message with a hint; 400 is usage (2), the others 1", async () => {
    const policy = await run(['list'], [envelope(403, -32008, "Refused by this key's policy: no brakes")]);
    expect(policy.code).toBe(1);
    expect(policy.stdout).toBe('');
    expect(policy.stderr).toBe(
      'brakes: the proxy refused (HTTP 403 -32008): Refused by this key\'s policy: no brakes (the key needs a policy whose apis list "brakes")\n',
    );
    const braked = await run(
      ['release', 'brk_1'],
      [
        envelope(
          503,
          -32012,
          'Stopped by an operator: oops. The call did not run; this brake (brk_1) holds until an operator releases it.',
        ),
      ],
    );
    expect(braked.code).toBe(1);
    expect(braked.stderr).toContain(
      '(HTTP 503 -32012): Stopped by an operator: oops. The call did not run; this brake (brk_1) holds until an operator releases it. (a brake stops this key itself: release it with another key whose policy lists "brakes")',
    );
    const invalid = await run(
      ['release', 'brk_nope'],
      [envelope(400, -32600, 'Invalid brake: no brake in force has the id "brk_nope"')],
    );
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toBe(
      'brakes: the proxy refused (HTTP 400 -32600): Invalid brake: no brake in force has the id "brk_nope" (see npm run brakes -- --help)\n',
    );
    const noStore = await run(
      [...SET],
      [envelope(503, -32004, 'No brakes store: this proxy has no state table (STATE_TABLE)')],
    );
    expect(noStore.code).toBe(1);
    expect(noStore.stderr).toContain('(HTTP 503 -32004): No brakes store');
  });

  it("an answer that is not the proxy's, or a proxy not reached: in words, exit 1", async () => {
    const notFound = await run(
      ['list', '--url', 'http://127.0.0.1:9/base'],
      [{ status: 404, body: '{"message":"Not Found"}' }],
    );
    expect(notFound.code).toBe(1);
    expect(notFound.stderr).toBe(
      'brakes: HTTP 404 from http://127.0.0.1:9/base/_/brakes: {"message":"Not Found"} (is http://127.0.0.1:9/base the proxy\'s base URL?)\n',
    );
    const other = await run(['list'], [{ status: 200, body: '<html>a login page</html>' }]);
    expect(other.code).toBe(1);
    expect(other.stderr).toBe(
      "brakes: the answer of http://127.0.0.1:8787/_/brakes is not the proxy's brakes: is --url the proxy's base URL?\n",
    );
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
    });
    const down = await run([...SET], [refused]);
    expect(down.code).toBe(1);
    expect(down.stderr).toBe(
      'brakes: cannot reach the proxy at http://127.0.0.1:8787: connection refused: is it running (npm start), and is --url (or ERP_PROXY_URL) its address?\n',
    );
  });

  it('usage problems: exit 2, nothing sent', async () => {
    const { code, stderr, calls } = await run(['set', '--scope', 'all', '--reason', 'r'], []);
    expect(code).toBe(2);
    expect(calls).toEqual([]);
    expect(stderr).toMatch(
      /^brakes: set needs --mode: .*\n\(npm run brakes -- --help lists the options\)\n$/,
    );
  });
});
