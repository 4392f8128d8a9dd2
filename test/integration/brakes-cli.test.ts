/**
 * `npm run brakes` (bin/brakes-cli.ts) as an operator runs it, a child process, against a running
 * proxy (its brakes in the embedded store, `BRAKES_REFRESH=1`) in front of the ERP double: `set`
 * stops the braked key's writes, and only those, a refresh later, with the operator's reason in
 * the -32012; `list` prints it as a table and as JSON lines; `release` lets the writes through
 * again. A key whose policy does not list `brakes` gets -32008 and exit 1; an operator key braked
 * `all` is locked out of `/_/brakes` too, and a second operator key releases it. The keys never
 * appear in what the CLI prints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLUMNS } from '../../bin/brakes-cli.ts';
import { ERP_A_ADMIN_KEY, type ErpDouble, startErpDouble } from '../erp-double/index.ts';
import { freePort, type ProxyHarness, startProxy } from '../support/proxy-harness.ts';
import { type Finished, runToExit } from '../support/scripts.ts';

const KEYS = {
  operator: 'operator-key-0123456789abcdef',
  spare: 'spare-operator-key-0123456789',
  agent: 'agent-key-0123456789abcdefgh',
  plain: 'plain-key-0123456789abcdefgh',
} as const;

const PROXY_API_KEYS = JSON.stringify({
  keys: [
    { name: 'operator', key: KEYS.operator, policy: { apis: ['brakes'] } },
    { name: 'spare', key: KEYS.spare, policy: { apis: ['brakes'] } },
    { name: 'agent', key: KEYS.agent },
    { name: 'plain', key: KEYS.plain, policy: { apis: ['v1', 'v2', 'operator'] } },
  ],
});

/** Seconds the proxy keeps its copy of the brakes, and how long after a change every call meets it. */
const REFRESH_S = 1;
const APPLIED_MS = REFRESH_S * 1000 + 200;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let double: ErpDouble;
let proxy: ProxyHarness;

/** `npm run -s brakes -- <args>` against the proxy, with `key` (the operator's by default). */
function brakes(args: readonly string[], key: string = KEYS.operator): Promise<Finished> {
  return runToExit('npm', ['run', '--silent', 'brakes', '--', ...args], {
    ERP_PROXY_URL: proxy.url,
    ERP_PROXY_KEY: key,
  });
}

function expectNoKey(run: Finished): void {
  for (const key of Object.values(KEYS)) {
    expect(run.stdout).not.toContain(key);
    expect(run.stderr).not.toContain(key);
  }
}

/** A v2 call of `method` on res.partner by `key`: its HTTP status and envelope. */
async function call(key: string, method: 'search_count' | 'create') {
  const answer = await proxy.post(
    '/v2/erp/execute',
    {
      id: method,
      model_id: 'res.partner',
      method,
      kwargs: method === 'create' ? { vals_list: [{ name: 'Braked?' }] } : { domain: [] },
      erp_instance: { url: double.url, db: 'erp_a', api_key: ERP_A_ADMIN_KEY },
    },
    { 'x-api-key': key },
  );
  return {
    status: answer.status,
    error: (answer.json as { error: { code: number; message: string } | null }).error,
  };
}

beforeAll(async () => {
  double = await startErpDouble({ mode: '19' });
  proxy = await startProxy({
    env: { PROXY_API_KEY: '', PROXY_API_KEYS, BRAKES_REFRESH: String(REFRESH_S) },
  });
}, 60_000);

afterAll(async () => {
  await proxy?.close();
  await double?.close();
});

