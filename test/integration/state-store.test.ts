/**
 * The store port (lambdas/platform/state/state-store.ts): the same contract for the embedded store and
 * the DynamoDB store against Amazon's DynamoDB Local (never a mocked client): idempotency records
 * (begin, complete, abandon, expiry in the conditions), counters that count only below their limit,
 * in-flight slots with leases, and what concurrent callers get.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { DynamoDbClient } from '../../lambdas/platform/aws/dynamodb-client.ts';
import {
  MAX_STORED_ANSWER_BYTES,
  STORE_OPERATIONS,
  type StateStore,
  StoreUnavailableError,
} from '../../lambdas/platform/state/state-store.ts';
import { DynamoDbStateStore } from '../../lambdas/platform/state/state-store-dynamodb.ts';
import { EmbeddedStateStore } from '../../lambdas/platform/state/state-store-embedded.ts';
import { futureNow, LOCAL_CREDENTIALS, localClient } from '../support/dynamodb-local.ts';
import { useStateTable } from '../support/state-table.ts';

const state = useStateTable('contract');

/** Ahead of the real clock: DynamoDB Local deletes what its TTL says is past (futureNow). */
const NOW = futureNow();
const seconds = (ms: number) => Math.floor(ms / 1000);

/** Every operation the DynamoDB store sent, by name (the stack grants exactly STORE_OPERATIONS). */
const sent = new Set<string>();

function recordingClient(client: DynamoDbClient): DynamoDbClient {
  return {
    send(operation, input) {
      sent.add(operation);
      return client.send(operation, input);
    },
  };
}

const STORES: [string, () => StateStore][] = [
  ['embedded', () => new EmbeddedStateStore()],
  [
    'dynamodb (DynamoDB Local)',
    () => new DynamoDbStateStore(recordingClient(localClient(state.endpoint)), state.table),
  ],
];

afterAll(() => {
  // The stack's grants are STORE_OPERATIONS: the store must need no other.
  expect([...sent].sort()).toEqual([...STORE_OPERATIONS].sort());
});

