/**
 * @module platform/brakes/brakes-store
 * Where the brakes are kept (docs/design.md, "Brakes"): one item of the state store, `brakes#set`,
 * holding the list as JSON under a version, so every write is conditional on the version it read.
 * Deployed, the stack's state table (brakes-store-dynamodb.ts, loaded on the first read); locally,
 * the same table on DynamoDB Local when the settings name one, else this process's memory (the
 * embedded store's place: one process, brakes lost on restart).
 */
import type { Config } from '../config.ts';
import { storeLocation } from '../state/store-location.ts';
import { type Brake, NO_BRAKES, type StoredBrakes } from './brakes.ts';
import type { BrakesStore } from './brakes-source.ts';

/** The brakes in this process's memory: the local server's, where no table is named. */
export class EmbeddedBrakesStore implements BrakesStore {
  #stored: StoredBrakes = NO_BRAKES;

  async read(): Promise<StoredBrakes> {
    return this.#stored;
  }

  async write(brakes: readonly Brake[], expected: number): Promise<boolean> {
    if (this.#stored.version !== expected) return false;
    this.#stored = Object.freeze({ version: expected + 1, brakes: Object.freeze([...brakes]) });
    return true;
  }
}

/**
 * The brakes store of this configuration: the table (its client loaded on the first read), this
 * process's memory, or `undefined` (deployed without a table: no brakes can be set).
 */
export function createBrakesStore(config: Config): BrakesStore | undefined {
  const location = storeLocation(config);
  if (location.kind === 'none') return undefined;
  if (location.kind === 'embedded') return new EmbeddedBrakesStore();
  let loaded: Promise<BrakesStore> | undefined;
  const load = (): Promise<BrakesStore> => {
    loaded ??= import('./brakes-store-dynamodb.ts')
      .then(({ DynamoDbBrakesStore }) =>
        DynamoDbBrakesStore.fromConfig(config, location.table, location.endpoint),
      )
      .catch((error: unknown) => {
        // Not kept: the next read tries again (one failed start is not a broken instance).
        loaded = undefined;
        throw error;
      });
    return loaded;
  };
  return {
    read: async () => (await load()).read(),
    write: async (brakes, expected) => (await load()).write(brakes, expected),
  };
}
