/**
 * A DynamoDB Local table of its own for a test file (test/support/dynamodb-local.ts): the run's one
 * instance (started by dynamodb-local-setup.ts, the config's `globalSetup`, because this file
 * imports this module), a fresh table per call: the state table ({@link useStateTable}) or the
 * audit table ({@link useAuditTable}), whose environments merge.
 *
 *   const state = useStateTable();
 *   const audit = useAuditTable();
 *   it('...', async () => { const proxy = await startProxy({ env: { ...state.env(), ...audit.env() } }); ... });
 */
import { beforeAll, inject } from 'vitest';
import {
  auditTableEnv,
  createAuditTable,
  createStateTable,
  ENDPOINT_KEY,
  stateTableEnv,
} from './dynamodb-local.ts';

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

/** A fresh state table for the calling `describe` block (or file), created in `beforeAll`. */
export function useStateTable(prefix = 'state'): StateTable {
  return useTable('state', () => createStateTable(dynamoDbLocalEndpoint(), prefix), stateTableEnv);
}

/**
 * A fresh audit table for the calling `describe` block (or file), created in `beforeAll` as
 * `npm run state:local` creates its own (key schema, actor index and TTL from `AUDIT_TABLE`); its
 * `env()` sets `AUDIT_TABLE` and the endpoint, so a proxy keeps its audit records there.
 */
export function useAuditTable(prefix = 'audit'): StateTable {
  return useTable('audit', () => createAuditTable(dynamoDbLocalEndpoint(), prefix), auditTableEnv);
}

function useTable(
  what: string,
  create: () => Promise<string>,
  envOf: (endpoint: string, table: string) => Record<string, string>,
): StateTable {
  let table: string | undefined;
  beforeAll(async () => {
    table = await create();
  });
  const named = (): string => {
    if (table === undefined) throw new Error(`the ${what} table is used before beforeAll created it`);
    return table;
  };
  return {
    get endpoint() {
      return dynamoDbLocalEndpoint();
    },
    get table() {
      return named();
    },
    env: () => envOf(dynamoDbLocalEndpoint(), named()),
  };
}
