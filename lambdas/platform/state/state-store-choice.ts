/**
 * @module platform/state/state-store-choice
 * Which store the configuration names (docs/design.md, "The proxy's state: the store"): deployed, the stack's DynamoDB table;
 * locally, the embedded store unless the settings name a table and an endpoint. The DynamoDB store
 * is loaded on the first call that needs it, never at cold start.
 */
import type { Config } from '../config.ts';
import { MAX_STORED_ANSWER_BYTES, type StateStore } from './state-store.ts';
import { EmbeddedStateStore } from './state-store-embedded.ts';
import { storeLocation } from './store-location.ts';

/**
 * The store of this configuration, built on the first call that needs it: a call that never
 * does (no `Idempotency-Key`, no limit) loads nothing of the DynamoDB client. `undefined` when no
 * store is configured (a function deployed without a table).
 */
export function createStateStore(config: Config): StateStore | undefined {
  const location = storeLocation(config);
  if (location.kind === 'none') return undefined;
  if (location.kind === 'embedded') {
    return new EmbeddedStateStore({
      maxBytes: config.localStoreMaxBytes,
      maxRecords: config.localStoreMaxRecords,
    });
  }
  let store: Promise<StateStore> | undefined;
  const load = (): Promise<StateStore> => {
    store ??= import('./state-store-dynamodb.ts').then(({ DynamoDbStateStore }) =>
      DynamoDbStateStore.fromConfig(config, location.table, location.endpoint),
    );
    return store;
  };
  return {
    kind: 'dynamodb',
    maxAnswerBytes: MAX_STORED_ANSWER_BYTES,
    beginAttempt: async (attempt, now) => (await load()).beginAttempt(attempt, now),
    completeAttempt: async (key, token, answer, expiresAt) =>
      (await load()).completeAttempt(key, token, answer, expiresAt),
    abandonAttempt: async (key, token) => (await load()).abandonAttempt(key, token),
    markSent: async (key, token) => (await load()).markSent(key, token),
    countRequest: async (step, now) => (await load()).countRequest(step, now),
    uncountRequest: async (key, now) => (await load()).uncountRequest(key, now),
    acquireSlot: async (lease, now) => (await load()).acquireSlot(lease, now),
    releaseSlot: async (key, slot, token) => (await load()).releaseSlot(key, slot, token),
    markOnce: async (key, expiresAt, now) => (await load()).markOnce(key, expiresAt, now),
  };
}
