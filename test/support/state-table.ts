/**
 * A DynamoDB Local table of its own for a test file (test/support/dynamodb-local.ts): the run's one
 * instance (started by dynamodb-local-setup.ts, the config's `globalSetup`, because this file
 * imports this module), a fresh table per call.
 *
 *   const state = useStateTable();
 *   it('...', async () => { const proxy = await startProxy({ env: state.env() }); ... });
 */
import { beforeAll, inject } from 'vitest';
import { createStateTable, ENDPOINT_KEY, stateTableEnv } from './dynamodb-local.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    [ENDPOINT_KEY]: string | undefined;
  }
}

export interface StateTable {
  /** DynamoDB Local's endpoint. */
  readonly endpoint: string;
  /** The table's name (created in `beforeAll`). */
  readonly table: string;
  /** The environment that points a proxy at the table. */
  env(): Record<string, string>;
}

/** The endpoint of the run's DynamoDB Local. */
export function dynamoDbLocalEndpoint(): string {
  const endpoint = inject(ENDPOINT_KEY);
  if (endpoint === undefined) {
    throw new Error(
      'DynamoDB Local was not started for this run: test/support/dynamodb-local-setup.ts starts it for test files that import test/support/state-table.ts',
    );
  }
  return endpoint;
}

/** A fresh table for the calling `describe` block (or file), created in `beforeAll`. */
export function useStateTable(prefix = 'state'): StateTable {
  let table: string | undefined;
  beforeAll(async () => {
    table = await createStateTable(dynamoDbLocalEndpoint(), prefix);
  });
  const named = (): string => {
    if (table === undefined) throw new Error('the state table is used before beforeAll created it');
    return table;
  };
  return {
    get endpoint() {
      return dynamoDbLocalEndpoint();
    },
    get table() {
      return named();
    },
    env: () => stateTableEnv(dynamoDbLocalEndpoint(), named()),
  };
}
