/**
 * `npm run state:local` (bin/state-local.ts) as a new user runs it: it starts DynamoDB Local with
 * the state table and the audit table (its keys, actor index and TTL from `AUDIT_TABLE`) and prints
 * the settings for `npm start` as `NAME=value` lines; `npm start` with exactly those settings keeps
 * its idempotency records there (a keyed write runs once against the ERP double and is replayed)
 * and its audit records in the audit table; killing npm's own pid stops DynamoDB Local (the Java
 * child) too.
 * Each npm runs in a process group of its own, killed whole at the end, so a failure leaves
 * nothing behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  portArgument,
  STATE_LOCAL_AUDIT_TABLE,
  STATE_LOCAL_DEFAULT_PORT,
  STATE_LOCAL_TABLE,
} from '../../bin/state-local.ts';
import {
  AUDIT_SHARDS,
  AUDIT_TABLE,
  type AuditRecord,
  auditDay,
  dayPartition,
} from '../../lambdas/platform/audit/audit-record.ts';
import { recordOfItem } from '../../lambdas/platform/audit/audit-store-dynamodb.ts';
import type { Item } from '../../lambdas/platform/aws/dynamodb-client.ts';
import { ERP_A_ADMIN_KEY, type ErpDouble, startErpDouble } from '../erp-double/index.ts';
import { localClient } from '../support/dynamodb-local.ts';
import { freePort } from '../support/proxy-harness.ts';
import { eventually } from '../support/scripts.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const PROXY_KEY = 'state-local-test-key-0123';

interface NpmRun {
  readonly child: ChildProcess;
  stdout: string;
  stderr: string;
}

const runs: NpmRun[] = [];

/** `npm <args>` in a process group of its own; resolves once `ready` matches its stdout. */
function npm(args: readonly string[], env: Record<string, string>, ready: RegExp): Promise<NpmRun> {
  const child = spawn('npm', [...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const run: NpmRun = { child, stdout: '', stderr: '' };
  runs.push(run);
  child.stderr?.on('data', (chunk: Buffer) => (run.stderr += chunk.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      run.stdout += chunk.toString('utf8');
      if (ready.test(run.stdout)) resolve(run);
    });
    child.once('exit', (code) =>
      reject(new Error(`npm ${args.join(' ')} exited (${code}) before it was ready:\n${run.stderr}`)),
    );
  });
}

/** The `NAME=value` lines of a text. */
function settingsOf(text: string): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (match?.[1] !== undefined) settings[match[1]] = match[2] ?? '';
  }
  return settings;
}