describe('npm run brakes', () => {
  it("set stops the key's writes a refresh later, with the reason; list shows it; release restores", async () => {
    expect((await call(KEYS.agent, 'create')).error).toBeNull();
    const none = await brakes(['list']);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toBe('');
    expect(none.stderr).toBe('brakes: none in force\n');

    const set = await brakes([
      'set',
      '--scope',
      'key:agent',
      '--mode',
      'writes',
      '--reason',
      'A loop of creates; we are looking into it.',
      '--for',
      '1h',
    ]);
    expect(set.code, set.stderr).toBe(0);
    expectNoKey(set);
    const [heading, row] = set.stdout.trimEnd().split('\n');
    expect(heading?.split(/\s{2,}/)).toEqual(COLUMNS.map((column) => column.heading));
    const cells = row?.split(/\s{2,}/) ?? [];
    expect(cells).toEqual([
      expect.stringMatching(/^brk_[0-9a-f]{16}$/),
      'key:agent',
      'writes',
      'operator',
      expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      'A loop of creates; we are looking into it.',
    ]);
    const id = cells[0] as string;
    expect(set.stderr).toContain(`brakes: set ${id}: every instance applies it`);

    await sleep(APPLIED_MS);
    const write = await call(KEYS.agent, 'create');
    expect(write.status).toBe(503);
    expect(write.error?.code).toBe(-32012);
    expect(write.error?.message).toContain('A loop of creates; we are looking into it.');
    // Reads go on; another key writes.
    expect((await call(KEYS.agent, 'search_count')).error).toBeNull();
    expect((await call(KEYS.plain, 'create')).error).toBeNull();

    const listed = await brakes(['list', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      id,
      scope: { key: 'agent' },
      mode: 'writes',
      set_by: 'operator',
    });

    const released = await brakes(['release', id]);
    expect(released.code, released.stderr).toBe(0);
    expect(released.stdout).toContain(id);
    expect(released.stderr).toContain(`brakes: released ${id}`);
    await sleep(APPLIED_MS);
    expect((await call(KEYS.agent, 'create')).error).toBeNull();
    const again = await brakes(['release', id]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('(HTTP 400 -32600): Invalid brake: no brake in force has the id');
  }, 120_000);

  it('a key whose policy does not list brakes: -32008 in words, exit 1', async () => {
    const run = await brakes(['list'], KEYS.plain);
    expect(run.code).toBe(1);
    expectNoKey(run);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^brakes: the proxy refused \(HTTP 403 -32008\): /);
    expect(run.stderr).toContain('(the key needs a policy whose apis list "brakes")');
  }, 120_000);

  it('an operator key braked all is locked out of /_/brakes too; a second key releases it', async () => {
    const set = await brakes([
      'set',
      '--scope',
      'key:operator',
      '--mode',
      'all',
      '--reason',
      'Testing a lockout.',
    ]);
    expect(set.code, set.stderr).toBe(0);
    const id = set.stdout
      .trimEnd()
      .split('\n')[1]
      ?.split(/\s{2,}/)[0] as string;
    await sleep(APPLIED_MS);
    const locked = await brakes(['list']);
    expect(locked.code).toBe(1);
    expect(locked.stderr).toContain('(HTTP 503 -32012): Stopped by an operator: Testing a lockout.');
    expect(locked.stderr).toContain('(a brake stops this key itself: release it with another key');
    const released = await brakes(['release', id], KEYS.spare);
    expect(released.code, released.stderr).toBe(0);
    await sleep(APPLIED_MS);
    const back = await brakes(['list']);
    expect(back.code, back.stderr).toBe(0);
  }, 120_000);

  it('a proxy not there: a clear line, exit 1', async () => {
    const port = await freePort();
    const gone = await runToExit(
      'npm',
      ['run', '--silent', 'brakes', '--', 'list', '--url', `http://127.0.0.1:${port}`],
      {
        ERP_PROXY_KEY: KEYS.operator,
        ERP_PROXY_URL: undefined,
      },
    );
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe(
      `brakes: cannot reach the proxy at http://127.0.0.1:${port}: connection refused: is it running (npm start), and is --url (or ERP_PROXY_URL) its address?\n`,
    );
  }, 120_000);
});
