/**
 * `npm run audit-log -- list` (bin/audit-log.ts) as an operator runs it, against a running proxy
 * whose audit records are kept in an audit table of DynamoDB Local (test/support/state-table.ts,
 * `useAuditTable`): writes through the ERP double (a v2 `create`, a v1 `write`) by a key whose
 * policy lists `audit`, then the CLI, a child process, prints them as a table and as JSON lines,
 * found by `record=` and `actor=` (the pointer items and the actor index), page by page with
 * `--all`; a key without `audit` gets -32008 and exit 1, a filter the proxy refuses exit 2, a proxy
 * that is not there a clear line and exit 1. The key never appears in what the CLI prints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLUMNS } from '../../bin/audit-log.ts';
import { ERP_A_ADMIN_KEY, type ErpDouble, startErpDouble } from '../erp-double/index.ts';
import { freePort, type ProxyHarness, startProxy } from '../support/proxy-harness.ts';
import { type Finished, runToExit } from '../support/scripts.ts';
import { useAuditTable } from '../support/state-table.ts';

const audit = useAuditTable('audit-cli');

const AUDITOR_KEY = 'auditor-key-0123456789abcdef';
const PLAIN_KEY = 'plain-key-0123456789abcdefgh';
const KEYS = JSON.stringify({
  keys: [
    { name: 'auditor', key: AUDITOR_KEY, policy: { apis: ['v1', 'v2', 'audit'] } },
    { name: 'plain', key: PLAIN_KEY, policy: { apis: ['v1', 'v2', 'operator'] } },
  ],
});

let double: ErpDouble;
let proxy: ProxyHarness;
let createdId: number;

/** `npm run -s audit-log -- <args>`, with no ERP_PROXY_* of the test's own environment unless given. */
function auditLog(args: readonly string[], env: Record<string, string> = {}): Promise<Finished> {
  return runToExit('npm', ['run', '--silent', 'audit-log', '--', ...args], {
    ERP_PROXY_KEY: undefined,
    ERP_PROXY_URL: undefined,
    ...env,
  });
}

/** The JSON lines of a `--json` listing. */
function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function expectNoKey(run: Finished): void {
  for (const key of [AUDITOR_KEY, PLAIN_KEY]) {
    expect(run.stdout).not.toContain(key);
    expect(run.stderr).not.toContain(key);
  }
}

beforeAll(async () => {
  double = await startErpDouble({ mode: '19' });
  proxy = await startProxy({ env: { ...audit.env(), PROXY_API_KEY: '', PROXY_API_KEYS: KEYS } });
  const erp = { url: double.url, db: 'erp_a', api_key: ERP_A_ADMIN_KEY, user_id: 2 };
  const created = await proxy.post(
    '/v2/erp/execute',
    {
      id: 'create',
      model_id: 'res.partner',
      method: 'create',
      kwargs: { vals_list: [{ name: 'Audit Log Co' }] },
      erp_instance: erp,
    },
    { 'x-api-key': AUDITOR_KEY },
  );
  expect(created.status, created.text).toBe(200);
  [createdId] = (created.json as { result: number[] }).result as [number];
  const written = await proxy.post(
    '/api/erp/execute',
    {
      id: 'write',
      action: 'write',
      model_id: 'res.partner',
      params: [[createdId], { name: 'Audit Log Co (renamed)' }],
      erp_instance: erp,
    },
    { 'x-api-key': AUDITOR_KEY },
  );
  expect(written.status, written.text).toBe(200);
}, 60_000);

afterAll(async () => {
  await proxy?.close();
  await double?.close();
});

