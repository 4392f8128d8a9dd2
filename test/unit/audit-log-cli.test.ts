/**
 * `npm run audit-log` (bin/audit-log.ts) in process: its command line (the filters are
 * `GET /_/audit`'s, the key and URL from the options or the environment, usage problems named
 * without echoing a value), the table (columns, cut cells, ids, errors, a terminal's control
 * characters removed), and its runs against a fake `fetch`: pages followed with `--all` up to the
 * bound, JSON lines, the proxy's refusals and an unreachable proxy in words with their exit codes,
 * never the key.
 */
import { describe, expect, it } from 'vitest';
import {
  AUDIT_LOG_USAGE,
  type AuditPage,
  COLUMNS,
  DEFAULT_URL,
  errorCell,
  idsCell,
  MAX_PAGES,
  parseAuditLogArgs,
  printable,
  renderTable,
  runAuditLog,
  tableRow,
  timeParameter,
} from '../../bin/audit-log.ts';
import { AUDIT_FILTERS } from '../../lambdas/operator/audit-endpoint.ts';
import type { AuditRecord } from '../../lambdas/platform/audit/audit-record.ts';

const KEY = 'unit-audit-key-0123456789';
const NOW = Date.parse('2026-12-07T12:00:00.000Z');
const ENV = { ERP_PROXY_KEY: KEY };

function record(overrides: Partial<AuditRecord> = {}): AuditRecord {
  return {
    schema: 1,
    audit_id: '01M98T5GZG85QXBFDENZ8Q16C7',
    time: '2026-12-07T11:52:31.216Z',
    api: 'v1',
    actor_id: 'key:auditor',
    actor: { key: 'auditor', erp_user: 2 },
    erp: { host: 'erp.example.com', db: 'erp_a', scheme: 'https', protocol: 'jsonrpc' },
    model: 'res.partner',
    method: 'write',
    record_ids: [42],
    record_ids_count: 1,
    outcome: 'ok',
    duration_ms: 7,
    ...overrides,
  };
}

function listOf(argv: readonly string[], env: Record<string, string> = ENV) {
  const parsed = parseAuditLogArgs(argv, env, NOW);
  if (!('list' in parsed)) throw new Error(`not a list: ${JSON.stringify(parsed)}`);
  return parsed.list;
}

function problemOf(argv: readonly string[], env: Record<string, string> = ENV): string {
  const parsed = parseAuditLogArgs(argv, env, NOW);
  if (!('problem' in parsed)) throw new Error(`no problem: ${JSON.stringify(parsed)}`);
  return parsed.problem;
}