/** Whether DynamoDB Local answers at `endpoint` (any HTTP answer counts). */
async function answers(endpoint: string): Promise<boolean> {
  try {
    await fetch(endpoint, { signal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  }
}

/** The audit records of the UTC days of `times` in `table` (one Query per shard and day). */
async function auditRecords(
  endpoint: string,
  table: string,
  times: readonly number[],
): Promise<AuditRecord[]> {
  const client = localClient(endpoint);
  const records: AuditRecord[] = [];
  for (const day of new Set(times.map(auditDay))) {
    for (let shard = 0; shard < AUDIT_SHARDS; shard += 1) {
      const answer = await client.send('Query', {
        TableName: table,
        KeyConditionExpression: '#p = :p',
        ExpressionAttributeNames: { '#p': AUDIT_TABLE.partitionKey },
        ExpressionAttributeValues: { ':p': { S: dayPartition(day, shard) } },
        ConsistentRead: true,
      });
      for (const item of (answer.Items as Item[] | undefined) ?? []) {
        const record = recordOfItem(item);
        if (record !== undefined) records.push(record);
      }
    }
  }
  return records.sort((a, b) => (a.audit_id < b.audit_id ? -1 : 1));
}

let double: ErpDouble;

beforeAll(async () => {
  double = await startErpDouble({ mode: '19' });
});

afterAll(async () => {
  for (const { child } of runs) {
    if (child.pid === undefined) continue;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  await double?.close();
});

describe('npm run state:local', () => {
  it('reads --port: DynamoDB Local default 8000, 0 for a free one, anything else refused', () => {
    expect(portArgument([])).toBe(STATE_LOCAL_DEFAULT_PORT);
    expect(portArgument(['--port', '0'])).toBe(0);
    expect(portArgument(['--port', '8123'])).toBe(8123);
    expect(() => portArgument(['--port', 'x'])).toThrow(/--port: expected a port number/);
    expect(() => portArgument(['--port', '70000'])).toThrow(/--port: expected a port number/);
  });

  it('prints the settings npm start keeps its records with, and stops with its npm process', async () => {
    const state = await npm(['run', '--silent', 'state:local', '--', '--port', '0'], {}, /AWS_REGION=.*\n/);
    const settings = settingsOf(state.stdout);
    expect(Object.keys(settings).sort()).toEqual([
      'AUDIT_TABLE',
      'AWS_ACCESS_KEY_ID',
      'AWS_ENDPOINT_URL_DYNAMODB',
      'AWS_REGION',
      'AWS_SECRET_ACCESS_KEY',
      'STATE_TABLE',
    ]);
    expect(settings.STATE_TABLE).toBe(STATE_LOCAL_TABLE);
    expect(settings.AUDIT_TABLE).toBe(STATE_LOCAL_AUDIT_TABLE);
    const endpoint = settings.AWS_ENDPOINT_URL_DYNAMODB as string;
    expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    // The audit table as the stack makes it: its keys, the actor index, the TTL.
    const client = localClient(endpoint);
    const { partitionKey, sortKey, actorIndex, actorAttribute, ttlAttribute } = AUDIT_TABLE;
    const { Table: described } = (await client.send('DescribeTable', {
      TableName: STATE_LOCAL_AUDIT_TABLE,
    })) as {
      Table: Record<string, unknown>;
    };
    expect(described.KeySchema).toEqual([
      { AttributeName: partitionKey, KeyType: 'HASH' },
      { AttributeName: sortKey, KeyType: 'RANGE' },
    ]);
    expect(described.GlobalSecondaryIndexes).toEqual([
      expect.objectContaining({
        IndexName: actorIndex,
        KeySchema: [
          { AttributeName: actorAttribute, KeyType: 'HASH' },
          { AttributeName: sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      }),
    ]);
    expect(await client.send('DescribeTimeToLive', { TableName: STATE_LOCAL_AUDIT_TABLE })).toEqual({
      TimeToLiveDescription: { AttributeName: ttlAttribute, TimeToLiveStatus: 'ENABLED' },
    });
    const before = Date.now();

    const port = await freePort();
    const proxy = await npm(
      ['start', '--silent'],
      { ...settings, PORT: String(port), HOST: '127.0.0.1', PROXY_API_KEY: PROXY_KEY },
      /_\/about\n/,
    );
    expect(proxy.stdout).toContain(`erp-proxy listening on http://127.0.0.1:${port}`);
    const base = `http://127.0.0.1:${port}`;
    const about = (await (await fetch(`${base}/_/about`)).json()) as { state_store: string };
    expect(about.state_store).toBe('dynamodb');

    const write = (id: string) =>
      fetch(`${base}/api/erp/execute`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': PROXY_KEY,
          'idempotency-key': 'state-local-1',
        },
        body: JSON.stringify({
          id,
          action: 'create',
          model_id: 'res.partner',
          params: [{ name: 'State Local Co' }],
          erp_instance: { url: double.url, db: 'erp_a', user_id: 2, api_key: ERP_A_ADMIN_KEY },
        }),
      });
    const first = await write('first');
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const created = (await first.json()) as { result: unknown; error: unknown };
    expect(created.error).toBeNull();
    expect(typeof created.result).toBe('number');
    const creates = () =>
      double.requests.filter((request) => JSON.stringify(request).includes('State Local Co'));
    const ran = creates().length;
    expect(ran).toBeGreaterThan(0);

    const replay = await write('again');
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.json()).toEqual({ ...created, id: 'again' });
    expect(creates()).toHaveLength(ran);

    // Each call's audit record is in the audit table: the run, then its replay naming it.
    const audited = await auditRecords(endpoint, STATE_LOCAL_AUDIT_TABLE, [before, Date.now()]);
    expect(audited.map(({ model, method, outcome }) => ({ model, method, outcome }))).toEqual([
      { model: 'res.partner', method: 'create', outcome: 'ok' },
      { model: 'res.partner', method: 'create', outcome: 'replayed' },
    ]);
    expect(audited[0]?.created_ids).toEqual([created.result]);
    expect(audited[1]?.replay_of).toBe(audited[0]?.audit_id);

    // npm's own pid only: its shell ends without passing the signal on; the script sees it go.
    process.kill(state.child.pid as number, 'SIGTERM');
    expect(
      await eventually(async () => !(await answers(endpoint)), 80, 250),
      'DynamoDB Local still answers',
    ).toBe(true);
  }, 120_000);
});
