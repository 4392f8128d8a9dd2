/**
 * The store's once-only marks (`markOnce`, lambdas/platform/state/state-store.ts: a confirmation's nonce
 * is used once, core/confirm/): the same contract for the embedded store and the DynamoDB store
 * against Amazon's DynamoDB Local (never a mocked client).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { StateStore } from '../../lambdas/platform/state/state-store.ts';
import { DynamoDbStateStore } from '../../lambdas/platform/state/state-store-dynamodb.ts';
import { EmbeddedStateStore } from '../../lambdas/platform/state/state-store-embedded.ts';
import { futureNow, localClient } from '../support/dynamodb-local.ts';
import { useStateTable } from '../support/state-table.ts';

const state = useStateTable('once');

/** Ahead of the real clock: DynamoDB Local deletes what its TTL says is past (futureNow). */
const NOW = futureNow();
const seconds = (ms: number) => Math.floor(ms / 1000);

const STORES: [string, () => StateStore][] = [
  ['embedded', () => new EmbeddedStateStore()],
  ['dynamodb (DynamoDB Local)', () => new DynamoDbStateStore(localClient(state.endpoint), state.table)],
];

describe.each(STORES)('the %s store', (_name, makeStore) => {
  it('marks a key once: the first call makes the mark, the next ones find it', async () => {
    const store = makeStore();
    const key = randomUUID();
    expect(await store.markOnce(key, seconds(NOW) + 600, NOW)).toBe(true);
    expect(await store.markOnce(key, seconds(NOW) + 600, NOW + 1_000)).toBe(false);
    // Another key is another mark.
    expect(await store.markOnce(randomUUID(), seconds(NOW) + 600, NOW)).toBe(true);
  });

  it('treats a mark past its expiry as absent (TTL deletes late)', async () => {
    const store = makeStore();
    const key = randomUUID();
    expect(await store.markOnce(key, seconds(NOW) + 10, NOW)).toBe(true);
    expect(await store.markOnce(key, seconds(NOW) + 700, NOW + 11_000)).toBe(true);
  });

  it('lets exactly one of many concurrent marks of one key through', async () => {
    const store = makeStore();
    const key = randomUUID();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => store.markOnce(key, seconds(NOW) + 600, NOW)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('keeps marks apart from the other items of the table (an attempt with the same key)', async () => {
    const store = makeStore();
    const key = randomUUID();
    const begun = await store.beginAttempt(
      {
        key,
        owner: 'o',
        fingerprint: 'fp',
        token: 't',
        leaseUntil: NOW + 1_000,
        expiresAt: seconds(NOW) + 600,
      },
      NOW,
    );
    expect(begun.begun).toBe(true);
    expect(await store.markOnce(key, seconds(NOW) + 600, NOW)).toBe(true);
  });
});
