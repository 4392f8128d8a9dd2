/**
 * The audit of every write (issue 56; docs/guide/audit.md), over real HTTP: the local proxy in
 * front of the ERP double, with the embedded audit ring, read back through `GET /_/audit` by a key
 * whose policy lists `audit`. Each outcome of a write gives exactly one record, with who, where,
 * what (ids, field names, a values digest, never the values) and how it ended; a confirmed MCP
 * write through the official client leaves an `asked` record and the answer's record naming the
 * same confirmation and form; reads are not audited; a key without `audit` is refused.
 */

import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../lambdas/platform/audit/audit-record.ts';
import { type ErpDouble, startErpDouble } from '../erp-double/index.ts';
import { logLinesDuring } from '../support/captured-output.ts';
import { type Envelope, USERS, useErpDouble, useProxy, withProxy } from '../support/fixtures.ts';
import { erpHeaders, withConfirmingClient, withMcpClient } from '../support/mcp-client.ts';
import { freePort, type ProxyHarness } from '../support/proxy-harness.ts';
import { startSilentServer } from '../support/silent-endpoint.ts';
import { useAuditTable } from '../support/state-table.ts';

const admin = USERS.adminA;
const KEYS = {
  writer: 'audit-writer-key-0123456789abcdef',
  reader: 'audit-reader-key-0123456789abcdef',
  auditor: 'audit-auditor-key-0123456789abcdef',
  confirming: 'audit-confirm-key-0123456789abcdef',
  open: 'audit-open-key-0123456789abcdefghij',
  operator: 'audit-operator-key-0123456789abcdef',
} as const;
const AUDIT_KEYS_ENV = {
  PROXY_API_KEY: '',
  PROXY_API_KEYS: JSON.stringify({
    keys: [
      { name: 'writer', key: KEYS.writer },
      { name: 'reader', key: KEYS.reader, policy: { access: 'read' } },
      { name: 'auditor', key: KEYS.auditor, policy: { apis: ['audit'] } },
      { name: 'confirming', key: KEYS.confirming, policy: { confirm: 'writes' } },
      { name: 'open', key: KEYS.open, policy: { access: 'write' } },
      { name: 'operator', key: KEYS.operator, policy: { apis: ['operator'] } },
    ],
  }),
  MCP_WRITE_TOOLS: 'true',
  MAX_RESPONSE_BYTES: String(64 * 1024),
};

/** The records `GET /_/audit` answers for `query`, as the auditor. */
async function audit(proxy: ProxyHarness, query: string): Promise<AuditRecord[]> {
  const answer = await proxy.get(`/_/audit?${query}`, { 'x-api-key': KEYS.auditor });
  expect(answer.status, JSON.stringify(answer.json)).toBe(200);
  return (answer.json as { records: AuditRecord[] }).records;
}

/** The one record whose id the call's log line named. */
async function recordOf(proxy: ProxyHarness, auditId: string): Promise<AuditRecord> {
  const records = (await audit(proxy, 'limit=1000')).filter((record) => record.audit_id === auditId);
  expect(records).toHaveLength(1);
  return records[0] as AuditRecord;
}

/** Runs `call` and returns its answer with the proxy's request log line. */
async function logged<T>(
  call: () => Promise<T>,
): Promise<{ answer: T; line: Record<string, unknown> | undefined }> {
  let answer: T | undefined;
  const lines = await logLinesDuring(async () => {
    answer = await call();
  });
  const line = lines
    .map((text) => JSON.parse(text) as Record<string, unknown>)
    .find((entry) => entry.message === 'request');
  return { answer: answer as T, line };
}