describe.each(STORES)('the %s store', (_name, makeStore) => {
  const fresh = () => `k-${randomUUID()}`;
  const attempt = (
    key: string,
    token = randomUUID(),
    overrides: Partial<{ leaseUntil: number; expiresAt: number }> = {},
  ) => ({
    key,
    owner: 'owner-1',
    fingerprint: 'fp-1',
    token,
    leaseUntil: NOW + 30_000,
    expiresAt: seconds(NOW) + 86_400,
    ...overrides,
  });

  it('begins an attempt on a free key, and returns the live record to the next one', async () => {
    const store = makeStore();
    const key = fresh();
    const first = attempt(key);
    expect(await store.beginAttempt(first, NOW)).toEqual({ begun: true });
    const second = await store.beginAttempt(attempt(key), NOW + 1);
    expect(second).toEqual({
      begun: false,
      existing: {
        state: 'in-progress',
        fingerprint: 'fp-1',
        token: first.token,
        leaseUntil: first.leaseUntil,
        expiresAt: first.expiresAt,
        sent: false,
      },
    });
  });

  it('marks an attempt sent only with its token and while in progress; a claim never marked is taken over once its lease passes, by one attempt', async () => {
    const store = makeStore();
    // Never marked: within its lease it stands; past it, exactly one of many retries takes it over.
    const unsent = fresh();
    await store.beginAttempt(attempt(unsent), NOW);
    expect((await store.beginAttempt(attempt(unsent), NOW + 29_000)).begun).toBe(false);
    const takers = await Promise.all(
      // Each with its own lease from now on, as the core writes it.
      Array.from({ length: 8 }, () =>
        store.beginAttempt(attempt(unsent, randomUUID(), { leaseUntil: NOW + 61_000 }), NOW + 31_000),
      ),
    );
    expect(takers.filter((taker) => taker.begun)).toHaveLength(1);
    // Another request with the key (another fingerprint) never takes a claim over: it is told of it.
    const other = fresh();
    await store.beginAttempt(attempt(other), NOW);
    const foreign = { ...attempt(other, randomUUID(), { leaseUntil: NOW + 61_000 }), fingerprint: 'fp-2' };
    expect(await store.beginAttempt(foreign, NOW + 31_000)).toMatchObject({ begun: false });
    // Marked sent (its call may have run): never taken over, whatever the time within its expiry.
    const sent = fresh();
    const first = attempt(sent);
    await store.beginAttempt(first, NOW);
    expect(await store.markSent(sent, 'another-token')).toBe(false);
    expect(await store.markSent(sent, first.token)).toBe(true);
    const later = await store.beginAttempt(attempt(sent), NOW + 31_000);
    expect(later).toMatchObject({ begun: false, existing: { token: first.token, sent: true } });
    // Done: no longer marked.
    await store.completeAttempt(sent, first.token, new Uint8Array([1]), seconds(NOW) + 100);
    expect(await store.markSent(sent, first.token)).toBe(false);
  });

  it('completes only with the attempt token, and returns the stored answer bytes afterwards', async () => {
    const store = makeStore();
    const key = fresh();
    const first = attempt(key);
    await store.beginAttempt(first, NOW);
    const answer = new Uint8Array([0, 1, 2, 250, 255, 10]);
    expect(await store.completeAttempt(key, 'another-token', answer, seconds(NOW) + 100)).toBe(false);
    expect(await store.completeAttempt(key, first.token, answer, seconds(NOW) + 100)).toBe(true);
    const again = await store.beginAttempt(attempt(key), NOW);
    expect(again.begun).toBe(false);
    if (again.begun) return;
    expect(again.existing.state).toBe('done');
    expect(again.existing.expiresAt).toBe(seconds(NOW) + 100);
    expect([...(again.existing.answer ?? [])]).toEqual([...answer]);
  });

  it('abandons only with the attempt token; the key is free again afterwards', async () => {
    const store = makeStore();
    const key = fresh();
    const first = attempt(key);
    await store.beginAttempt(first, NOW);
    expect(await store.abandonAttempt(key, 'another-token')).toBe(false);
    expect((await store.beginAttempt(attempt(key), NOW)).begun).toBe(false);
    expect(await store.abandonAttempt(key, first.token)).toBe(true);
    expect(await store.beginAttempt(attempt(key), NOW)).toEqual({ begun: true });
  });

  it('treats a record past its expiry as absent (TTL deletes late)', async () => {
    const store = makeStore();
    const key = fresh();
    await store.beginAttempt(attempt(key, randomUUID(), { expiresAt: seconds(NOW) + 5 }), NOW);
    expect((await store.beginAttempt(attempt(key), NOW + 4_000)).begun).toBe(false);
    expect(await store.beginAttempt(attempt(key), NOW + 6_000)).toEqual({ begun: true });
  });

  it('refuses an answer over its limit', async () => {
    const store = makeStore();
    const key = fresh();
    const first = attempt(key);
    await store.beginAttempt(first, NOW);
    await expect(
      store.completeAttempt(
        key,
        first.token,
        new Uint8Array(MAX_STORED_ANSWER_BYTES + 1),
        seconds(NOW) + 100,
      ),
    ).rejects.toThrow(RangeError);
    expect(store.maxAnswerBytes).toBe(MAX_STORED_ANSWER_BYTES);
  });

  it('keeps an answer as large as its limit', async () => {
    const store = makeStore();
    const key = fresh();
    const first = attempt(key);
    await store.beginAttempt(first, NOW);
    const answer = new Uint8Array(MAX_STORED_ANSWER_BYTES).map((_, i) => i % 251);
    expect(await store.completeAttempt(key, first.token, answer, seconds(NOW) + 100)).toBe(true);
    const again = await store.beginAttempt(attempt(key), NOW);
    expect(again.begun ? undefined : again.existing.answer?.byteLength).toBe(MAX_STORED_ANSWER_BYTES);
  });

  it('lets exactly one of many concurrent attempts on one key begin', async () => {
    const store = makeStore();
    const key = fresh();
    const results = await Promise.all(
      Array.from({ length: 12 }, () => store.beginAttempt(attempt(key), NOW)),
    );
    expect(results.filter((result) => result.begun)).toHaveLength(1);
  });

  it('counts a request only while the counter is below its limit, per key', async () => {
    const store = makeStore();
    const key = fresh();
    const step = { key, limit: 2, expiresAt: seconds(NOW) + 60 };
    expect(await store.countRequest(step, NOW)).toEqual({ counted: true, count: 1 });
    expect(await store.countRequest(step, NOW)).toEqual({ counted: true, count: 2 });
    expect(await store.countRequest(step, NOW)).toEqual({ counted: false, count: 2 });
    expect(await store.countRequest({ ...step, key: fresh() }, NOW)).toEqual({ counted: true, count: 1 });
  });

  it('takes back a counted request, never below 0 nor on a counter that does not exist', async () => {
    const store = makeStore();
    const step = { key: fresh(), limit: 1, expiresAt: seconds(NOW) + 60 };
    expect(await store.countRequest(step, NOW)).toEqual({ counted: true, count: 1 });
    expect(await store.countRequest(step, NOW)).toEqual({ counted: false, count: 1 });
    expect(await store.uncountRequest(step.key, NOW)).toBe(true);
    expect(await store.uncountRequest(step.key, NOW)).toBe(false);
    expect(await store.countRequest(step, NOW)).toEqual({ counted: true, count: 1 });
    expect(await store.uncountRequest(fresh(), NOW)).toBe(false);
  });

  it('counts exactly the limit of many concurrent requests', async () => {
    const store = makeStore();
    const step = { key: fresh(), limit: 5, expiresAt: seconds(NOW) + 60 };
    const results = await Promise.all(Array.from({ length: 20 }, () => store.countRequest(step, NOW)));
    expect(results.filter((result) => result.counted)).toHaveLength(5);
    expect(results.filter((result) => !result.counted).every((result) => result.count === 5)).toBe(true);
  });

  it('leases an in-flight slot to one holder until its lease passes; only the holder releases it', async () => {
    const store = makeStore();
    const key = fresh();
    const lease = { key, slot: 0, token: 'holder-1', leaseUntil: NOW + 10_000 };
    expect(await store.acquireSlot(lease, NOW)).toBe(true);
    expect(await store.acquireSlot({ ...lease, token: 'holder-2' }, NOW + 5_000)).toBe(false);
    expect(await store.acquireSlot({ ...lease, slot: 1, token: 'holder-2' }, NOW)).toBe(true);
    // The first holder died: its lease passes, and the slot is free.
    expect(
      await store.acquireSlot({ ...lease, token: 'holder-3', leaseUntil: NOW + 40_000 }, NOW + 10_001),
    ).toBe(true);
    expect(await store.releaseSlot(key, 0, 'holder-1')).toBe(false);
    expect(await store.releaseSlot(key, 0, 'holder-3')).toBe(true);
    expect(await store.acquireSlot({ ...lease, token: 'holder-4' }, NOW)).toBe(true);
  });

  it('gives a free slot to exactly one of many concurrent holders', async () => {
    const store = makeStore();
    const key = fresh();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        store.acquireSlot({ key, slot: 0, token: `h${i}`, leaseUntil: NOW + 1000 }, NOW),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });
});