describe('npm run audit-log -- list', () => {
  it('prints the writes as a table, newest first', async () => {
    const run = await auditLog(['list', '--url', proxy.url, '--key', AUDITOR_KEY]);
    expect(run.code, run.stderr).toBe(0);
    expectNoKey(run);
    const [heading, ...lines] = run.stdout.trimEnd().split('\n');
    expect(heading?.split(/\s{2,}/)).toEqual(COLUMNS.map((column) => column.heading));
    expect(lines).toHaveLength(2);
    const [write, create] = lines.map((line) => line.split(/\s{2,}/));
    expect(write).toEqual([
      expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      expect.stringMatching(/^[0-9A-Z]{26}$/),
      'ok',
      'key:auditor uid=2',
      'v1',
      '127.0.0.1/erp_a',
      'res.partner.write',
      String(createdId),
      '-',
    ]);
    expect(create).toEqual([
      expect.any(String),
      expect.any(String),
      'ok',
      'key:auditor uid=2',
      'v2',
      '127.0.0.1/erp_a',
      'res.partner.create',
      `new ${createdId}`,
      '-',
    ]);
    expect((write?.[1] as string) > (create?.[1] as string)).toBe(true);
  }, 60_000);

  it('prints JSON lines, found by record= and actor=, with the key and URL from the environment', async () => {
    const env = { ERP_PROXY_URL: proxy.url, ERP_PROXY_KEY: AUDITOR_KEY };
    const byRecord = await auditLog(['list', '--json', '--record', `res.partner:${createdId}`], env);
    expect(byRecord.code, byRecord.stderr).toBe(0);
    expectNoKey(byRecord);
    const records = jsonLines(byRecord.stdout);
    expect(records.map((record) => record.method)).toEqual(['write', 'create']);
    expect(records[1]).toMatchObject({
      schema: 1,
      api: 'v2',
      actor_id: 'key:auditor',
      model: 'res.partner',
      created_ids: [createdId],
      fields: ['name'],
      outcome: 'ok',
    });
    expect(records[0]).toMatchObject({ api: 'v1', record_ids: [createdId], outcome: 'ok' });

    const byActor = await auditLog(['list', '--json', '--actor', 'auditor', '--since', '1h'], env);
    expect(byActor.code, byActor.stderr).toBe(0);
    expect(jsonLines(byActor.stdout).map((record) => record.audit_id)).toEqual(
      records.map((record) => record.audit_id),
    );
    const none = await auditLog(['list', '--json', '--actor', 'plain'], env);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain('no audit record matches');
  }, 60_000);

  it('--all follows next_cursor page by page, saying so on stderr', async () => {
    const env = { ERP_PROXY_URL: proxy.url, ERP_PROXY_KEY: AUDITOR_KEY };
    const one = await auditLog(['list', '--json', '--limit', '1'], env);
    expect(one.code, one.stderr).toBe(0);
    expect(jsonLines(one.stdout)).toHaveLength(1);
    expect(one.stderr).toMatch(/more records follow: add --all, or --cursor \S+ for the next page/);

    const all = await auditLog(['list', '--json', '--limit', '1', '--all'], env);
    expect(all.code, all.stderr).toBe(0);
    expect(jsonLines(all.stdout).map((record) => record.method)).toEqual(['write', 'create']);
    expect(all.stderr).toContain('audit-log: page 1: 1 records so far, reading on');
    // Pages past the last record may come empty with a cursor (the store reads a quiet window in
    // steps of a bounded number of Queries): --all reads on until the cursor is null.
    expect(all.stderr).toMatch(/\naudit-log: 2 records in \d+ pages\n$/);
  }, 60_000);

  it('a key whose policy does not list audit: -32008 in words, exit 1', async () => {
    const run = await auditLog(['list', '--url', proxy.url, '--key', PLAIN_KEY]);
    expect(run.code).toBe(1);
    expectNoKey(run);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^audit-log: the proxy refused \(HTTP 403 -32008\): .*audit/);
    expect(run.stderr).toContain('the key needs a policy whose apis list "audit"');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('usage and failures: exit 2 for what the proxy refuses as invalid, 1 for a proxy not there', async () => {
    const invalid = await auditLog(['list', '--url', proxy.url, '--key', AUDITOR_KEY, '--outcome', 'nope']);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/HTTP 400 -32600\): GET \/_\/audit: outcome must be one of ok, /);

    const unknown = await auditLog(['list', '--url', proxy.url, `--kye=${AUDITOR_KEY}`]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown option --kye');
    expectNoKey(unknown);

    const port = await freePort();
    const gone = await auditLog(['list', '--url', `http://127.0.0.1:${port}`, '--key', AUDITOR_KEY]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe(
      `audit-log: cannot reach the proxy at http://127.0.0.1:${port}: connection refused: is it running (npm start), and is --url (or ERP_PROXY_URL) its address?\n`,
    );
  }, 60_000);
});
