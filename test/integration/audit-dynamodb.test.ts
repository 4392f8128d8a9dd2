import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  DynamoDbAuditReader,
  MAX_QUERIES_PER_PAGE,
} from '../../lambdas/platform/audit/audit-reader-dynamodb.ts';
import type { AuditRecord } from '../../lambdas/platform/audit/audit-record.ts';
import type { AuditQuery } from '../../lambdas/platform/audit/audit-store.ts';
import { DynamoDbAuditStore } from '../../lambdas/platform/audit/audit-store-dynamodb.ts';
import { createDynamoDbClient, type DynamoDbClient } from '../../lambdas/platform/aws/dynamodb-client.ts';
import { auditRecord } from '../support/audit-records.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../support/dynamodb-local.ts';
import { type Envelope, USERS, useErpDouble } from '../support/fixtures.ts';
import { type ProxyProcess, startProxyProcess, startProxyProcesses } from '../support/proxy-processes.ts';
import { startSilentServer } from '../support/silent-endpoint.ts';
import { useAuditTable, useStateTable } from '../support/state-table.ts';

const admin = USERS.adminA;

/** A client of DynamoDB Local that counts the operations it sends. */
function countingClient(endpoint: string): { client: DynamoDbClient; operations: string[] } {
  const inner = createDynamoDbClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    budgetMs: 10_000,
    requestTimeoutMs: 10_000,
  });
  const operations: string[] = [];
  return {
    operations,
    client: {
      send(operation, input, options) {
        operations.push(operation);
        return inner.send(operation, input, options);
      },
    },
  };
}

/** A pending write at `ms` (the store's first write of a call). */
const record = (ms: number, facts: Partial<AuditRecord> = {}): AuditRecord =>
  auditRecord(ms, { outcome: 'pending', ...facts });

const EXPIRES = Math.floor(Date.UTC(2027, 11, 31) / 1000);

