/**
 * The operators' brakes (docs/operators.md, "Stop an agent now") over real HTTP, as on Lambda: two
 * local proxy processes (two instances) sharing one DynamoDB Local table of their own, against the
 * ERP double. A brake set through one process's `POST /_/brakes` stops, in both, every matching call
 * started `BRAKES_REFRESH` later, and nothing else; release restores; the store frozen (SIGSTOP)
 * keeps the brakes last read; a process that never read them serves without (fail open).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErpProxy, ErpProxyError } from '../../client/src/index.ts';
import type { ErpDouble } from '../erp-double/types.ts';
import {
  createStateTable,
  type DynamoDbLocal,
  startDynamoDbLocal,
  stateTableEnv,
} from '../support/dynamodb-local.ts';
import { type Envelope, USERS, useErpDouble } from '../support/fixtures.ts';
import { erpHeaders, toolError, withMcpClient } from '../support/mcp-client.ts';
import { type ProxyProcess, startProxyProcess, startProxyProcesses } from '../support/proxy-processes.ts';

const admin = USERS.adminA;

const KEYS = {
  operator: 'operator-key-0123456789abcdef',
  agent: 'agent-key-0123456789abcdef',
  other: 'other-key-0123456789abcdef',
  auditor: 'auditor-key-0123456789abcdef',
} as const;

const PROXY_API_KEYS = JSON.stringify({
  keys: [
    { name: 'operator', key: KEYS.operator, policy: { apis: ['brakes', 'operator'] } },
    { name: 'agent', key: KEYS.agent },
    { name: 'other', key: KEYS.other },
    { name: 'auditor', key: KEYS.auditor, policy: { apis: ['audit', 'operator'] } },
  ],
});

/** Seconds each process keeps its copy of the brakes. */
const REFRESH_S = 1;
/** How long after a brake is set every call started is sure to meet it. */
const APPLIED_MS = REFRESH_S * 1000 + 150;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function erpInstance(double: ErpDouble) {
  return { url: double.url, db: 'erp_a', api_key: admin.apiKey, user_id: admin.uid };
}

function v1(proxy: ProxyProcess, double: ErpDouble, key: string, action: string, params: unknown, id = 'b') {
  return proxy.post(
    '/api/erp/execute',
    { id, action, model_id: 'res.partner', params, keyword: {}, erp_instance: erpInstance(double) },
    { 'x-api-key': key },
  );
}
const read = (proxy: ProxyProcess, double: ErpDouble, key: string) =>
  v1(proxy, double, key, 'search_count', [[]]);
const write = (proxy: ProxyProcess, double: ErpDouble, key: string) =>
  v1(proxy, double, key, 'create', [{ name: 'Braked?' }]);
const version = (proxy: ProxyProcess, double: ErpDouble, key: string) =>
  proxy.post('/api/erp/version', { id: 'v', url: double.url }, { 'x-api-key': key });

/** The creates the double received. */
const creates = (double: ErpDouble) =>
  double.requests.filter((request) => request.body.includes('"create"')).length;

interface BrakeAnswer {
  brake: { id: string; set_by: string; set_at: string; reason: string; scope: unknown; mode: string };
}

async function setBrake(
  proxy: ProxyProcess,
  body: unknown,
  key: string = KEYS.operator,
): Promise<BrakeAnswer['brake']> {
  const answer = await proxy.post('/_/brakes', body, { 'x-api-key': key });
  expect(answer.status, answer.text).toBe(200);
  return (answer.json as BrakeAnswer).brake;
}

async function release(proxy: ProxyProcess, id: string): Promise<void> {
  const answer = await proxy.post('/_/brakes/release', { id }, { 'x-api-key': KEYS.operator });
  expect(answer.status, answer.text).toBe(200);
}

async function releaseAll(proxy: ProxyProcess): Promise<void> {
  const listed = await proxy.get('/_/brakes', { 'x-api-key': KEYS.operator });
  for (const brake of (listed.json as { brakes: { id: string }[] }).brakes) await release(proxy, brake.id);
}

function expectStopped(answer: { status: number; json: unknown; headers: Headers }, reason: string): void {
  expect(answer.status).toBe(503);
  const envelope = answer.json as Envelope;
  expect(envelope.error?.code).toBe(-32012);
  expect(envelope.error?.message).toContain(`Stopped by an operator: ${reason}`);
  expect(answer.headers.get('retry-after')).toBeNull();
}