/** An HTTP server that answers every request with a JSON string of `bytes` bytes. */
async function largeAnswerServer(bytes: number): Promise<{ url: string; close(): Promise<void> }> {
  const { createServer: createHttpServer } = await import('node:http');
  const server = createHttpServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify('x'.repeat(bytes)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Each outcome against both stores: the embedded ring of `npm start`, and the audit table on
 * DynamoDB Local (its conditions, its Queries and pointer items).
 */
for (const store of ['embedded ring', 'DynamoDB Local'] as const) {
  const table = store === 'DynamoDB Local' ? useAuditTable('audit-outcomes') : undefined;
  /** The proxy's settings; the table's are read when the proxy starts (after the table is created). */
  const storeEnv = (): Record<string, string> =>
    table === undefined
      ? AUDIT_KEYS_ENV
      : Object.defineProperties(
          { ...AUDIT_KEYS_ENV },
          {
            AUDIT_TABLE: { enumerable: true, get: () => table.env().AUDIT_TABLE },
            AWS_ENDPOINT_URL_DYNAMODB: { enumerable: true, get: () => table.env().AWS_ENDPOINT_URL_DYNAMODB },
            AWS_ACCESS_KEY_ID: { enumerable: true, get: () => table.env().AWS_ACCESS_KEY_ID },
            AWS_SECRET_ACCESS_KEY: { enumerable: true, get: () => table.env().AWS_SECRET_ACCESS_KEY },
            AWS_REGION: { enumerable: true, get: () => table.env().AWS_REGION },
          },
        );

  describe(`the audit of execute calls (${store})`, () => {
    const double = useErpDouble({ mode: '19' });
    const proxy = useProxy({ env: storeEnv() });
    const instance = (url = double.url) => ({ url, db: 'erp_a', api_key: admin.apiKey });
    /** A v2 call as `key`; its answer and its log line's audit id. */
    const v2 = async (key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
      const { answer, line } = await logged(() =>
        proxy.post(
          '/v2/erp/execute',
          { id: 'a', erp_instance: instance(), ...body },
          { 'x-api-key': key, ...headers },
        ),
      );
      return { answer, envelope: answer.json as Envelope, auditId: line?.audit_id as string | null, line };
    };

    it('keeps its records where this variant says', async () => {
      const about = (await proxy.get('/_/about')).json as { audit: { store: string } };
      expect(about.audit.store).toBe(table === undefined ? 'embedded' : 'dynamodb');
    });

    it('a create: one record, ok, with the created id, the field names and a digest of the values, never the values', async () => {
      const { envelope, auditId } = await v2(KEYS.writer, {
        model_id: 'res.partner',
        method: 'create',
        kwargs: { vals_list: [{ name: 'Audited Ltd', email: 'secret-mail@example.com' }] },
      });
      expect(auditId).toMatch(/^[0-9A-Z]{26}$/);
      const record = await recordOf(proxy, auditId as string);
      const created = (envelope.result as number[])[0];
      expect(record).toMatchObject({
        schema: 1,
        api: 'v2',
        actor_id: 'key:writer',
        actor: { key: 'writer' },
        erp: { host: '127.0.0.1', db: 'erp_a', scheme: 'http' },
        model: 'res.partner',
        method: 'create',
        created_ids: [created],
        fields: ['name', 'email'],
        outcome: 'ok',
      });
      expect(record.values_digest).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(record.digest_key_id).toMatch(/^[0-9a-f]{16}$/);
      expect(record.actor.erp_key_digest).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(record.request_id).toBeTypeOf('string');
      expect(record.duration_ms).toBeGreaterThanOrEqual(0);
      const text = JSON.stringify(record);
      expect(text).not.toContain('secret-mail');
      expect(text).not.toContain('Audited Ltd');
      expect(text).not.toContain(admin.apiKey);
      // Found again by the record it created, and by its actor.
      expect((await audit(proxy, `record=res.partner:${created}`)).map((r) => r.audit_id)).toContain(auditId);
      expect((await audit(proxy, 'actor=writer&model=res.partner')).map((r) => r.audit_id)).toContain(
        auditId,
      );
    });

    it('a v1 write names its ids (params[0]) and the user id, and the same values give the same digest', async () => {
      const body = (id: number) => ({
        id: 'w',
        erp_instance: { ...instance(), user_id: admin.uid },
        action: 'write',
        model_id: 'res.partner',
        params: [[id], { comment: 'x', ref: 1.0 }],
      });
      const ids: string[] = [];
      for (const id of [3, 4]) {
        const { answer, line } = await logged(() =>
          proxy.post('/api/erp/execute', body(id), { 'x-api-key': KEYS.writer }),
        );
        expect(answer.status).toBe(200);
        ids.push(line?.audit_id as string);
      }
      const [three, four] = await Promise.all(ids.map((id) => recordOf(proxy, id)));
      expect(three).toMatchObject({
        api: 'v1',
        method: 'write',
        record_ids: [3],
        fields: ['comment', 'ref'],
      });
      expect(three?.actor).toMatchObject({ erp_user: admin.uid });
      // The user id is the one the call names; the key's HMAC says which key it really was.
      expect(three?.actor.erp_key_digest).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(four?.record_ids).toEqual([4]);
      expect(three?.values_digest).toBe(four?.values_digest);
      expect(three?.record_ids_digest).not.toBe(four?.record_ids_digest);
    });

    it("the ERP's refusal: erp_error, with its code and exception name", async () => {
      const { auditId } = await v2(KEYS.writer, {
        model_id: 'res.partner',
        method: 'unlink',
        kwargs: { ids: [999_999] },
      });
      const record = await recordOf(proxy, auditId as string);
      expect(record.outcome).toBe('erp_error');
      expect(record.error?.name).toMatch(/^odoo\./);
      expect(record.record_ids).toEqual([999_999]);
    });

    it('a refusal of the policy: refused, with its rule; a read is not audited', async () => {
      const refused = await v2(KEYS.reader, {
        model_id: 'res.partner',
        method: 'unlink',
        kwargs: { ids: [5] },
      });
      expect(refused.envelope.error?.code).toBe(-32008);
      const record = await recordOf(proxy, refused.auditId as string);
      expect(record).toMatchObject({
        outcome: 'refused',
        error: { code: -32008, rule: 'access' },
        record_ids: [5],
      });
      expect(record.policy).toMatchObject({ name: 'reader' });
      expect(record.policy?.digest).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const read = await v2(KEYS.writer, {
        model_id: 'res.partner',
        method: 'search_count',
        kwargs: { domain: [] },
      });
      expect(read.answer.status).toBe(200);
      expect(read.line).toBeDefined();
      expect(read.auditId ?? null).toBeNull();
    });

    it('a write naming a thousand long field names: its record is kept within 16 KB, counted, never refused for its size', async () => {
      const vals = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`f${i}_${'x'.repeat(95)}`, i]));
      const { answer, auditId } = await v2(KEYS.writer, {
        model_id: 'res.partner',
        method: 'write',
        kwargs: { ids: [1], vals },
      });
      expect(answer.status).not.toBe(503);
      const record = await recordOf(proxy, auditId as string);
      expect(record.fields_count).toBe(1000);
      expect((record.fields ?? []).length).toBeLessThan(1000);
      expect(Buffer.byteLength(JSON.stringify(record))).toBeLessThanOrEqual(16 * 1024);
    });

    it('a replay names the record of the run it replays; a conflict is refused', async () => {
      const body = { model_id: 'res.partner', method: 'create', kwargs: { vals_list: [{ name: 'Once' }] } };
      const first = await v2(KEYS.writer, body, { 'idempotency-key': 'audit-once-1' });
      const again = await v2(KEYS.writer, body, { 'idempotency-key': 'audit-once-1' });
      expect(again.answer.headers.get('idempotent-replayed')).toBe('true');
      const conflict = await v2(
        KEYS.writer,
        { ...body, kwargs: { vals_list: [{ name: 'Other' }] } },
        { 'idempotency-key': 'audit-once-1' },
      );
      const [run, replay, refused] = await Promise.all(
        [first, again, conflict].map((call) => recordOf(proxy, call.auditId as string)),
      );
      expect(run).toMatchObject({ outcome: 'ok', idempotency: { did: 'first_run' } });
      expect(replay).toMatchObject({
        outcome: 'replayed',
        replay_of: run?.audit_id,
        idempotency: { did: 'replay' },
      });
      expect(replay?.idempotency?.key_digest).toBe(run?.idempotency?.key_digest);
      expect(refused).toMatchObject({
        outcome: 'refused',
        error: { code: -32011, rule: 'idempotency_conflict' },
      });
    });

    it('an ERP that cannot be reached: not_run; one that never answers: unknown; an answer too large: ran', async () => {
      const closed = await freePort();
      const unreachable = await proxy.post(
        '/v2/erp/execute',
        {
          id: 'c',
          erp_instance: instance(`http://127.0.0.1:${closed}`),
          model_id: 'res.partner',
          method: 'write',
          kwargs: { ids: [1], vals: { name: 'x' } },
        },
        { 'x-api-key': KEYS.writer },
      );
      expect((unreachable.json as Envelope).error?.code).toBe(-32004);
      const silent = await startSilentServer();
      try {
        const hung = await proxy.post(
          '/v2/erp/execute',
          {
            id: 's',
            erp_instance: instance(silent.url),
            model_id: 'res.partner',
            method: 'write',
            kwargs: { ids: [1], vals: { name: 'x' } },
          },
          { 'x-api-key': KEYS.writer, 'x-request-timeout': '1' },
        );
        expect((hung.json as Envelope).error?.code).toBe(-32003);
      } finally {
        await silent.close();
      }
      // A write whose answer is over MAX_RESPONSE_BYTES (64 KB; ten times that for a client that
      // accepts gzip, as fetch does): it ran, its answer was not passed on.
      const large = await largeAnswerServer(1024 * 1024);
      try {
        const ran = await proxy.post(
          '/v2/erp/execute',
          {
            id: 'l',
            erp_instance: instance(large.url),
            model_id: 'res.partner',
            method: 'action_big',
            kwargs: { ids: [2] },
          },
          { 'x-api-key': KEYS.writer },
        );
        expect((ran.json as Envelope).error?.code).toBe(-32009);
      } finally {
        await large.close();
      }
      const outcomes = (await audit(proxy, 'erp=127.0.0.1&limit=1000')).map((record) => record.outcome);
      expect(outcomes).toContain('not_run');
      expect(outcomes).toContain('unknown');
      expect(outcomes).toContain('ran');
    });
  });

  describe(`the audit of MCP write tools (${store})`, () => {
    const double = useErpDouble({ mode: '19' });
    const proxy = useProxy({ env: storeEnv() });
    const headers = (double: ErpDouble, key: string) => ({
      'x-api-key': key,
      ...erpHeaders({ url: double.url, db: 'erp_a', apiKey: admin.apiKey, uid: admin.uid }),
    });

    it('a confirmed write through the official client: an asked record, then the ok record naming the same confirmation and form', async () => {
      const id = await withConfirmingClient(
        proxy.url,
        headers(double, KEYS.confirming),
        'accept',
        async (client) => {
          const result = (await client.callTool({
            name: 'create',
            arguments: { model: 'res.partner', values: { name: 'Confirmed Co' } },
          })) as { content: { text: string }[]; isError?: boolean };
          expect(result.isError ?? false).toBe(false);
          return JSON.parse(result.content[0]?.text ?? 'null') as number;
        },
      );
      const records = await audit(proxy, 'actor=confirming&model=res.partner');
      const asked = records.find((record) => record.outcome === 'asked');
      const ok = records.find((record) => record.outcome === 'ok');
      expect(asked).toMatchObject({ api: 'mcp', tool: 'create', confirmation: { answer: 'asked' } });
      expect(ok).toMatchObject({
        api: 'mcp',
        tool: 'create',
        created_ids: [id],
        confirmation: { answer: 'accepted' },
      });
      expect(asked?.confirmation?.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(ok?.confirmation?.id).toBe(asked?.confirmation?.id);
      expect(ok?.confirmation?.form_digest).toBe(asked?.confirmation?.form_digest);
      expect(ok?.actor.client).toEqual({ name: 'erp-proxy-tests', version: '1.0.0', self_reported: true });
    });

    it('a call_method of export_data asking for external ids (it writes them) is audited, as on execute', async () => {
      await withMcpClient(proxy.url, headers(double, KEYS.writer), async (client) => {
        await client.callTool({
          name: 'call_method',
          arguments: {
            model: 'res.partner',
            method: 'export_data',
            ids: [3],
            kwargs: { fields_to_export: ['id', 'name'] },
          },
        });
      });
      const records = await audit(proxy, 'actor=writer&model=res.partner&limit=1000');
      expect(records.some((record) => record.api === 'mcp' && record.method === 'export_data')).toBe(true);
    });

    it("the person's no: refused as declined, naming the confirmation", async () => {
      await withConfirmingClient(proxy.url, headers(double, KEYS.confirming), 'decline', async (client) => {
        await client.callTool({
          name: 'write',
          arguments: { model: 'res.partner', ids: [7], values: { name: 'No' } },
        });
      });
      const records = await audit(proxy, 'actor=confirming&outcome=refused');
      expect(records[0]).toMatchObject({
        tool: 'write',
        record_ids: [7],
        fields: ['name'],
        error: { rule: 'confirmation_declined' },
        confirmation: { answer: 'declined' },
      });
      expect(records[0]?.confirmation?.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    });
  });
}

describe('GET /_/audit', () => {
  const proxy = useProxy({ env: AUDIT_KEYS_ENV });

  it('refuses a key without a policy, or whose policy does not list audit (-32008)', async () => {
    for (const key of [KEYS.writer, KEYS.open, KEYS.operator]) {
      const answer = await proxy.get('/_/audit', { 'x-api-key': key });
      expect(answer.status, key).toBe(403);
      expect(JSON.stringify(answer.json)).toContain('audit');
    }
    expect((await proxy.get('/_/audit')).status).toBe(401);
  });

  it('/_/about says whether the audit is on and where its records go', async () => {
    const about = (await proxy.get('/_/about')).json as { audit: unknown; settings: Record<string, unknown> };
    expect(about.audit).toEqual({ mode: 'on', store: 'embedded' });
    expect(about.settings.AUDIT).toBe('on');
  });

  it('gives a sealed cursor: the record it stops at cannot be read from it, and a forged one is refused', async () => {
    const double = await startErpDouble({ mode: '19' });
    try {
      for (const name of ['one', 'two']) {
        await proxy.post(
          '/v2/erp/execute',
          {
            id: name,
            erp_instance: { url: double.url, db: 'erp_a', api_key: admin.apiKey },
            model_id: 'res.partner',
            method: 'create',
            kwargs: { vals_list: [{ name }] },
          },
          { 'x-api-key': KEYS.writer },
        );
      }
    } finally {
      await double.close();
    }
    // An `until` far ahead reads as now, not as empty days to walk.
    const first = await proxy.get('/_/audit?limit=1&until=9999999999999', { 'x-api-key': KEYS.auditor });
    const page = first.json as { records: AuditRecord[]; next_cursor: string };
    expect(page.records).toHaveLength(1);
    const id = page.records[0]?.audit_id as string;
    expect(Buffer.from(page.next_cursor, 'base64url').toString('latin1')).not.toContain(id);
    const next = await proxy.get(`/_/audit?limit=1&cursor=${page.next_cursor}`, {
      'x-api-key': KEYS.auditor,
    });
    expect((next.json as { records: AuditRecord[] }).records[0]?.audit_id).not.toBe(id);
    const forged = Buffer.from(`a1:${id}`, 'utf8').toString('base64url');
    expect((await proxy.get(`/_/audit?cursor=${forged}`, { 'x-api-key': KEYS.auditor })).status).toBe(400);
  });

  it('refuses a filter it cannot read, naming it (-32600, 400)', async () => {
    for (const query of [
      'since=yesterday',
      'record=42',
      'outcome=maybe',
      'limit=0',
      'cursor=abc',
      'colour=red',
    ]) {
      const answer = await proxy.get(`/_/audit?${query}`, { 'x-api-key': KEYS.auditor });
      expect(answer.status, query).toBe(400);
    }
  });
});

describe('with the audit store down', () => {
  const double = useErpDouble({ mode: '19' });
  let dead = 0;
  beforeAll(async () => {
    dead = await freePort();
  });
  const body = () => ({
    id: 'd',
    erp_instance: { url: double.url, db: 'erp_a', api_key: admin.apiKey },
    model_id: 'res.partner',
    method: 'create',
    kwargs: { vals_list: [{ name: 'Never' }] },
  });
  const writes = () => double.requests.filter((request) => request.path.endsWith('/create')).length;
  const env = (mode: string) => ({
    ...AUDIT_KEYS_ENV,
    AUDIT: mode,
    AUDIT_TABLE: 'audit-down',
    AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${dead}`,
  });

  it('AUDIT=on: a write whose pending record cannot be written never reaches the ERP (503, -32004); a read goes on', async () => {
    await withProxy({ env: env('on') }, async (proxy) => {
      double.reset();
      const answer = await proxy.post('/v2/erp/execute', body(), { 'x-api-key': KEYS.writer });
      expect(answer.status).toBe(503);
      expect((answer.json as Envelope).error).toMatchObject({ code: -32004 });
      expect((answer.json as Envelope).error?.message).toMatch(
        /audit record could not be written; nothing was sent to the ERP/,
      );
      expect(writes()).toBe(0);
      expect(((await proxy.get('/_/about')).json as { audit: unknown }).audit).toEqual({
        mode: 'on',
        store: 'dynamodb',
      });
      const read = await proxy.post(
        '/v2/erp/execute',
        { ...body(), method: 'search_count', kwargs: { domain: [] } },
        { 'x-api-key': KEYS.writer },
      );
      expect(read.status).toBe(200);
    });
  });

  it('AUDIT=best-effort: the write runs, and the lost record is counted in its log line', async () => {
    let line: Record<string, unknown> | undefined;
    await withProxy({ env: env('best-effort') }, async (proxy) => {
      double.reset();
      const written = await logged(() => proxy.post('/v2/erp/execute', body(), { 'x-api-key': KEYS.writer }));
      expect(written.answer.status).toBe(200);
      expect(writes()).toBe(1);
      line = written.line;
    });
    expect(line?.audit_write_failures).toBeGreaterThanOrEqual(1);
    expect(line?.level).toBe('WARN');
  });

  it('AUDIT=off: no record, no store asked', async () => {
    await withProxy({ env: env('off') }, async (proxy) => {
      double.reset();
      const answer = await proxy.post('/v2/erp/execute', body(), { 'x-api-key': KEYS.writer });
      expect(answer.status).toBe(200);
      const read = await proxy.get('/_/audit', { 'x-api-key': KEYS.auditor });
      expect(read.status).toBe(503);
      expect(((await proxy.get('/_/about')).json as { audit: unknown }).audit).toEqual({
        mode: 'off',
        store: 'none',
      });
    });
  });
});