describe('the audit table store', () => {
  const table = useAuditTable('audit-store');

  it('creates a record once and completes it once: an ended record never changes', async () => {
    const { client } = countingClient(table.endpoint);
    const writer = new DynamoDbAuditStore(client, table.table);
    const reader = new DynamoDbAuditReader(client, table.table);
    const store = {
      create: writer.create.bind(writer),
      finish: writer.finish.bind(writer),
      list: reader.list.bind(reader),
    };
    const pending = record(Date.now());
    await store.create(pending, EXPIRES);
    // A second create (a retried send) changes nothing.
    await store.create({ ...pending, method: 'unlink' }, EXPIRES);
    const view = (held: AuditRecord) => held;
    const query: AuditQuery = { since: Date.now() - 60_000, until: Date.now() + 60_000, limit: 10 };
    expect((await store.list(query, view)).records).toEqual([pending]);
    const ended = { ...pending, outcome: 'ok' as const, duration_ms: 12 };
    expect(await store.finish(ended, EXPIRES)).toBe(true);
    // The same end sent again (its first answer lost) finds itself: written, not a failure.
    expect(await store.finish(ended, EXPIRES)).toBe(true);
    expect(await store.finish({ ...pending, outcome: 'unknown' }, EXPIRES)).toBe(false);
    expect(await store.finish({ ...pending, outcome: 'pending' }, EXPIRES)).toBe(false);
    await store.create({ ...pending, outcome: 'pending' }, EXPIRES);
    expect((await store.list(query, view)).records).toEqual([ended]);
    // A record whose pending write was lost is written whole by its end.
    const lost = record(Date.now(), { outcome: 'refused', error: { code: -32008, rule: 'access' } });
    expect(await store.finish(lost, EXPIRES)).toBe(true);
    expect((await store.list({ ...query, outcome: 'refused' }, view)).records).toEqual([lost]);
    // The writer has no way to delete, nor to read.
    const methods = Object.getOwnPropertyNames(DynamoDbAuditStore.prototype);
    expect(methods.filter((name) => name !== 'constructor').sort()).toEqual(['create', 'finish', 'point']);
  });

  it('serves every filter with Queries and BatchGetItem, never a Scan, and pages without losing or repeating a record', async () => {
    const { client, operations } = countingClient(table.endpoint);
    const writer = new DynamoDbAuditStore(client, table.table);
    const reader = new DynamoDbAuditReader(client, table.table);
    const start = Date.UTC(2026, 10, 28, 22);
    const written: AuditRecord[] = [];
    // 60 records over three UTC days, two actors, two models; ids 1..5.
    for (let i = 0; i < 60; i += 1) {
      const held = record(start + i * 97 * 60_000, {
        actor_id: i % 2 === 0 ? 'key:writer' : 'key:agent',
        actor: { key: i % 2 === 0 ? 'writer' : 'agent' },
        model: i % 3 === 0 ? 'sale.order' : 'res.partner',
        record_ids: [1 + (i % 5)],
        outcome: i % 4 === 0 ? 'refused' : 'ok',
      });
      written.push(held);
      await writer.finish(held, EXPIRES);
      await writer.point(
        held,
        [{ model: held.model as string, id: (held.record_ids as number[])[0] as number }],
        EXPIRES,
      );
    }
    const view = (held: AuditRecord) => held;
    const queries: Omit<AuditQuery, 'limit'>[] = [
      { since: start, until: start + 5 * 86_400_000 },
      { since: start, until: start + 5 * 86_400_000, model: 'sale.order' },
      { since: start, until: start + 5 * 86_400_000, outcome: 'refused' },
      { since: start + 86_400_000, until: start + 2 * 86_400_000 },
      { since: start, until: start + 5 * 86_400_000, actor: 'key:agent' },
      { since: start, until: start + 5 * 86_400_000, record: { model: 'res.partner', id: 2 } },
      {
        since: start,
        until: start + 5 * 86_400_000,
        record: { model: 'res.partner', id: 2 },
        actor: 'key:writer',
      },
    ];
    for (const shape of queries) {
      for (const limit of [1, 7, 100]) {
        operations.length = 0;
        const seen: string[] = [];
        let before: string | undefined;
        let pages = 0;
        for (; pages < 100; pages += 1) {
          const page = await reader.list(
            { ...shape, limit, ...(before === undefined ? {} : { before }) },
            view,
          );
          expect(page.records.length).toBeLessThanOrEqual(limit);
          seen.push(...page.records.map((held) => held.audit_id));
          if (page.next === undefined) break;
          before = page.next;
        }
        const expected = written
          .filter((held) => {
            const ms = Date.parse(held.time);
            return (
              ms >= shape.since &&
              ms <= shape.until &&
              (shape.model === undefined || held.model === shape.model) &&
              (shape.outcome === undefined || held.outcome === shape.outcome) &&
              (shape.actor === undefined || held.actor_id === shape.actor) &&
              (shape.record === undefined ||
                (held.model === shape.record.model && held.record_ids?.[0] === shape.record.id))
            );
          })
          .map((held) => held.audit_id)
          .sort()
          .reverse();
        expect(seen, JSON.stringify({ shape, limit })).toEqual(expected);
        expect(new Set(operations), JSON.stringify(shape)).not.toContain('Scan');
        expect([...new Set(operations)].every((op) => op === 'Query' || op === 'BatchGetItem')).toBe(true);
        // The reads of a quiet window of up to 31 days fit one page's Queries.
        expect(operations.length).toBeLessThanOrEqual((pages + 1) * (MAX_QUERIES_PER_PAGE + 10));
        // A cursor older than a later `since` (a reused cursor): nothing between them, no error.
        if (before !== undefined) {
          const none = await reader.list(
            { ...shape, limit, since: shape.until, before: written[0]?.audit_id },
            view,
          );
          expect(none.records).toEqual([]);
        }
      }
    }
  });
});

