/**
 * One call's audit record (core/audit/audit-call.ts) over the embedded ring: how each end reads
 * (a thrown failure before and after `audit-pending`, an accepted confirmation whose run failed),
 * a record kept within its 16 KB, the end tried briefly once the pending record failed, and
 * `AuditRecords` counting only a record whose end was written.
 */
import { describe, expect, it } from 'vitest';
import {
  AUDIT_RECORD_MAX_BYTES,
  type AuditSubject,
  auditDeps,
  fittedRecord,
} from '../../lambdas/core/audit/audit-call.ts';
import { withFacts } from '../../lambdas/core/request-facts.ts';
import type { AuditRecord } from '../../lambdas/platform/audit/audit-record.ts';
import { EmbeddedAuditStore } from '../../lambdas/platform/audit/audit-store-embedded.ts';
import { digestKeyOf } from '../../lambdas/platform/audit/digest-key.ts';
import {
  KeyPolicyRefusedError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '../../lambdas/platform/errors.ts';
import type { ErpCall } from '../../lambdas/upstream/erp-transport.ts';

const KEY = digestKeyOf('k'.repeat(40));
const REQUEST: ErpCall = {
  baseUrl: new URL('http://erp.example:8069'),
  db: 'prod',
  apiKey: 'erp-key-secret',
  model: 'res.partner',
  method: 'write',
  kwargsJson: '{"ids":[7],"vals":{"name":"x"}}',
};
const SUBJECT: AuditSubject<string> = {
  api: 'v2',
  erp: { url: REQUEST.baseUrl, db: 'prod', uid: undefined, apiKey: 'erp-key-secret' },
  factsOf: () => ({ outcome: 'success' }),
  createdIds: () => undefined,
};
const CALL = {
  inbound: { identity: { kind: 'key', name: 'writer' } as const, keyPolicy: undefined },
  question: { model: 'res.partner', method: 'write' },
  requests: [REQUEST],
};

function setup(store = new EmbeddedAuditStore()) {
  const deps = auditDeps({ mode: 'on', store, digestKey: async () => KEY, retentionDays: 1 });
  const read = async (): Promise<readonly AuditRecord[]> =>
    (await store.list({ since: 0, until: Date.now() + 1000, limit: 10 }, (record) => record)).records;
  return { deps, store, read };
}

describe("a call's audit record", () => {
  it('a failure before audit-pending with no step saying no reads not_run; a refusal reads refused, with its rule', async () => {
    const { deps, read } = setup();
    const lookup = deps.open(SUBJECT, CALL);
    await lookup.endedThrowing(new UpstreamTimeoutError('a lookup timed out'));
    const refusal = deps.open(SUBJECT, CALL);
    await refusal.endedThrowing(
      withFacts(new KeyPolicyRefusedError('no', 'access'), { policyRule: 'access' }),
    );
    const records = await read();
    expect(records.find((record) => record.audit_id === lookup.id)).toMatchObject({
      outcome: 'not_run',
      error: { code: -32003 },
    });
    expect(records.find((record) => record.audit_id === refusal.id)).toMatchObject({
      outcome: 'refused',
      error: { code: -32008, rule: 'access' },
    });
  });

  it('an accepted confirmation whose run failed: the record names it, as may have run', async () => {
    const { deps, read } = setup();
    const writing = deps.open(SUBJECT, CALL);
    await writing.pending(CALL);
    const failure = withFacts(new UpstreamTimeoutError('timed out'), {
      confirmation: 'accepted',
      confirmationId: 'c-1',
      formDigest: 'f-1',
    });
    writing.ranThrowing(failure);
    const facts = await writing.endedThrowing(failure);
    expect(facts).toMatchObject({ auditId: writing.id, auditOutcome: 'unknown' });
    const [record] = await read();
    expect(record).toMatchObject({ outcome: 'unknown', confirmation: { answer: 'accepted', id: 'c-1' } });
    // The form's digest is keyed: not the sealed hash itself.
    expect(record?.confirmation?.form_digest).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(record?.confirmation?.form_digest).not.toBe('f-1');
    expect(JSON.stringify(record)).not.toContain('erp-key-secret');
  });

  it('the pending record refused (AUDIT=on): -32004 before the ERP; its end tried briefly; AuditRecords not counted when lost', async () => {
    const store = new EmbeddedAuditStore();
    const quick: boolean[] = [];
    store.create = async () => {
      throw new Error('ValidationException: Item size has exceeded the maximum allowed size');
    };
    store.finish = async (
      _record: AuditRecord,
      _expiresAt?: number,
      options?: { readonly quick?: boolean },
    ) => {
      quick.push(options?.quick === true);
      throw new Error('still down');
    };
    const { deps } = setup(store);
    const writing = deps.open(SUBJECT, CALL);
    const refused = await writing.pending(CALL).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UpstreamUnavailableError);
    const facts = await writing.endedThrowing(refused);
    expect(quick).toEqual([true]);
    expect(facts.auditOutcome).toBeUndefined();
    expect(facts.auditWriteFailures).toBe(2);
    expect(facts.auditError).toMatch(/^ValidationException: Item size/);
  });

  it("names an OAuth person: issuer, sub, the token's client and the identity entry, and the policy", async () => {
    const { deps, read } = setup();
    const call = {
      ...CALL,
      inbound: {
        identity: {
          kind: 'oauth',
          issuer: 'https://id.example.com',
          subject: 'alice',
          entry: 'sales',
          clientId: 'claude-desktop',
        } as const,
        keyPolicy: undefined,
      },
    };
    const writing = deps.open(SUBJECT, call);
    await writing.ended('ran');
    const [record] = await read();
    expect(record).toMatchObject({
      actor_id: 'oauth:https://id.example.com alice',
      actor: {
        oauth: {
          issuer: 'https://id.example.com',
          sub: 'alice',
          client_id: 'claude-desktop',
          entry: 'sales',
        },
      },
    });
  });

  it("a pointer's write that fails: the end is still written and awaited, the failure counted", async () => {
    const store = new EmbeddedAuditStore();
    store.point = async () => {
      throw new Error('pointer refused');
    };
    const { deps, read } = setup(store);
    const writing = deps.open(SUBJECT, CALL);
    const facts = await writing.ended('ran');
    expect(facts).toMatchObject({ auditOutcome: 'ok', auditWriteFailures: 1, auditError: 'pointer refused' });
    expect((await read())[0]?.outcome).toBe('ok');
  });

  it("AUDIT=best-effort: a failed pending record does not cut the end short (it is the call's only record)", async () => {
    const store = new EmbeddedAuditStore();
    const quick: boolean[] = [];
    store.create = async () => {
      throw new Error('down for a moment');
    };
    const finish = store.finish.bind(store);
    store.finish = async (
      record: AuditRecord,
      expiresAt?: number,
      options?: { readonly quick?: boolean },
    ) => {
      quick.push(options?.quick === true);
      return finish(record, expiresAt, options);
    };
    const deps = auditDeps({ mode: 'best-effort', store, digestKey: async () => KEY, retentionDays: 1 });
    const writing = deps.open(SUBJECT, CALL);
    await writing.pending(CALL);
    writing.ranWith('ran');
    expect((await writing.ended('ran')).auditOutcome).toBe('ok');
    expect(quick).toEqual([false]);
  });

  it("a caller's long texts (a v1 database has no length limit) are bounded: the record stays within 16 KB", async () => {
    const { deps, read } = setup();
    const subject = { ...SUBJECT, erp: { ...SUBJECT.erp, db: `\u0001${'d'.repeat(45_000)}` } };
    await deps.open(subject, CALL).ended('ran');
    const [record] = await read();
    expect(record?.erp.db).toBe('d'.repeat(256));
    expect(Buffer.byteLength(JSON.stringify(record))).toBeLessThanOrEqual(AUDIT_RECORD_MAX_BYTES);
  });

  it('keeps a record within 16 KB: its lists shortened, their counts kept', () => {
    const record: AuditRecord = {
      schema: 1,
      audit_id: '01KBZZZZZZZZZZZZZZZZZZZZZZ',
      time: new Date().toISOString(),
      api: 'v2',
      actor_id: 'key:writer',
      actor: { key: 'writer' },
      erp: { host: 'erp', db: 'prod', scheme: 'http' },
      record_ids: Array.from({ length: 1000 }, (_, i) => 1_000_000_000 + i),
      fields: Array.from({ length: 1000 }, (_, i) => `${'f'.repeat(90)}${i}`),
      outcome: 'ok',
    };
    const fitted = fittedRecord(record);
    expect(Buffer.byteLength(JSON.stringify(fitted))).toBeLessThanOrEqual(AUDIT_RECORD_MAX_BYTES);
    expect(fitted.record_ids_count).toBe(1000);
    expect(fitted.fields_count).toBe(1000);
    expect(fitted.record_ids?.[0]).toBe(1_000_000_000);
    // A refusal (no limit counts it) keeps the first 10 of each list.
    const refused = fittedRecord({ ...record, outcome: 'refused' });
    expect(refused.record_ids).toHaveLength(10);
    expect(refused.fields).toHaveLength(10);
    expect(refused.fields_count).toBe(1000);
    // A small record is kept as it is.
    const small = { ...record, record_ids: [1], fields: ['name'] };
    expect(fittedRecord(small)).toBe(small);
  });
});