describe('the DynamoDB store when DynamoDB cannot answer', () => {
  it('fails with StoreUnavailableError, quickly, for a closed port', async () => {
    const store = DynamoDbStateStore.fromConfig(
      {
        region: 'eu-west-1',
        awsAccessKeyId: LOCAL_CREDENTIALS.accessKeyId,
        awsSecretAccessKey: 'x',
        awsSessionToken: undefined,
      },
      'nothing',
      'http://127.0.0.1:9',
    );
    await expect(
      store.beginAttempt(
        { key: 'k', owner: 'o', fingerprint: 'f', token: 't', leaseUntil: NOW, expiresAt: seconds(NOW) },
        NOW,
      ),
    ).rejects.toThrow(StoreUnavailableError);
  });

  it('fails with StoreUnavailableError for a table that does not exist', async () => {
    const store: StateStore = new DynamoDbStateStore(localClient(state.endpoint), 'no-such-table');
    await expect(store.countRequest({ key: 'k', limit: 1, expiresAt: seconds(NOW) }, NOW)).rejects.toThrow(
      StoreUnavailableError,
    );
  });

  it('fails with StoreUnavailableError without credentials against AWS itself', () => {
    expect(() =>
      DynamoDbStateStore.fromConfig(
        {
          region: 'eu-west-1',
          awsAccessKeyId: undefined,
          awsSecretAccessKey: undefined,
          awsSessionToken: undefined,
        },
        'table',
        undefined,
      ),
    ).toThrow(StoreUnavailableError);
  });
});

describe('the embedded store when full', () => {
  it('drops expired records first, then refuses a record (never a counter) as full', async () => {
    const store = new EmbeddedStateStore({ maxRecords: 8 });
    const begin = (key: string, owner: string, expiresAt: number, now = NOW) =>
      store.beginAttempt(
        { key, owner, fingerprint: 'fp', token: randomUUID(), leaseUntil: NOW + 1000, expiresAt },
        now,
      );
    // A quarter of 8 records per caller: 2.
    await begin('a', 'one', seconds(NOW) - 1, NOW - 5_000);
    await begin('b', 'one', seconds(NOW) + 60);
    expect(await begin('c', 'one', seconds(NOW) + 60)).toEqual({ begun: true });
    await expect(begin('d', 'one', seconds(NOW) + 60)).rejects.toThrow(StoreUnavailableError);
    await expect(begin('d', 'one', seconds(NOW) + 60)).rejects.toMatchObject({ forCaller: true });
    expect(await begin('d', 'two', seconds(NOW) + 60)).toEqual({ begun: true });
    const step = (key: string) => ({ key, limit: 9, expiresAt: seconds(NOW) + 60 });
    for (let i = 0; i < 100; i += 1)
      expect((await store.countRequest(step(`n${i}`), NOW)).counted).toBe(true);
  });
});