const KEYS = {
  writer: 'audit-proc-writer-key-0123456789ab',
  auditor: 'audit-proc-auditor-key-0123456789a',
};
const PROXY_API_KEYS = JSON.stringify({
  keys: [
    { name: 'writer', key: KEYS.writer },
    { name: 'auditor', key: KEYS.auditor, policy: { apis: ['audit'] } },
  ],
});

describe('two proxy processes sharing the audit table', () => {
  const double = useErpDouble({ mode: '19' });
  const state = useStateTable('audit-procs');
  const audit = useAuditTable('audit-procs');
  let procs: ProxyProcess[] = [];
  const env = () => ({
    ...state.env(),
    ...audit.env(),
    PROXY_API_KEY: '',
    PROXY_API_KEYS,
    AUDIT_DIGEST_KEY: 'a-digest-key-the-processes-share-0123456789',
    AUDIT_PENDING_AFTER: '5',
  });
  beforeAll(async () => {
    procs = await startProxyProcesses(2, env());
  }, 60_000);
  afterAll(async () => {
    await Promise.all(procs.map((proc) => proc.stop()));
  });

  const records = async (proc: ProxyProcess, query: string): Promise<AuditRecord[]> => {
    const answer = await proc.get(`/_/audit?${query}`, { 'x-api-key': KEYS.auditor });
    expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    return (answer.json as { records: AuditRecord[] }).records;
  };

  it('one writes, the other finds its record by record= and actor=, with the same digests', async () => {
    const [a, b] = procs as [ProxyProcess, ProxyProcess];
    const body = (name: string) => ({
      id: 'c',
      erp_instance: { url: double.url, db: 'erp_a', api_key: admin.apiKey },
      model_id: 'res.partner',
      method: 'create',
      kwargs: { vals_list: [{ name }] },
    });
    const created = await a.post('/v2/erp/execute', body('Shared'), { 'x-api-key': KEYS.writer });
    const again = await b.post('/v2/erp/execute', body('Shared'), { 'x-api-key': KEYS.writer });
    const id = ((created.json as Envelope).result as number[])[0];
    const found = await records(b, `record=res.partner:${id}`);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ outcome: 'ok', created_ids: [id], actor_id: 'key:writer' });
    const other = ((again.json as Envelope).result as number[])[0];
    const [theirs] = await records(a, `record=res.partner:${other}`);
    // One digest key, one digest: the same values written by two instances compare equal.
    expect(theirs?.values_digest).toBe(found[0]?.values_digest);
    const mine = await records(a, 'actor=writer&outcome=ok');
    expect(mine.map((held) => held.audit_id)).toEqual(
      expect.arrayContaining([found[0]?.audit_id, theirs?.audit_id]),
    );
  });

  it('a process killed between its pending record and its outcome leaves a record that reads unknown', async () => {
    const silent = await startSilentServer();
    const doomed = await startProxyProcess(env());
    try {
      const call = doomed
        .post(
          '/v2/erp/execute',
          {
            id: 'k',
            erp_instance: { url: silent.url, db: 'erp_a', api_key: admin.apiKey },
            model_id: 'res.partner',
            method: 'write',
            kwargs: { ids: [77], vals: { name: 'Killed' } },
          },
          { 'x-api-key': KEYS.writer, 'x-request-timeout': '20' },
        )
        .catch(() => undefined);
      const [reader] = procs as [ProxyProcess];
      // The pending record is there while the call waits on the ERP.
      await vi.waitFor(
        async () => {
          const held = await records(reader, 'record=res.partner:77');
          expect(held[0]?.outcome).toBe('pending');
        },
        { timeout: 15_000, interval: 200 },
      );
      await doomed.kill();
      await call;
      // Past AUDIT_PENDING_AFTER (5 s): its function died, and the record says it may have run.
      await vi.waitFor(
        async () => {
          const held = await records(reader, 'record=res.partner:77');
          expect(held[0]?.outcome).toBe('unknown');
        },
        { timeout: 20_000, interval: 500 },
      );
    } finally {
      await doomed.stop();
      await silent.close();
    }
  }, 60_000);
});