describe('how an end reads, case by case', () => {
  const endOfFacts = async (
    facts: Record<string, unknown>,
    thrown?: Error,
    afterPending = false,
  ): Promise<AuditRecord | undefined> => {
    const { deps, read } = setup();
    const subject = { ...SUBJECT, factsOf: () => facts };
    const writing = deps.open(subject, CALL);
    if (afterPending) await writing.pending(CALL);
    if (thrown === undefined) await writing.ended('value');
    else await writing.endedThrowing(withFacts(thrown, facts));
    return (await read())[0];
  };

  it('replays, conflicts, a key still running, a refused confirmation, a bug and the store of keys', async () => {
    expect(
      await endOfFacts(
        { idempotency: 'unknown_replayed', auditReplayOf: 'r-1' },
        new UpstreamTimeoutError('x'),
      ),
    ).toMatchObject({
      outcome: 'replayed',
      replay_of: 'r-1',
      error: { code: -32003 },
    });
    expect(await endOfFacts({ idempotency: 'in_progress' }, new Error('x'))).toMatchObject({
      outcome: 'refused',
      error: { code: -32010, rule: 'idempotency_in_progress' },
    });
    expect(await endOfFacts({ confirmation: 'invalid', errorCode: -32602 })).toMatchObject({
      outcome: 'refused',
      error: { code: -32602, rule: 'confirmation' },
    });
    expect(
      await endOfFacts({ idempotency: 'store_unavailable' }, new UpstreamUnavailableError('x')),
    ).toMatchObject({
      outcome: 'refused',
      error: { code: -32004, rule: 'idempotency_store' },
    });
    // A bug after the pending record: it may have run.
    expect(await endOfFacts({}, new TypeError('a bug'), true)).toMatchObject({
      outcome: 'unknown',
      error: { code: -32603 },
    });
  });

  it('without a store (a function deployed without the table): AUDIT=on refuses, and the end is counted lost', async () => {
    const deps = auditDeps({ mode: 'on', store: undefined, digestKey: async () => KEY, retentionDays: 1 });
    const writing = deps.open(SUBJECT, CALL);
    await expect(writing.pending(CALL)).rejects.toBeInstanceOf(UpstreamUnavailableError);
    const facts = await writing.endedThrowing(new UpstreamUnavailableError('x'));
    expect(facts.auditWriteFailures).toBe(2);
    expect(facts.auditError).toMatch(/no audit store is configured/);
  });

  it('a record still over 16 KB once its lists are gone has its texts cut much shorter', () => {
    const long = 'é'.repeat(200);
    const record: AuditRecord = {
      schema: 1,
      audit_id: '01KBZZZZZZZZZZZZZZZZZZZZZZ',
      time: new Date().toISOString(),
      api: 'mcp',
      actor_id: 'oauth:x y',
      actor: { oauth: { issuer: long, sub: long, client_id: long, entry: long } },
      erp: { host: 'erp', db: long, scheme: 'http' },
      error: { name: 'x'.repeat(16_500) },
      outcome: 'erp_error',
    };
    const fitted = fittedRecord(record);
    expect(fitted.actor.oauth?.issuer).toHaveLength(64);
    expect(fitted.erp.db).toHaveLength(64);
  });
});
