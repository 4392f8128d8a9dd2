/**
 * @module platform/state/store-location
 * Where the proxy's state is, from the configuration (docs/design.md, "The proxy's state: the
 * store"): deployed, the stack's table; locally, that table at an endpoint of your own (DynamoDB
 * Local) when both are set, else the process's own memory. The state store and the brakes read it.
 */
import type { Config } from '../config.ts';

/** Where the store is, from the configuration: a table, the embedded store, or none. */
export type StoreLocation =
  | { readonly kind: 'dynamodb'; readonly table: string; readonly endpoint: string | undefined }
  | { readonly kind: 'embedded' }
  | { readonly kind: 'none' };

/**
 * Deployed, the table the stack names (`STATE_TABLE`); locally, that table at
 * `AWS_ENDPOINT_URL_DYNAMODB` when both are set, else the embedded store.
 */
export function storeLocation(
  config: Pick<Config, 'runtime' | 'stateTable' | 'dynamodbEndpoint'>,
): StoreLocation {
  if (config.runtime === 'lambda') {
    return config.stateTable
      ? { kind: 'dynamodb', table: config.stateTable, endpoint: config.dynamodbEndpoint }
      : { kind: 'none' };
  }
  if (config.stateTable && config.dynamodbEndpoint) {
    return { kind: 'dynamodb', table: config.stateTable, endpoint: config.dynamodbEndpoint };
  }
  return { kind: 'embedded' };
}
