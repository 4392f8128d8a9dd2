/**
 * Sealing with DynamoDB Local, two proxy processes (`bin/serve.ts`, as two Lambda instances and
 * two sealers would) and their in-process sealers sharing one audit table and one `AUDIT_DIR`
 * (issue 57, "How it is checked"): writes in flight across a window's end are each sealed exactly
 * once; the two sealers, started together and racing at every tick, seal each window once (the
 * seal head's condition); `npm run audit-log -- verify --table` holds the table against the sealed
 * copies and names a record edited in the table after sealing.
 *
 * Real time: windows of 1 minute and `AUDIT_PENDING_AFTER` 5 s, so a window is sealed about 35 s
 * after its end (a sealer looks every 15 s). The test waits for a minute's end, writes across it,
 * and waits for the window after it to be sealed: one to three minutes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAuditLog } from '../../bin/audit-log.ts';
import { DynamoDbAuditReader } from '../../lambdas/platform/audit/audit-reader-dynamodb.ts';
import { type AuditRecord, recordPartition } from '../../lambdas/platform/audit/audit-record.ts';
import { linesOf, recordsKey, sealKey, sealOfBody } from '../../lambdas/platform/audit/seal-layout.ts';
import { localClient } from '../support/dynamodb-local.ts';
import { type Envelope, USERS, useErpDouble } from '../support/fixtures.ts';
import { type ProxyProcess, startProxyProcesses } from '../support/proxy-processes.ts';
import { useAuditTable, useStateTable } from '../support/state-table.ts';
import { TEST_PROXY_KEY } from '../support/test-secrets.ts';

const MINUTE = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

describe('two proxy processes sealing one audit table', () => {
  const double = useErpDouble({ mode: '19' });
  const state = useStateTable('seal-procs');
  const audit = useAuditTable('seal-procs');
  let dir: string;
  let procs: ProxyProcess[] = [];
  const env = () => ({
    ...state.env(),
    ...audit.env(),
    AUDIT_DIGEST_KEY: 'a-digest-key-the-processes-share-0123456789',
    AUDIT_PENDING_AFTER: '5',
    AUDIT_SEALING: 'compliance',
    AUDIT_SEAL_MINUTES: '1',
    AUDIT_DIR: join(dir, 'audit'),
    AUDIT_SEAL_KEY_FILE: join(dir, 'key', 'seal-key.pem'),
  });
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'erp-proxy-seal-'));
    procs = await startProxyProcesses(2, env());
  }, 60_000);
  afterAll(async () => {
    await Promise.all(procs.map((proc) => proc.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  /** Creates partners through `proc` until `until`; the ids created. */
  async function writeUntil(proc: ProxyProcess, until: number, tag: string): Promise<number[]> {
    const ids: number[] = [];
    for (let i = 0; Date.now() < until; i += 1) {
      const answer = await proc.post(
        '/v2/erp/execute',
        {
          id: `${tag}-${i}`,
          erp_instance: { url: double.url, db: 'erp_a', api_key: USERS.adminA.apiKey },
          model_id: 'res.partner',
          method: 'create',
          kwargs: { vals_list: [{ name: `Sealed ${tag} ${i}` }] },
        },
        { 'x-api-key': TEST_PROXY_KEY },
      );
      expect(answer.status, JSON.stringify(answer.json)).toBe(200);
      ids.push(...((answer.json as Envelope).result as number[]));
    }
    return ids;
  }

  async function sealedLines(root: string, from: number, to: number): Promise<string[]> {
    const lines: string[] = [];
    for (let start = from; start < to; start += MINUTE) {
      const body = await readFile(join(root, ...sealKey(start).split('/')));
      const held = sealOfBody(body);
      if (held === undefined) throw new Error(`seal of ${start} does not read`);
      if (held.seal.count === 0) continue;
      const records = await readFile(join(root, ...recordsKey(start).split('/')));
      lines.push(...linesOf(records));
    }
    return lines;
  }

  async function waitForSeal(root: string, start: number, deadline: number): Promise<void> {
    const path = join(root, ...sealKey(start).split('/'));
    while (Date.now() < deadline) {
      try {
        await readFile(path);
        return;
      } catch {
        await sleep(1_000);
      }
    }
    throw new Error(
      `window ${new Date(start).toISOString()} was not sealed in time:\n${procs.map((p) => p.output()).join('\n')}`,
    );
  }

  it('seals each write in flight across a window end exactly once, each window once, and verify --table names a record edited after', async () => {
    const [a, b] = procs as [ProxyProcess, ProxyProcess];
    // The next minute's end at least 2 s away; write from 1.5 s before it to 1.5 s after it.
    const boundary = Math.ceil((Date.now() + 2_000) / MINUTE) * MINUTE;
    await sleep(boundary - 1_500 - Date.now());
    const written = (
      await Promise.all([writeUntil(a, boundary + 1_500, 'a'), writeUntil(b, boundary + 1_500, 'b')])
    ).flat();
    const root = join(dir, 'audit');
    // The window after the boundary: closed 35 s after its end, sealed at the next tick (15 s).
    await waitForSeal(root, boundary, boundary + MINUTE + 35_000 + 15_000 + 60_000);

    const seals = (await readdir(join(root, 'seals'), { recursive: true })).filter((name) =>
      name.endsWith('.json'),
    );
    // Every sealed window from the first to the boundary's, each with its records.
    const windowStarts: number[] = [];
    for (const name of seals) {
      const held = sealOfBody(await readFile(join(root, 'seals', name)));
      if (held !== undefined) windowStarts.push(Date.parse(held.seal.window_start));
    }
    const from = Math.min(...windowStarts);
    expect(new Set(windowStarts).size).toBe(windowStarts.length);
    const lines = await sealedLines(root, from, boundary + MINUTE);
    const sealed = lines.map((line) => JSON.parse(line) as AuditRecord);
    const ids = sealed.map((record) => record.audit_id);
    // Exactly once: no record twice, every write's record there, created ids matching the answers.
    expect(new Set(ids).size).toBe(ids.length);
    const created = sealed.flatMap((record) => record.created_ids ?? []).sort((x, y) => x - y);
    expect(created).toEqual([...written].sort((x, y) => x - y));
    expect(sealed.every((record) => record.outcome === 'ok')).toBe(true);
    expect(sealed.some((record) => Date.parse(record.time) < boundary)).toBe(true);
    expect(sealed.some((record) => Date.parse(record.time) >= boundary)).toBe(true);
    // The table holds the same records, no more.
    const reader = new DynamoDbAuditReader(localClient(audit.endpoint), audit.table);
    const live = [
      ...(await reader.readWindow(from, boundary)),
      ...(await reader.readWindow(boundary, boundary + MINUTE)),
    ];
    expect(live.map((record) => record.audit_id).sort()).toEqual([...ids].sort());

    const verify = async () => {
      let out = '';
      const code = await runAuditLog(
        [
          'verify',
          '--dir',
          root,
          '--from',
          new Date(from).toISOString(),
          '--to',
          new Date(boundary + MINUTE).toISOString(),
          '--table',
          audit.table,
          '--retention-days',
          '400',
        ],
        {
          env: { ...env() },
          io: {
            stdout: { write: (text: string) => (out += text) },
            stderr: { write: (text: string) => (out += text) },
          },
        },
      );
      return { code, out };
    };
    const clean = await verify();
    expect(clean.code, clean.out).toBe(0);
    expect(clean.out).toContain(`${ids.length} records held against the table; 0 problem(s)`);

    // An administrator edits a sealed record in the table.
    const victim = sealed[0] as AuditRecord;
    await localClient(audit.endpoint).send('UpdateItem', {
      TableName: audit.table,
      Key: { pk: { S: recordPartition(victim.audit_id) }, sk: { S: victim.audit_id } },
      UpdateExpression: 'SET rec = :rec',
      ExpressionAttributeValues: { ':rec': { S: JSON.stringify({ ...victim, method: 'read' }) } },
    });
    const tampered = await verify();
    expect(tampered.code).toBe(1);
    expect(tampered.out).toContain(`record ${victim.audit_id} was edited in the table after sealing`);
    // Neither sealer failed.
    for (const proc of procs) expect(proc.output()).not.toMatch(/"level":"ERROR"/);
  }, 300_000);
});