describe('audit-log: the command line', () => {
  it('takes every filter of GET /_/audit as an option of its name, sent as given', () => {
    const argv = ['list'];
    const expected: Record<string, string> = {};
    for (const name of AUDIT_FILTERS) {
      const value =
        name === 'limit' ? '5' : name === 'since' || name === 'until' ? `${name}-text` : `v-${name}`;
      argv.push(`--${name}`, value);
      expected[name] = value;
    }
    expect(listOf(argv).query).toEqual(expected);
    expect(listOf(['list']).query).toEqual({});
  });

  it('reads the key and URL from the options, else ERP_PROXY_KEY and ERP_PROXY_URL, else npm start', () => {
    expect(DEFAULT_URL).toBe('http://127.0.0.1:8787');
    expect(listOf(['list'])).toEqual({ url: DEFAULT_URL, key: KEY, query: {}, json: false, all: false });
    const env = { ERP_PROXY_KEY: 'from-env', ERP_PROXY_URL: 'https://proxy.example.com/prod/' };
    expect(listOf(['list'], env)).toMatchObject({ url: 'https://proxy.example.com/prod', key: 'from-env' });
    expect(listOf(['list', '--key', 'given', '--url', 'http://127.0.0.1:9000'], env)).toMatchObject({
      url: 'http://127.0.0.1:9000',
      key: 'given',
    });
    expect(listOf(['--json', 'list', '--all'])).toMatchObject({ json: true, all: true });
  });

  it('--all reads pages of the most records a page holds unless --limit says', () => {
    expect(listOf(['list', '--all']).query).toEqual({ limit: '1000' });
    expect(listOf(['list', '--all', '--limit', '10']).query).toEqual({ limit: '10' });
    for (const limit of ['0', '1001', 'x', '-1', '1.5']) {
      expect(problemOf(['list', `--limit=${limit}`])).toBe('--limit must be a whole number from 1 to 1000');
    }
  });

  it('--since and --until: an age or a date become the UTC time they name; the rest goes as written', () => {
    expect(timeParameter('since', '30m', NOW)).toBe('2026-12-07T11:30:00.000Z');
    expect(timeParameter('since', '12h', NOW)).toBe('2026-12-07T00:00:00.000Z');
    expect(timeParameter('since', '7d', NOW)).toBe('2026-11-30T12:00:00.000Z');
    expect(timeParameter('since', '2026-12-01', NOW)).toBe('2026-12-01T00:00:00.000Z');
    expect(timeParameter('until', '2026-12-01', NOW)).toBe('2026-12-01T23:59:59.999Z');
    expect(timeParameter('since', '2026-12-07T09:00:00Z', NOW)).toBe('2026-12-07T09:00:00Z');
    expect(timeParameter('until', '1765098000000', NOW)).toBe('1765098000000');
    expect(timeParameter('since', 'yesterday', NOW)).toBe('yesterday');
    expect(listOf(['list', '--since', '1d', '--until', '2026-12-07']).query).toEqual({
      since: '2026-12-06T12:00:00.000Z',
      until: '2026-12-07T23:59:59.999Z',
    });
  });

  it('names what is wrong, never echoing a value that may be the key', () => {
    expect(parseAuditLogArgs(['--help'], {}, NOW)).toEqual({ help: true });
    expect(parseAuditLogArgs(['list', '-h'], {}, NOW)).toEqual({ help: true });
    expect(problemOf([])).toBe('name a command: list, seal, verify, public-key');
    expect(problemOf(['lst'])).toBe('unknown command lst: the commands are list, seal, verify, public-key');
    expect(problemOf([KEY])).toBe('unknown command: the commands are list, seal, verify, public-key');
    expect(problemOf(['list', KEY])).toBe('list takes options only (they start with --)');
    expect(problemOf(['list', `--kye=${KEY}`])).toBe('unknown option --kye');
    expect(problemOf(['list', '--key'])).toMatch(/^Option '--key <value>' argument missing/);
    expect(problemOf(['list', '--json=yes'])).toMatch(/^Option '--json' does not take an argument/);
    expect(problemOf(['list'], {})).toMatch(/^no proxy key: set ERP_PROXY_KEY \(or pass --key\)/);
    expect(problemOf(['list', '--key', ' '], {})).toMatch(/^no proxy key/);
    expect(problemOf(['list', '--url', 'localhost:8787'])).toMatch(/must be an http:\/\/ or https:\/\/ URL/);
    expect(problemOf(['list', '--url', 'not a url'])).toMatch(/is not a URL/);
    expect(problemOf(['list', '--url', 'http://127.0.0.1:8787/?x=1'])).toMatch(/without \? or #/);
  });

  it('the help names every filter and outcome', () => {
    for (const name of AUDIT_FILTERS) expect(AUDIT_LOG_USAGE).toContain(`--${name} `);
    expect(AUDIT_LOG_USAGE).toContain('ok, erp_error, refused, asked, not_run, ran, unknown, replayed');
    expect(AUDIT_LOG_USAGE).toContain(`at most ${MAX_PAGES} pages`);
  });
});

describe('audit-log: the table', () => {
  it('one row per record, in the columns', () => {
    expect(COLUMNS.map((column) => column.heading)).toEqual([
      'TIME',
      'AUDIT_ID',
      'OUTCOME',
      'ACTOR',
      'API/TOOL',
      'ERP/DB',
      'MODEL.METHOD',
      'IDS',
      'ERROR',
    ]);
    expect(tableRow(record())).toEqual([
      '2026-12-07T11:52:31.216Z',
      '01M98T5GZG85QXBFDENZ8Q16C7',
      'ok',
      'key:auditor uid=2',
      'v1',
      'erp.example.com/erp_a',
      'res.partner.write',
      '42',
      '-',
    ]);
    const mcp = record({
      api: 'mcp',
      tool: 'create',
      actor_id: 'oauth:https://issuer.example.com alice',
      actor: {
        oauth: { issuer: 'https://issuer.example.com', sub: 'alice', entry: 'alice' },
        client: { name: 'claude-code', version: '2.0', self_reported: true },
      },
      method: 'create',
      record_ids: undefined,
      record_ids_count: undefined,
      created_ids: [7],
      outcome: 'refused',
      error: { code: -32008, rule: 'policy.models' },
    });
    expect(tableRow(mcp).slice(3)).toEqual([
      'oauth:https://issuer.example.com alice via claude-code',
      'mcp/create',
      'erp.example.com/erp_a',
      'res.partner.create',
      'new 7',
      '-32008 policy.models',
    ]);
  });

  it('ids: the first five, how many more, and the created ones', () => {
    expect(idsCell(record({ record_ids: [1, 2, 3, 4, 5, 6, 7], record_ids_count: 7 }))).toBe('1,2,3,4,5,…+2');
    // A record keeps at most 1,000 ids, and says how many there were.
    expect(idsCell(record({ record_ids: [1, 2, 3], record_ids_count: 5000 }))).toBe('1,2,3,…+4997');
    expect(idsCell(record({ record_ids: [1], created_ids: [8, 9], created_ids_count: 2 }))).toBe('1 new 8,9');
    expect(idsCell(record({ record_ids: [], record_ids_count: 0 }))).toBe('');
  });

  it('errors: the code and rule, or the ERP code and exception; a replay names its run', () => {
    expect(errorCell(record({ error: { code: 200, name: 'odoo.exceptions.ValidationError' } }))).toBe(
      '200 odoo.exceptions.ValidationError',
    );
    expect(errorCell(record({ error: { rule: 'limits' } }))).toBe('limits');
    expect(errorCell(record({ outcome: 'replayed', replay_of: '01M98T5GZG85QXBFDENZ8Q16C0' }))).toBe(
      'replays 01M98T5GZG85QXBFDENZ8Q16C0',
    );
  });

  it('pads every column but the last to its widest cell, and cuts long cells', () => {
    const long = record({ model: `x.${'m'.repeat(60)}`, error: { name: 'E'.repeat(100) } });
    const text = renderTable([tableRow(record()), tableRow(long)]);
    const lines = text.split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe('');
    expect(lines[0]).toMatch(/^TIME {22}AUDIT_ID {20}OUTCOME {2}ACTOR/);
    const model = (lines[2] as string).split(/\s{2,}/)[6] as string;
    expect(model).toHaveLength(48);
    expect(model.endsWith('…')).toBe(true);
    expect((lines[2] as string).endsWith(`${'E'.repeat(79)}…`)).toBe(true);
    for (const line of lines.slice(0, 3)) expect(line).toBe(line.trimEnd());
    expect((lines[1] as string).indexOf('ok')).toBe((lines[0] as string).indexOf('OUTCOME'));
  });

  it('never writes a control character or a direction override to the terminal', () => {
    expect(printable('a\u001b[31mred\u0007\r\n\u202ecba\u009b')).toBe(
      'a\uFFFD[31mred\uFFFD\uFFFD\uFFFD\uFFFDcba\uFFFD',
    );
    const row = tableRow(record({ actor_id: 'key:evil\u001b]0;title\u0007', model: undefined, method: '' }));
    expect(row[3]).toBe('key:evil\uFFFD]0;title\uFFFD uid=2');
    expect(row[6]).toBe('-');
  });
});

interface Call {
  readonly url: string;
  readonly headers: Record<string, string>;
}

/** A fake `fetch` answering each call with the next of `answers` (a page, or status and body, or an error). */
function fakeFetch(answers: readonly (AuditPage | { status: number; body: string } | Error)[]) {
  const calls: Call[] = [];
  const fetcher = async (url: string, init: RequestInit): Promise<Response> => {
    calls.push({ url, headers: init.headers as Record<string, string> });
    const answer = answers[calls.length - 1] ?? answers[answers.length - 1];
    if (answer instanceof Error) throw answer;
    if (answer !== undefined && 'records' in answer) return new Response(JSON.stringify(answer));
    return new Response(answer?.body ?? '', { status: answer?.status ?? 500 });
  };
  return { calls, fetcher };
}

async function run(
  argv: readonly string[],
  answers: Parameters<typeof fakeFetch>[0],
  maxPages?: number,
): Promise<{ code: number; stdout: string; stderr: string; calls: Call[] }> {
  let stdout = '';
  let stderr = '';
  const { calls, fetcher } = fakeFetch(answers);
  const code = await runAuditLog(argv, {
    env: ENV,
    io: {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
    },
    fetch: fetcher,
    now: () => NOW,
    ...(maxPages === undefined ? {} : { maxPages }),
  });
  for (const text of [stdout, stderr]) expect(text).not.toContain(KEY);
  return { code, stdout, stderr, calls };
}

const page = (ids: readonly string[], next: string | null): AuditPage => ({
  records: ids.map((id) => record({ audit_id: id })),
  next_cursor: next,
});

describe('audit-log list: its runs', () => {
  it('GETs <url>/_/audit with the filters and the key, and prints the table', async () => {
    const { code, stdout, stderr, calls } = await run(
      ['list', '--model', 'res.partner', '--record', 'res.partner:42', '--since', '1h'],
      [page(['A', 'B'], null)],
    );
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(calls).toEqual([
      {
        url: `${DEFAULT_URL}/_/audit?since=2026-12-07T11%3A00%3A00.000Z&model=res.partner&record=res.partner%3A42`,
        headers: { 'x-api-key': KEY, accept: 'application/json' },
      },
    ]);
    expect(stdout.split('\n').map((line) => line.split(/\s{2,}/)[1])).toEqual([
      'AUDIT_ID',
      'A',
      'B',
      undefined,
    ]);
  });

  it('one JSON record per line with --json; a page with more says how to go on', async () => {
    const { code, stdout, stderr } = await run(['list', '--json'], [page(['A', 'B'], 'CUR1')]);
    expect(code).toBe(0);
    expect(
      stdout
        .split('\n')
        .slice(0, -1)
        .map((line) => JSON.parse(line)),
    ).toEqual(page(['A', 'B'], null).records);
    expect(stderr).toBe('audit-log: more records follow: add --all, or --cursor CUR1 for the next page\n');
  });

  it('none: nothing on stdout, a line on stderr, exit 0', async () => {
    const { code, stdout, stderr } = await run(['list'], [page([], null)]);
    expect(code).toBe(0);
    expect(stdout).toBe('');
    expect(stderr).toBe('audit-log: no audit record matches (without --since: the last 30 days)\n');
  });

  it('--all follows next_cursor to the end, with the filters, its progress on stderr', async () => {
    const { code, stdout, stderr, calls } = await run(
      ['list', '--all', '--json', '--actor', 'bot'],
      [page(['A'], 'C1'), page([], 'C2'), page(['B'], null)],
    );
    expect(code).toBe(0);
    expect(
      stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line).audit_id),
    ).toEqual(['A', 'B']);
    expect(calls.map((call) => new URL(call.url).search)).toEqual([
      '?actor=bot&limit=1000',
      '?actor=bot&limit=1000&cursor=C1',
      '?actor=bot&limit=1000&cursor=C2',
    ]);
    expect(stderr).toBe(
      [
        'audit-log: page 1: 1 records so far, reading on',
        'audit-log: page 2: 1 records so far, reading on',
        'audit-log: 2 records in 3 pages',
        '',
      ].join('\n'),
    );
  });

  it('--all stops at its bound: what it read, how to go on, exit 1', async () => {
    const { code, stdout, stderr, calls } = await run(['list', '--all'], [page(['A'], 'SAME')], 3);
    expect(calls).toHaveLength(3);
    expect(code).toBe(1);
    expect(stdout.split('\n').filter(Boolean)).toHaveLength(4);
    expect(stderr).toContain(
      'audit-log: stopped after 3 pages (3 records) and more remain: narrow --since and --until, or go on with --cursor SAME\n',
    );
  });

  it("the proxy's refusals: its code and message; 400 is usage (2), the others 1", async () => {
    const envelope = (code: number, message: string) =>
      JSON.stringify({ jsonrpc: '2.0', id: null, result: null, error: { code, message, data: null } });
    const policy = await run(
      ['list'],
      [{ status: 403, body: envelope(-32008, "Refused by this key's policy: no audit") }],
    );
    expect(policy.code).toBe(1);
    expect(policy.stdout).toBe('');
    expect(policy.stderr).toBe(
      'audit-log: the proxy refused (HTTP 403 -32008): Refused by this key\'s policy: no audit (the key needs a policy whose apis list "audit")\n',
    );
    const key = await run(
      ['list'],
      [{ status: 401, body: envelope(-32000, 'Authentication failed: the x-api-key header is not valid') }],
    );
    expect(key.code).toBe(1);
    expect(key.stderr).toBe(
      'audit-log: the proxy refused (HTTP 401 -32000): Authentication failed: the x-api-key header is not valid\n',
    );
    const filter = await run(
      ['list'],
      [{ status: 400, body: envelope(-32600, 'GET /_/audit: since is after until') }],
    );
    expect(filter.code).toBe(2);
    expect(filter.stderr).toBe(
      'audit-log: the proxy refused (HTTP 400 -32600): GET /_/audit: since is after until (see npm run audit-log -- --help)\n',
    );
    const off = await run(
      ['list'],
      [{ status: 503, body: envelope(-32004, 'The audit is off on this proxy (AUDIT=off)') }],
    );
    expect(off.code).toBe(1);
    expect(off.stderr).toContain('(HTTP 503 -32004): The audit is off on this proxy (AUDIT=off)');
  });

  it("an answer that is not the proxy's: its status and a bounded, printable part of its body", async () => {
    const notFound = await run(
      ['list', '--url', 'http://127.0.0.1:9/base'],
      [{ status: 404, body: '{"message":"Not Found"}' }],
    );
    expect(notFound.code).toBe(1);
    expect(notFound.stderr).toBe(
      'audit-log: HTTP 404 from http://127.0.0.1:9/base/_/audit: {"message":"Not Found"} (is http://127.0.0.1:9/base the proxy\'s base URL?)\n',
    );
    const html = await run(['list'], [{ status: 502, body: `<html>\u001b[2J${'x'.repeat(500)}</html>` }]);
    expect(html.stderr).toMatch(
      /^audit-log: HTTP 502 from http:\/\/127\.0\.0\.1:8787\/_\/audit: <html>\uFFFD\[2Jx+\n$/,
    );
    expect(html.stderr.length).toBeLessThan(300);
    const other = await run(['list'], [{ status: 200, body: '<html>a login page</html>' }]);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/is not a page of audit records: is --url the proxy's base URL\?/);
  });

  it('a proxy not reached: why, in words, exit 1', async () => {
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
    });
    const down = await run(['list'], [refused]);
    expect(down.code).toBe(1);
    expect(down.stderr).toBe(
      'audit-log: cannot reach the proxy at http://127.0.0.1:8787: connection refused: is it running (npm start), and is --url (or ERP_PROXY_URL) its address?\n',
    );
    const both = new TypeError('fetch failed', {
      cause: Object.assign(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })]), {}),
    });
    expect((await run(['list'], [both])).stderr).toContain('connection refused');
    const slow = Object.assign(new Error('The operation was aborted due to timeout'), {
      name: 'TimeoutError',
    });
    expect((await run(['list'], [slow])).stderr).toBe(
      'audit-log: the proxy at http://127.0.0.1:8787 did not answer within 30 s\n',
    );
    const userinfo = await run(['list', '--url', 'http://user:secret@127.0.0.1:9'], [refused]);
    expect(userinfo.stderr).not.toContain('secret');
  });

  it('usage: the problem and where the options are, exit 2, no request', async () => {
    const { code, stdout, stderr, calls } = await run(['list', '--nope'], []);
    expect(code).toBe(2);
    expect(calls).toHaveLength(0);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      'audit-log: unknown option --nope\n(npm run audit-log -- --help lists the options)\n',
    );
    const help = await run(['--help'], []);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe(AUDIT_LOG_USAGE);
  });
});