describe('brakes across two processes on one DynamoDB Local table', () => {
  const double = useErpDouble({ mode: '19' });
  let dynamo: DynamoDbLocal | undefined;
  let env: Record<string, string> = {};
  const procs: ProxyProcess[] = [];
  beforeAll(async () => {
    dynamo = await startDynamoDbLocal();
    const table = await createStateTable(dynamo.endpoint, 'brakes');
    env = {
      ...stateTableEnv(dynamo.endpoint, table),
      PROXY_API_KEY: '',
      PROXY_API_KEYS,
      BRAKES_REFRESH: String(REFRESH_S),
      MCP_WRITE_TOOLS: 'true',
    };
    procs.push(...(await startProxyProcesses(2, env)));
  }, 120_000);
  afterAll(async () => {
    dynamo?.resume();
    await Promise.all(procs.map((proc) => proc.stop()));
    await dynamo?.stop();
  });

  it('are set, listed and released only by a key whose policy lists brakes', async () => {
    const [one] = procs as [ProxyProcess];
    for (const key of [KEYS.agent, KEYS.auditor]) {
      const refused = await one.get('/_/brakes', { 'x-api-key': key });
      expect(refused.status).toBe(403);
      expect((refused.json as Envelope).error?.code).toBe(-32008);
      const notSet = await one.post(
        '/_/brakes',
        { scope: 'all', mode: 'all', reason: 'x' },
        { 'x-api-key': key },
      );
      expect(notSet.status).toBe(403);
    }
    const listed = await one.get('/_/brakes', { 'x-api-key': KEYS.operator });
    expect(listed.status).toBe(200);
    expect(listed.json).toEqual({ brakes: [] });
    const bad = await one.post(
      '/_/brakes',
      { scope: { key: 'agent' }, mode: 'some', reason: 'x' },
      { 'x-api-key': KEYS.operator },
    );
    expect(bad.status).toBe(400);
    expect((bad.json as Envelope).error?.message).toContain('mode: expected "writes" or "all"');
  });

  it("a key's writes brake stops that key's writes in both processes after BRAKES_REFRESH; its reads, other keys and release go on", async () => {
    const [one, two] = procs as [ProxyProcess, ProxyProcess];
    // Each process reads the (empty) brakes first, so its copy is fresh when the brake is set.
    await Promise.all([read(one, double, KEYS.agent), read(two, double, KEYS.agent)]);
    const brake = await setBrake(one, {
      scope: { key: 'agent' },
      mode: 'writes',
      reason: 'A loop of\u202e writes\u0007 to partners.',
    });
    expect(brake).toMatchObject({ set_by: 'operator', mode: 'writes', scope: { key: 'agent' } });
    expect(brake.reason).toBe('A loop of writes to partners.');
    expect(brake.id).toMatch(/^brk_[0-9a-f]{16}$/);
    await sleep(APPLIED_MS);
    double.reset();
    for (const proc of [one, two]) {
      expectStopped(await write(proc, double, KEYS.agent), 'A loop of writes to partners.');
      expect((await read(proc, double, KEYS.agent)).status).toBe(200);
      expect((await write(proc, double, KEYS.other)).status).toBe(200);
      // A version call only reads.
      expect((await version(proc, double, KEYS.agent)).status).toBe(200);
    }
    // Only the other key's two creates reached the ERP.
    expect(creates(double)).toBe(2);
    // The stopped write is audited: refused by the brake, never counted or sent.
    const audit = await one.get('/_/audit?outcome=refused', { 'x-api-key': KEYS.auditor });
    expect(audit.status, audit.text).toBe(200);
    const records = (audit.json as { records: { actor: string; error?: { code?: number; rule?: string } }[] })
      .records;
    expect(records.find((record) => record.error?.rule === 'brake')).toMatchObject({
      error: { code: -32012, rule: 'brake' },
    });
    expect(one.output()).toContain(`"brake_id":"${brake.id}"`);

    const about = await one.get('/_/about');
    expect((about.json as { brakes_in_force: number }).brakes_in_force).toBe(1);
    expect(about.text).not.toContain('A loop of writes');

    await release(two, brake.id);
    await sleep(APPLIED_MS);
    for (const proc of [one, two]) expect((await write(proc, double, KEYS.agent)).status).toBe(200);
  });

  it('a key braked all is refused on every route right after its key check, the version route and /mcp included', async () => {
    const [one, two] = procs as [ProxyProcess, ProxyProcess];
    const brake = await setBrake(two, { scope: { key: 'agent' }, mode: 'all', reason: 'Revoked.' });
    await sleep(APPLIED_MS);
    for (const proc of [one, two]) {
      expectStopped(await read(proc, double, KEYS.agent), 'Revoked.');
      expectStopped(await version(proc, double, KEYS.agent), 'Revoked.');
      // Refused before the body is read: a body that is not JSON is not looked at.
      expectStopped(await proc.post('/api/erp/execute', 'not json', { 'x-api-key': KEYS.agent }), 'Revoked.');
      expect((await read(proc, double, KEYS.other)).status).toBe(200);
    }
    const mcp = await one.post(
      '/mcp',
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { 'x-api-key': KEYS.agent, accept: 'application/json, text/event-stream' },
    );
    expect(mcp.status).toBe(503);
    expect((mcp.json as Envelope).error?.code).toBe(-32012);
    await release(one, brake.id);
  });

  it('an ERP brake stops every call to that ERP, version calls included, for every key', async () => {
    const [one, two] = procs as [ProxyProcess, ProxyProcess];
    const host = new URL(double.url).hostname;
    const brake = await setBrake(one, { scope: { erp: host }, mode: 'all', reason: 'ERP maintenance.' });
    expect(brake.scope).toEqual({ erp: host });
    await sleep(APPLIED_MS);
    double.reset();
    // Another name of the same ERP: `localhost`, which resolves to the braked address.
    const byName = { ...double, url: double.url.replace(host, 'localhost') } as ErpDouble;
    for (const proc of [one, two]) {
      expectStopped(await read(proc, double, KEYS.other), 'ERP maintenance.');
      expectStopped(await version(proc, double, KEYS.other), 'ERP maintenance.');
      expectStopped(await read(proc, byName, KEYS.other), 'ERP maintenance.');
      expectStopped(await version(proc, byName, KEYS.other), 'ERP maintenance.');
    }
    expect(double.requests).toHaveLength(0);
    await release(two, brake.id);
  });

  it('a writes brake for every caller: an MCP write tool gets a tool error advising to tell the user, and the typed client does not retry -32012', async () => {
    const [one] = procs as [ProxyProcess];
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const brake = await setBrake(one, { scope: 'all', mode: 'writes', reason: 'Incident 42.' });
    const expiring = await setBrake(one, {
      scope: { key: 'other' },
      mode: 'writes',
      reason: 'Until the import ends.',
      expires: until,
    });
    await sleep(APPLIED_MS);
    double.reset();
    await withMcpClient(
      one.url,
      {
        'x-api-key': KEYS.agent,
        ...erpHeaders({ url: double.url, db: 'erp_a', apiKey: admin.apiKey, uid: admin.uid }),
      },
      async (client) => {
        const result = await client.callTool({
          name: 'create',
          arguments: { model: 'res.partner', values: { name: 'No' } },
        });
        const error = toolError(result) as ReturnType<typeof toolError> & Record<string, unknown>;
        expect(error).toMatchObject({
          source: 'proxy',
          code: -32012,
          retry_safe: true,
          retry_can_help: false,
        });
        expect(String(error.message)).toContain('Incident 42.');
        const reading = await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } });
        expect((reading as { isError?: boolean }).isError ?? false).toBe(false);
      },
    );
    expect(creates(double)).toBe(0);

    const refusedLines = () =>
      one
        .output()
        .split('\n')
        .filter((line) => line.includes('"error_code":-32012') && line.includes('"caller":"agent"')).length;
    const before = refusedLines();
    const erp = new ErpProxy({ url: one.url, apiKey: KEYS.agent, retries: 3 });
    const connection = erp.erp({ url: double.url, db: 'erp_a', userId: admin.uid, apiKey: admin.apiKey });
    const started = Date.now();
    const thrown = await connection.create('res.partner', { name: 'No' }).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(ErpProxyError);
    expect((thrown as ErpProxyError).code).toBe(-32012);
    expect((thrown as ErpProxyError).retryable).toBe(false);
    expect(Date.now() - started).toBeLessThan(5_000);
    // Sent once: one more refused request line in the log.
    expect(refusedLines() - before).toBe(1);

    // While a brake without an expiry stops it too, no Retry-After; then the expiring one's.
    expectStopped(await write(one, double, KEYS.other), 'Incident 42.');
    await release(one, brake.id);
    await sleep(APPLIED_MS);
    const answer = await write(one, double, KEYS.other);
    expect((answer.json as Envelope).error?.message).toContain('Until the import ends.');
    expect(answer.status).toBe(503);
    const retryAfter = Number(answer.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3_500);
    expect(retryAfter).toBeLessThanOrEqual(3_600);
    await release(one, expiring.id);
  });

  it('the store frozen: each process keeps the brakes it last read; a process that never read them serves without', async () => {
    const [one, two] = procs as [ProxyProcess, ProxyProcess];
    const store = dynamo as DynamoDbLocal;
    const brake = await setBrake(one, { scope: { key: 'agent' }, mode: 'writes', reason: 'Kept.' });
    await sleep(APPLIED_MS);
    for (const proc of [one, two]) expectStopped(await write(proc, double, KEYS.agent), 'Kept.');
    store.pause();
    let late: ProxyProcess | undefined;
    try {
      await sleep(APPLIED_MS);
      for (const proc of [one, two]) {
        const started = Date.now();
        expectStopped(await write(proc, double, KEYS.agent), 'Kept.');
        // The read's own time limit, not the client's budget.
        expect(Date.now() - started).toBeLessThan(2_500);
        expect(proc.output()).toContain(
          'brakes: the store could not be read; the brakes last read stay in force',
        );
      }
      late = await startProxyProcess(env);
      // Fail open: the brake it could not read is not applied (the audit's own record, with
      // AUDIT=on, is what refuses this write: the same store is frozen).
      const answer = await read(late, double, KEYS.agent);
      expect(answer.status).toBe(200);
      expect(late.output()).toContain('serving without (fail open)');
    } finally {
      store.resume();
      await late?.stop();
    }
    await release(one, brake.id);
  });

  it('clean-up', async () => {
    await releaseAll(procs[0] as ProxyProcess);
  });
});
